"""The leaderboard: one standing per setup, as a Rich table, JSON, or one HTML page.

A gated run stays on the board as a visible zero: it counts in the mean and is listed
with the kind of gate that fired and why. ``no_data`` and ``unverified`` runs are
counted separately, so "verified clean" and "never checked" never blur together.
"""

from __future__ import annotations

import html
import importlib.resources
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from string import Template

from pydantic import BaseModel, ConfigDict
from pydantic.alias_generators import to_camel
from rich.console import Group
from rich.table import Table
from rich.text import Text

from benchguard.results.rows import INTEGRITY_STATUSES, CatastrophicDetail, ResultRow
from benchguard.scoring import keys

LEADERBOARD_SCHEMA_VERSION = 1
# A historical row can say catastrophic: true without naming the kind.
UNSPECIFIED_KIND = "unspecified"


class _Camel(BaseModel):
    model_config = ConfigDict(frozen=True, alias_generator=to_camel, populate_by_name=True)


class GatedRun(_Camel):
    run_id: str
    task_folder: str
    iteration: int
    outcome_score: float | None
    kinds: tuple[str, ...]
    details: dict[str, tuple[CatastrophicDetail, ...]]


class SetupStanding(_Camel):
    rank: int
    setup_id: str
    model: str
    harness: str
    tasks: int
    runs: int
    scored_runs: int
    mean_outcome: float | None
    gated_runs: int
    gated_by_kind: dict[str, int]
    integrity: dict[str, int]
    no_data: int
    unverified: int
    dismissed_findings: int
    sandboxed_runs: int
    gated: tuple[GatedRun, ...]


class Leaderboard(_Camel):
    schema_version: int = LEADERBOARD_SCHEMA_VERSION
    standings: tuple[SetupStanding, ...]
    rows: tuple[ResultRow, ...]

    def to_json(self) -> dict[str, object]:
        return self.model_dump(mode="json", by_alias=True)


def row_kinds(row: ResultRow) -> tuple[str, ...]:
    """The kinds to show for a gated row; the bool is authoritative on old rows."""
    if row.catastrophic_kinds:
        return row.catastrophic_kinds
    return (UNSPECIFIED_KIND,) if row.catastrophic else ()


def build_leaderboard(rows: Iterable[ResultRow]) -> Leaderboard:
    """Rank setups by mean outcome (highest first; unscored last; ties by setup id)."""
    all_rows = list(rows)
    by_setup: dict[str, list[ResultRow]] = {}
    for row in all_rows:
        by_setup.setdefault(row.setup_id, []).append(row)
    unranked = [_standing(setup_id, group) for setup_id, group in by_setup.items()]
    ordered = sorted(
        unranked,
        key=lambda s: (s.mean_outcome is None, -(s.mean_outcome or 0.0), s.setup_id),
    )
    standings = tuple(s.model_copy(update={"rank": i + 1}) for i, s in enumerate(ordered))
    ordered_rows = sorted(all_rows, key=lambda r: (r.setup_id, r.task_folder, r.iteration))
    return Leaderboard(standings=standings, rows=tuple(ordered_rows))


def _standing(setup_id: str, rows: Sequence[ResultRow]) -> SetupStanding:
    scored = [r.outcome_score for r in rows if r.outcome_score is not None]
    gated_rows = [r for r in rows if r.catastrophic]
    kind_counts: Counter[str] = Counter(k for r in gated_rows for k in row_kinds(r))
    integrity = Counter(r.integrity_status for r in rows)
    return SetupStanding(
        rank=0,
        setup_id=setup_id,
        model=rows[0].model,
        harness=rows[0].harness,
        tasks=len({r.task_folder for r in rows}),
        runs=len(rows),
        scored_runs=len(scored),
        mean_outcome=statistics.fmean(scored) if scored else None,
        gated_runs=len(gated_rows),
        gated_by_kind={k: kind_counts[k] for k in _kind_order(kind_counts)},
        integrity={status: integrity[status] for status in INTEGRITY_STATUSES},
        no_data=integrity["no_data"],
        unverified=integrity["unverified"],
        dismissed_findings=sum(r.dismissed_findings for r in rows),
        sandboxed_runs=sum(r.sandboxed for r in rows),
        gated=tuple(
            GatedRun(
                run_id=r.run_id,
                task_folder=r.task_folder,
                iteration=r.iteration,
                outcome_score=r.outcome_score,
                kinds=row_kinds(r),
                details=r.catastrophic_details,
            )
            for r in sorted(gated_rows, key=lambda r: (r.task_folder, r.iteration))
        ),
    )


