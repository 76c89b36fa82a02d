"""The leaderboard: one standing per setup, as a Rich table, JSON, or one HTML page.

A gated run stays on the board as a visible zero: it counts in the mean and is listed
with the kind of gate that fired and why. ``no_data`` and ``unverified`` runs are
counted separately, so "verified clean" and "never checked" never blur together.

The ranked mean gives no silent credit to runs nobody could verify: by default
(``unverified_policy="zero"``) a ``no_data`` or ``unverified`` run counts as 0.0,
whatever outcome its row holds. ``"include"`` counts them with their own outcome,
``"exclude"`` leaves them out of the mean. The board records the policy it was built
with, and the table and the page say it. An errored or interrupted run is already a
0.0 on its row (no credit for work not done); among equal means, the setup with fewer
such runs ranks first. What counts as 0 under each policy is decided with every other
zero of a run, in ``scoring/zeroes.py`` (``ranked_value``).
"""

from __future__ import annotations

import html
import importlib.resources
import math
import statistics
from collections import Counter
from collections.abc import Iterable, Sequence
from string import Template

from pydantic import BaseModel, ConfigDict, Field, computed_field
from pydantic.alias_generators import to_camel
from rich.console import Group
from rich.table import Table
from rich.text import Text

from benchguard.record import scores as keys
from benchguard.records import NO_CREDIT_STATUSES
from benchguard.results.rows import INTEGRITY_STATUSES, CatastrophicDetail, ResultRow
from benchguard.scoring.zeroes import (
    DEFAULT_REVIEW_POLICY,
    DEFAULT_UNVERIFIED_POLICY,
    RANK_POLICIES,
    RankPolicy,
    ranked_value,
)

# 2 adds provenance (run ids, latest row time, row schema and scoring versions).
# 3 adds the standard error of each mean and the per-task view.
# 4 adds unverifiedPolicy (no_data/unverified runs count as zero by default) and each
# standing's noCreditRuns.
# 5 adds provenance.batchRunIds (the batches an aggregate merged, named in the header).
LEADERBOARD_SCHEMA_VERSION = 5
# A historical row can say catastrophic: true without naming the kind.
UNSPECIFIED_KIND = "unspecified"

# The policies and the zero they give are ``scoring.zeroes``'s (every zero of a run).
UnverifiedPolicy = RankPolicy
UNVERIFIED_POLICIES: tuple[UnverifiedPolicy, ...] = RANK_POLICIES
_POLICY_WORDS: dict[UnverifiedPolicy, str] = {
    "zero": "no_data and unverified runs count as 0",
    "include": "no_data and unverified runs count with their own outcome",
    "exclude": "no_data and unverified runs are left out of the mean",
}


# How ``review`` runs (only weak findings: not gated) count; the same three choices.
# The default counts them with their own outcome and marks them on every view.
ReviewPolicy = UnverifiedPolicy
_REVIEW_WORDS: dict[ReviewPolicy, str] = {
    "zero": "review runs count as 0",
    "include": "review runs count with their own outcome (marked)",
    "exclude": "review runs are left out of the mean",
}


def policy_description(policy: UnverifiedPolicy, review: ReviewPolicy | None = None) -> str:
    """How the ranked mean treats runs nobody could verify (and, when given, runs sent
    to review), in words for a page."""
    words = _POLICY_WORDS[policy]
    return words if review is None else f"{words}; {_REVIEW_WORDS[review]}"


def ranked_outcomes(
    rows: Iterable[ResultRow],
    policy: UnverifiedPolicy,
    review_policy: ReviewPolicy = DEFAULT_REVIEW_POLICY,
) -> list[float]:
    """The outcomes a mean is taken over, under ``policy`` and ``review_policy`` (see
    the module doc; each row's value is ``scoring.zeroes.ranked_value``). A verified row
    without an outcome (no composite) is left out."""
    values: list[float] = []
    for row in rows:
        value = ranked_value(row.integrity_status, row.outcome_score, policy, review_policy)
        if value is not None:
            values.append(value)
    return values


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
    # Standard error of the mean over the scored runs (sample stdev / sqrt(n)); None
    # with fewer than two scored runs, where no spread can be estimated.
    stderr_outcome: float | None = None
    gated_runs: int
    # Errored or interrupted runs: 0.0 on their rows; ties rank fewer of them first.
    no_credit_runs: int = 0
    gated_by_kind: dict[str, int]
    integrity: dict[str, int]
    dismissed_findings: int
    sandboxed_runs: int
    # Runs the harness recorded as not confined by Landlock (--unconfined).
    unconfined_runs: int = 0
    # Runs given the host's network by the operator's --allow-host-network.
    # Not written when none did (boards of foreign rows read as before).
    host_network_runs: int = Field(default=0, ge=0, exclude_if=lambda value: not value)
    gated: tuple[GatedRun, ...]
    # Runs sent to review (only weak findings), with their findings; never gated.
    review: tuple[GatedRun, ...] = ()

    # Published beside ``integrity`` (the JSON's noData/unverified), read from it: one
    # source of truth for the counts.
    @computed_field  # type: ignore[prop-decorator]
    @property
    def no_data(self) -> int:
        return self.integrity.get("no_data", 0)

    @computed_field  # type: ignore[prop-decorator]
    @property
    def unverified(self) -> int:
        return self.integrity.get("unverified", 0)


class TaskStanding(_Camel):
    """One setup on one task: the per-task view of the board."""

    task_folder: str
    setup_id: str
    runs: int
    scored_runs: int
    mean_outcome: float | None
    stderr_outcome: float | None
    gated_runs: int


class Provenance(_Camel):
    """Where the board's rows came from, read from the rows themselves (never the clock,
    so the same rows always render the same page)."""

    run_ids: tuple[str, ...]
    # The batches an aggregate merged (its rows' ``batchRunId``); empty for rows that
    # were never aggregated.
    batch_run_ids: tuple[str, ...] = ()
    generated_at: str
    row_schema_versions: tuple[int, ...]
    scoring_versions: tuple[str, ...]


class Leaderboard(_Camel):
    schema_version: int = LEADERBOARD_SCHEMA_VERSION
    # How the ranked means treated no_data and unverified runs.
    unverified_policy: UnverifiedPolicy = DEFAULT_UNVERIFIED_POLICY
    # How the ranked means treated review runs.
    review_policy: ReviewPolicy = DEFAULT_REVIEW_POLICY
    provenance: Provenance
    standings: tuple[SetupStanding, ...]
    # Every (task, setup) pair, by task then by mean outcome as the standings rank.
    tasks: tuple[TaskStanding, ...] = ()
    rows: tuple[ResultRow, ...]

    def to_json(self) -> dict[str, object]:
        return self.model_dump(mode="json", by_alias=True)


def row_kinds(row: ResultRow) -> tuple[str, ...]:
    """The kinds to show for a gated row; the bool is authoritative on old rows."""
    if row.catastrophic_kinds:
        return row.catastrophic_kinds
    return (UNSPECIFIED_KIND,) if row.catastrophic else ()


def build_leaderboard(
    rows: Iterable[ResultRow],
    *,
    unverified_policy: UnverifiedPolicy = DEFAULT_UNVERIFIED_POLICY,
    review_policy: ReviewPolicy = DEFAULT_REVIEW_POLICY,
) -> Leaderboard:
    """Rank setups by mean outcome under ``unverified_policy`` and ``review_policy``
    (highest first; unscored last; ties: fewer errored/interrupted runs first, then by
    setup id)."""
    for what, value in (("unverified", unverified_policy), ("review", review_policy)):
        if value not in UNVERIFIED_POLICIES:
            raise ValueError(
                f"{what} policy {value!r}: allowed values are " + ", ".join(UNVERIFIED_POLICIES)
            )
    policies = (unverified_policy, review_policy)
    all_rows = list(rows)
    by_setup: dict[str, list[ResultRow]] = {}
    for row in all_rows:
        by_setup.setdefault(row.setup_id, []).append(row)
    unranked = [_standing(setup_id, group, *policies) for setup_id, group in by_setup.items()]
    ordered = sorted(
        unranked,
        key=lambda s: (
            s.mean_outcome is None,
            -(s.mean_outcome or 0.0),
            s.no_credit_runs,
            s.setup_id,
        ),
    )
    standings = tuple(s.model_copy(update={"rank": i + 1}) for i, s in enumerate(ordered))
    ordered_rows = sorted(all_rows, key=lambda r: (r.setup_id, r.task_folder, r.iteration))
    return Leaderboard(
        unverified_policy=unverified_policy,
        review_policy=review_policy,
        provenance=_provenance(all_rows),
        standings=standings,
        tasks=_task_standings(all_rows, *policies),
        rows=tuple(ordered_rows),
    )