def _kind_order(kinds: Iterable[str]) -> list[str]:
    known = [k for k in keys.CATASTROPHIC_SCORE_KEYS if k in kinds]
    return known + sorted(k for k in kinds if k not in known)


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def render_table(board: Leaderboard) -> Group:
    """Rich renderables: the standings, then every gated run with its kind and reason.

    Identifiers fold rather than truncate, so a narrow terminal still shows whole setup
    ids and gate kinds. Every value from a rows file is a ``Text`` cell, never a plain
    string: a setup id or reason like ``x[/b]`` must print as itself, not as Rich markup.
    """
    standings = Table(title="Leaderboard", title_justify="left", header_style="bold")
    standings.add_column("#", justify="right")
    standings.add_column("setup", overflow="fold")
    for name in ("tasks", "runs", "mean outcome"):
        standings.add_column(name, justify="right")
    standings.add_column("gated (by kind)", overflow="fold")
    for name in ("no_data", "unverified", "dismissed"):
        standings.add_column(name, justify="right", overflow="fold")
    for s in board.standings:
        gated: Text | str = (
            Text(
                "\n".join(f"{kind} ×{n}" for kind, n in s.gated_by_kind.items()),
                style="bold red",
            )
            if s.gated_runs
            else Text("0", style="green")
        )
        standings.add_row(
            str(s.rank),
            Text(s.setup_id),
            str(s.tasks),
            str(s.runs),
            _fmt(s.mean_outcome),
            gated,
            str(s.no_data),
            str(s.unverified),
            str(s.dismissed_findings),
        )
    parts: list[Table] = [standings]
    gated_runs = [(s, g) for s in board.standings for g in s.gated]
    if gated_runs:
        runs = Table(title="Gated runs (visible zeros)", title_justify="left", header_style="bold")
        runs.add_column("setup", overflow="fold")
        runs.add_column("task#iter", overflow="fold")
        runs.add_column("outcome", justify="right")
        runs.add_column("gate", overflow="fold")
        runs.add_column("why", ratio=1)
        for s, g in gated_runs:
            runs.add_row(
                Text(s.setup_id),
                Text(f"{g.task_folder}#{g.iteration}"),
                Text(
                    _fmt(g.outcome_score) if g.outcome_score is not None else "0", style="bold red"
                ),
                Text("\n".join(g.kinds)),
                Text("\n".join(_detail_text(d) for ds in g.details.values() for d in ds) or "—"),
            )
        parts.append(runs)
    return Group(*parts)


def _detail_text(detail: CatastrophicDetail) -> str:
    # A detector verdict already opens with its material; the rule id adds nothing.
    return f"• {detail.reason}" if detail.reason else f"• {detail.name}"


# ---- HTML -----------------------------------------------------------------------------


def render_html(board: Leaderboard, *, title: str = "benchguard leaderboard") -> str:
    """One self-contained page (inline CSS and script, no external assets)."""
    template = Template(
        importlib.resources.files("benchguard.results")
        .joinpath("leaderboard.html")
        .read_text(encoding="utf-8")
    )
    total_gated = sum(s.gated_runs for s in board.standings)
    return template.substitute(
        title=_e(title),
        summary=_e(
            f"{len(board.standings)} setup(s) · {len(board.rows)} run(s) · "
            f"{total_gated} gated to zero"
        ),
        standings_rows="\n".join(_standing_tr(s) for s in board.standings),
        run_rows="\n".join(_run_tr(r) for r in board.rows),
    )


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _num_td(value: float | int | None, *, text: str | None = None, cls: str = "num") -> str:
    sort = "" if value is None else f"{value}"
    shown = text if text is not None else (_fmt(value) if isinstance(value, float) else str(value))
    if value is None:
        shown = "—"
    return f'<td class="{cls}" data-sort="{_e(sort)}">{_e(shown)}</td>'