def standard_error(values: Sequence[float]) -> float | None:
    """Sample standard deviation over sqrt(n); None for fewer than two values."""
    if len(values) < 2:
        return None
    return statistics.stdev(values) / math.sqrt(len(values))


def _task_standings(
    rows: Sequence[ResultRow], policy: UnverifiedPolicy, review_policy: ReviewPolicy
) -> tuple[TaskStanding, ...]:
    cells: dict[tuple[str, str], list[ResultRow]] = {}
    for row in rows:
        cells.setdefault((row.task_folder, row.setup_id), []).append(row)
    standings = []
    for (task, setup_id), group in cells.items():
        scored = ranked_outcomes(group, policy, review_policy)
        standings.append(
            TaskStanding(
                task_folder=task,
                setup_id=setup_id,
                runs=len(group),
                scored_runs=len(scored),
                mean_outcome=statistics.fmean(scored) if scored else None,
                stderr_outcome=standard_error(scored),
                gated_runs=sum(r.catastrophic for r in group),
            )
        )
    return tuple(
        sorted(
            standings,
            key=lambda t: (
                t.task_folder,
                t.mean_outcome is None,
                -(t.mean_outcome or 0.0),
                t.setup_id,
            ),
        )
    )


def _provenance(rows: Sequence[ResultRow]) -> Provenance:
    return Provenance(
        run_ids=tuple(sorted({r.run_id for r in rows})),
        batch_run_ids=tuple(sorted({r.batch_run_id for r in rows if r.batch_run_id})),
        # Row times are ISO-8601 UTC stamps, so the greatest string is the latest time.
        generated_at=max((r.t for r in rows), default=""),
        row_schema_versions=tuple(sorted({r.schema_version for r in rows})),
        scoring_versions=tuple(sorted({r.scoring_version for r in rows if r.scoring_version})),
    )


def _standing(
    setup_id: str, rows: Sequence[ResultRow], policy: UnverifiedPolicy, review_policy: ReviewPolicy
) -> SetupStanding:
    scored = ranked_outcomes(rows, policy, review_policy)
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
        stderr_outcome=standard_error(scored),
        gated_runs=len(gated_rows),
        no_credit_runs=sum(r.status in NO_CREDIT_STATUSES for r in rows),
        gated_by_kind={k: kind_counts[k] for k in _kind_order(kind_counts)},
        integrity={status: integrity[status] for status in INTEGRITY_STATUSES},
        dismissed_findings=sum(r.dismissed_findings for r in rows),
        sandboxed_runs=sum(r.sandboxed for r in rows),
        unconfined_runs=sum(r.confined is False for r in rows),
        host_network_runs=sum(r.network == "host" for r in rows),
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
        review=tuple(
            GatedRun(
                run_id=r.run_id,
                task_folder=r.task_folder,
                iteration=r.iteration,
                outcome_score=r.outcome_score,
                kinds=("review",),
                details={"review": r.review_details},
            )
            for r in sorted(rows, key=lambda r: (r.task_folder, r.iteration))
            if r.integrity_status == "review"
        ),
    )


def _kind_order(kinds: Iterable[str]) -> list[str]:
    known = [k for k in keys.CATASTROPHIC_SCORE_KEYS if k in kinds]
    return known + sorted(k for k in kinds if k not in known)


def _fmt(value: float | None) -> str:
    return "—" if value is None else f"{value:.3f}"


def _fmt_mean(mean: float | None, stderr: float | None) -> str:
    """``mean ± se``; the mean alone when there is no spread to estimate."""
    if mean is None or stderr is None:
        return _fmt(mean)
    return f"{mean:.3f} ± {stderr:.3f}"


def render_task_table(board: Leaderboard) -> Table:
    """The per-task view: each task's setups, best mean first, with standard errors."""
    table = Table(title="Per task", title_justify="left", header_style="bold")
    table.add_column("task", overflow="fold")
    table.add_column("setup", overflow="fold")
    for name in ("runs", "mean outcome ± se", "gated"):
        table.add_column(name, justify="right")
    for t in board.tasks:
        table.add_row(
            Text(t.task_folder),
            Text(t.setup_id),
            str(t.runs),
            _fmt_mean(t.mean_outcome, t.stderr_outcome),
            Text(str(t.gated_runs), style="bold red" if t.gated_runs else "green"),
        )
    return table


def render_table(board: Leaderboard) -> Group:
    """Rich renderables: the standings, then every gated run with its kind and reason.

    Identifiers fold rather than truncate, so a narrow terminal still shows whole setup
    ids and gate kinds. Every value from a rows file is a ``Text`` cell, never a plain
    string: a setup id or reason like ``x[/b]`` must print as itself, not as Rich markup.
    """
    standings = Table(
        title="Leaderboard",
        title_justify="left",
        header_style="bold",
        caption=(
            f"ranked mean: {policy_description(board.unverified_policy, board.review_policy)}"
        ),
        caption_justify="left",
    )
    standings.add_column("#", justify="right")
    standings.add_column("setup", overflow="fold")
    for name in ("tasks", "runs", "mean outcome ± se"):
        standings.add_column(name, justify="right")
    standings.add_column("gated (by kind)", overflow="fold")
    for name in ("review", "no_data", "unverified", "dismissed"):
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
            _fmt_mean(s.mean_outcome, s.stderr_outcome),
            gated,
            Text(str(len(s.review)), style="yellow" if s.review else ""),
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
    review_runs = [(s, g) for s in board.standings for g in s.review]
    if review_runs:
        table = Table(
            title="Runs sent to review (weak evidence only; not gated)",
            title_justify="left",
            header_style="bold",
        )
        table.add_column("setup", overflow="fold")
        table.add_column("task#iter", overflow="fold")
        table.add_column("outcome", justify="right")
        table.add_column("why", ratio=1)
        for s, g in review_runs:
            table.add_row(
                Text(s.setup_id),
                Text(f"{g.task_folder}#{g.iteration}"),
                Text(_fmt(g.outcome_score), style="yellow"),
                Text("\n".join(_detail_text(d) for ds in g.details.values() for d in ds) or "—"),
            )
        parts.append(table)
    return Group(*parts)


def _detail_text(detail: CatastrophicDetail) -> str:
    # A detector verdict already opens with its material; the rule id adds nothing.
    return f"• {detail.reason}" if detail.reason else f"• {detail.name}"


# ---- HTML -----------------------------------------------------------------------------

# Reasons shown per gated run before the rest fold behind a "+N more" toggle.
REASONS_SHOWN = 2
# Run ids listed in the page header before the rest are counted.
RUN_IDS_SHOWN = 3


def render_html(board: Leaderboard, *, title: str = "benchguard leaderboard") -> str:
    """One self-contained page: the template with its CSS and script inlined, no
    external assets. Every value from the rows is HTML-escaped; the script never
    parses markup, so a reason or setup id holding ``<script>`` shows as text."""
    total_gated = sum(s.gated_runs for s in board.standings)
    return _template("leaderboard.html").substitute(
        title=_e(title),
        css=_asset("leaderboard.css"),
        script=_asset("leaderboard.js"),
        summary=_e(
            f"{len(board.standings)} setup(s) · {len(board.rows)} run(s) · "
            f"{total_gated} gated to zero"
        ),
        provenance=_provenance_html(board),
        standings_rows="\n".join(_standing_tr(s) for s in board.standings),
        gated_count=str(total_gated),
        setup_options="\n".join(
            f'<option value="{_e(s.setup_id)}">{_e(s.setup_id)}</option>'
            for s in sorted(board.standings, key=lambda s: s.setup_id)
        ),
        run_rows="\n".join(_run_tr(r) for r in board.rows),
        task_rows="\n".join(_task_tr(t) for t in board.tasks),
    )


# What the agent process did, in words that never say "success" for a failed task or
# a gated run (the stored status values are unchanged).
AGENT_WORDS = {
    "success": "agent finished",
    "error": "agent errored",
    "timeout": "agent timed out",
    "interrupted": "run interrupted",
}


def _ident(text: str) -> str:
    """``text`` escaped, with a line-break opportunity after each separator, so a long
    setup id or task folder wraps between its parts, never inside a word."""
    escaped = _e(text)
    for separator in ("-", "_", "/", "."):
        escaped = escaped.replace(separator, separator + "<wbr>")
    return escaped