def _standing_tr(s: SetupStanding) -> str:
    mean = s.mean_outcome
    bar = (
        f'<span class="bar"><span style="width:{mean * 100:.1f}%"></span></span>'
        if mean is not None
        else ""
    )
    kinds = "".join(
        f'<span class="kind">{_e(kind)} ×{n}</span>' for kind, n in s.gated_by_kind.items()
    )
    gated_cell = (
        f'<td data-sort="{s.gated_runs}"><strong class="gated-count">{s.gated_runs}</strong>'
        f"{kinds}</td>"
        if s.gated_runs
        else '<td data-sort="0"><span class="ok">0</span></td>'
    )
    return (
        f'<tr data-setup="{_e(s.setup_id)}">'
        f'<td class="num" data-sort="{s.rank}">{s.rank}</td>'
        f'<td data-sort="{_e(s.setup_id)}"><div class="setup">{_e(s.setup_id)}</div>'
        f'<div class="sub">{_e(s.model)} · {_e(s.harness)}</div></td>'
        f"{_num_td(s.tasks)}{_num_td(s.runs)}"
        f'<td class="num" data-sort="{"" if mean is None else mean}">'
        f'<span class="score">{_e(_fmt(mean))}</span>{bar}</td>'
        f"{gated_cell}{_num_td(s.no_data)}{_num_td(s.unverified)}"
        f"{_num_td(s.dismissed_findings)}</tr>"
    )


def _run_tr(row: ResultRow) -> str:
    kinds = row_kinds(row)
    gated = bool(kinds)
    outcome_cls = "num outcome gated-zero" if gated else "num outcome"
    outcome = row.outcome_score
    outcome_text = _fmt(outcome) if not (gated and outcome is None) else "0 (gated)"
    if gated:
        badges = "".join(f'<span class="kind">{_e(k)}</span>' for k in kinds)
        reasons = "".join(
            f"<li><b>{_e(d.name)}</b>{': ' + _e(d.reason) if d.reason else ''}</li>"
            for ds in row.catastrophic_details.values()
            for d in ds
        )
        gate_cell = (
            f'<td class="gate" data-sort="{_e(" ".join(kinds))}">{badges}'
            f"{f'<ul class=reasons>{reasons}</ul>' if reasons else ''}</td>"
        )
    else:
        gate_cell = '<td class="gate" data-sort=""><span class="ok">none</span></td>'
    dismissed = (
        f' <span class="dismissed" title="findings dismissed by a reviewer">'
        f"{row.dismissed_findings} dismissed</span>"
        if row.dismissed_findings
        else ""
    )
    return (
        f'<tr class="{"gated" if gated else ""}" data-task="{_e(row.task_folder)}" '
        f'data-iteration="{row.iteration}">'
        f'<td data-sort="{_e(row.setup_id)}">{_e(row.setup_id)}</td>'
        f'<td data-sort="{_e(row.task_folder)}">{_e(row.task_folder)}</td>'
        f"{_num_td(row.iteration)}"
        f'<td data-sort="{_e(row.status)}">{_e(row.status or "—")}</td>'
        f'<td class="{outcome_cls}" data-sort="{"" if outcome is None else outcome}">'
        f"{_e(outcome_text)}</td>"
        f"{_num_td(row.correctness_score)}{_num_td(row.recoverable_safety_score)}"
        f'<td data-sort="{_e(row.integrity_status)}"><span class="integrity '
        f'{_e(row.integrity_status)}">{_e(row.integrity_status)}</span>{dismissed}</td>'
        f"{gate_cell}</tr>"
    )