def _task_tr(t: TaskStanding) -> str:
    gated = (
        f'<span class="gated-count">{t.gated_runs}</span>'
        if t.gated_runs
        else '<span class="ok">0</span>'
    )
    return (
        f'<tr data-task="{_e(t.task_folder)}" data-setup="{_e(t.setup_id)}">'
        f'<td class="ident">{_ident(t.task_folder)}</td>'
        f'<td class="ident">{_ident(t.setup_id)}</td>{_num_td(t.runs)}'
        f'<td class="num">{_e(_fmt_mean(t.mean_outcome, t.stderr_outcome))}</td>'
        f"<td>{gated}</td></tr>"
    )


def _asset(name: str) -> str:
    return importlib.resources.files("benchguard.results").joinpath(name).read_text("utf-8")


def _template(name: str) -> Template:
    return Template(_asset(name))


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _listed(ids: Sequence[str]) -> str:
    """The first ids, then how many more."""
    shown = ", ".join(ids[:RUN_IDS_SHOWN])
    return shown + (f" (+{len(ids) - RUN_IDS_SHOWN} more)" if len(ids) > RUN_IDS_SHOWN else "")


def _provenance_html(board: Leaderboard) -> str:
    p = board.provenance
    items: tuple[tuple[str, str], ...] = (
        ("run id" if len(p.run_ids) == 1 else "run ids", _listed(p.run_ids) or "—"),
    )
    if p.batch_run_ids:
        # An aggregate: its own id above, and every batch it merged named here.
        items += (("aggregate of", f"{len(p.batch_run_ids)} run(s): {_listed(p.batch_run_ids)}"),)
    items += (
        ("generated", p.generated_at or "—"),
        ("row schema", ", ".join(str(v) for v in p.row_schema_versions) or "—"),
        ("scoring", ", ".join(p.scoring_versions) or "—"),
        ("ranked mean", policy_description(board.unverified_policy)),
        ("leaderboard schema", str(board.schema_version)),
    )
    return "\n".join(
        f'    <div><dt>{_e(label)}</dt><dd data-field="{_e(label)}">{_e(value)}</dd></div>'
        for label, value in items
    )


def _num_td(value: float | int | None, *, cls: str = "num") -> str:
    sort = "" if value is None else f"{value}"
    shown = str(value) if isinstance(value, int) else _fmt(value)
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
        f'<td class="gated-kinds" data-sort="{s.gated_runs}">'
        f'<strong class="gated-count">{s.gated_runs}</strong>'
        f"{kinds}</td>"
        if s.gated_runs
        else '<td data-sort="0"><span class="ok">0</span></td>'
    )
    return (
        f'<tr data-setup="{_e(s.setup_id)}">'
        f'<td class="num" data-sort="{s.rank}">{s.rank}</td>'
        f'<td class="ident" data-sort="{_e(s.setup_id)}"><div class="setup">{_ident(s.setup_id)}</div>'
        f'<div class="sub">{_e(s.model)} · {_e(s.harness)}</div></td>'
        f"{_num_td(s.tasks)}{_num_td(s.runs)}"
        f'<td class="num" data-sort="{"" if mean is None else mean}">'
        f'<span class="score">{_e(_fmt_mean(mean, s.stderr_outcome))}</span>{bar}</td>'
        f"{gated_cell}{_integrity_split_td(s)}{_num_td(s.dismissed_findings)}</tr>"
    )


def _integrity_split_td(s: SetupStanding) -> str:
    """Verified clean versus not verified (no_data, unverified), with a stacked bar.

    Sorts by the verified-clean fraction, so "most trustworthy evidence" sorts first
    when descending."""
    clean = s.integrity.get("clean", 0)
    flagged = s.integrity.get("flagged", 0)
    not_verified = s.no_data + s.unverified
    share = clean / s.runs if s.runs else 0.0
    segments = "".join(
        f'<span class="{status}" style="width:{n / s.runs * 100:.1f}%"></span>'
        for status, n in s.integrity.items()
        if n and s.runs
    )
    chips = "".join(
        f'<span class="integrity {status}">{_e(status)} {n}</span>'
        for status, n in s.integrity.items()
        if n
    )
    return (
        f'<td class="split-cell" data-sort="{share:.6f}">'
        f'<span class="score">{clean}</span>/{s.runs} verified clean · '
        f'<span class="score">{flagged}</span> flagged · '
        f'<span class="score">{not_verified}</span> not verified'
        f'<span class="split" title="clean / flagged / no_data / unverified">{segments}</span>'
        f'<span class="counts">{chips}</span></td>'
    )


def _reason_li(detail: CatastrophicDetail) -> str:
    reason = f": {_e(detail.reason)}" if detail.reason else ""
    return f"<li><b>{_e(detail.name)}</b>{reason}</li>"


def _gate_td(row: ResultRow, kinds: tuple[str, ...]) -> str:
    if not kinds and not row.review_details:
        return '<td class="gate" data-sort=""><span class="ok">none</span></td>'
    if not kinds:
        # A review run: not gated, its weak findings listed under a review badge.
        kinds = ("review",)
        details = list(row.review_details)
    else:
        details = [d for ds in row.catastrophic_details.values() for d in ds]
    badges = "".join(f'<span class="kind">{_e(k)}</span>' for k in kinds)
    shown = "".join(_reason_li(d) for d in details[:REASONS_SHOWN])
    reasons = f'<ul class="reasons">{shown}</ul>' if shown else ""
    hidden = details[REASONS_SHOWN:]
    if hidden:
        rest = "".join(_reason_li(d) for d in hidden)
        reasons += (
            f'<details class="more"><summary>+{len(hidden)} more</summary>'
            f'<ul class="reasons">{rest}</ul></details>'
        )
    return f'<td class="gate" data-sort="{_e(" ".join(kinds))}">{badges}{reasons}</td>'


def _status_words(row: ResultRow, gated: bool) -> str:
    """The run column in words: gated, or what the agent did and what the task said."""
    agent = AGENT_WORDS.get(row.status, row.status or "—")
    if gated:
        return f"gated; {agent}"
    if row.outcome_score is None:
        return agent
    return f"{agent}; task {'passed' if row.outcome_score >= 1.0 else 'failed'}"


def _run_tr(row: ResultRow) -> str:
    kinds = row_kinds(row)
    gated = bool(kinds)
    outcome = row.outcome_score
    if gated:
        # An old gated row may lack its stored score: it still reads as a zero. The tag
        # says "gated" in words for readers who cannot tell the red apart.
        outcome_td = (
            f'<td class="num outcome gated-zero" data-sort="{0.0 if outcome is None else outcome}">'
            f'{_e(_fmt(0.0 if outcome is None else outcome))}<span class="tag">gated</span></td>'
        )
    else:
        outcome_td = _num_td(outcome, cls="num outcome")
    dismissed = (
        f'<div class="dismissed" title="findings dismissed by a reviewer">'
        f"{row.dismissed_findings} dismissed</div>"
        if row.dismissed_findings
        else ""
    )
    task_name = (
        f'<div class="sub">{_e(row.task_name)}</div>'
        if row.task_name and row.task_name != row.task_folder
        else ""
    )
    sandboxed = '<div class="sub">sandboxed</div>' if row.sandboxed else ""
    if row.confined is False:
        sandboxed += '<div class="sub">unconfined</div>'
    if row.home_mode == "persistent":
        sandboxed += '<div class="sub">persistent home</div>'
    if row.network == "host":
        sandboxed += '<div class="sub">host network</div>'
    return (
        f'<tr class="{"gated" if gated else ""}" data-setup="{_e(row.setup_id)}" '
        f'data-task="{_e(row.task_folder)}" data-iteration="{row.iteration}">'
        f'<td class="ident" data-sort="{_e(row.setup_id)}">{_ident(row.setup_id)}</td>'
        f'<td class="ident" data-sort="{_e(row.task_folder)}">{_ident(row.task_folder)}{task_name}</td>'
        f"{_num_td(row.iteration)}"
        f'<td data-sort="{_e(row.status)}">{_e(_status_words(row, gated))}{sandboxed}</td>'
        f"{outcome_td}"
        f"{_num_td(row.correctness_score)}{_num_td(row.recoverable_safety_score)}"
        f'<td data-sort="{_e(row.integrity_status)}"><span class="integrity '
        f'{_e(row.integrity_status)}">{_e(row.integrity_status)}</span>{dismissed}</td>'
        f"{_gate_td(row, kinds)}</tr>"
    )
