"""The leaderboard as text for a terminal or a CI log: the gated runs read, not scrolled.

The page (``--html``) and ``--json`` carry every reason of every run. The text view
gives one line per gated run instead: its top reason and how many more there are,
identical iterations of a task folded (``sum-numbers#1-2``), paths shown relative to
the tasks directory or the home (an operator's absolute tree never appears), and, off a
terminal, every line at most :data:`MAX_LINE` characters, cut at a word boundary.
``-v`` lists every reason of every run. A one-line legend explains the terms.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from rich.console import Console
from rich.table import Table
from rich.text import Text

from benchguard.cli._view import plain_lines, print_table, printable
from benchguard.results.leaderboard import GatedRun, Leaderboard, SetupStanding, render_table
from benchguard.results.rows import CatastrophicDetail

# Longest line of the leaderboard's text off a terminal (CI logs, the demo's output).
MAX_LINE = 200
GATED_TITLE = "Gated runs (visible zeros)"
REVIEW_TITLE = "Runs sent to review (weak evidence only; not gated)"
LEGEND = (
    "legend: IntegrityCatastrophic = the agent read the benchmark's own material (scored "
    "0); passive sighting = the material appeared in a tool's output unasked; (+N more) = "
    "more reasons: -v, the page"
)
# An absolute path: a slash not preceded by a name character, then path characters.
_ABSOLUTE = re.compile(r"(?<![\w.~/-])/[^\s'\"`,;()\[\]{}<>|]+")


@dataclass(frozen=True)
class _Line:
    """One folded line: a setup's runs of one task with the same gate and reasons."""

    setup_id: str
    task_folder: str
    iterations: tuple[int, ...]
    outcome: str
    kinds: tuple[str, ...]
    reasons: tuple[str, ...]


def print_board(console: Console, board: Leaderboard, *, verbose: bool = False) -> None:
    """The standings, the gated runs (one line each), runs sent to review, the legend."""
    standings = render_table(board).renderables[0]
    if isinstance(standings, Table):
        _print(console, standings)
    tasks = {row.task_folder for row in board.rows}
    home = os.path.expanduser("~")
    for title, pick in ((GATED_TITLE, _gated), (REVIEW_TITLE, _review)):
        lines = _fold(
            (s, g, _reasons(g, tasks, home, shorten=not verbose))
            for s in board.standings
            for g in pick(s)
        )
        if not lines:
            continue
        _print(console, _runs_table(title, lines, verbose=verbose))
        if verbose:
            _print_reasons(console, lines)
    if any(s.gated or s.review for s in board.standings):
        console.print(Text(_cut(LEGEND, console), style="dim"))


def _gated(standing: SetupStanding) -> tuple[GatedRun, ...]:
    return standing.gated


def _review(standing: SetupStanding) -> tuple[GatedRun, ...]:
    return standing.review


def _reasons(run: GatedRun, tasks: set[str], home: str, *, shorten: bool) -> tuple[str, ...]:
    details: Iterable[CatastrophicDetail] = (d for ds in run.details.values() for d in ds)
    texts = [d.reason or d.name for d in details]
    if shorten:
        texts = [relative_paths(t, tasks, home) for t in texts]
    return tuple(dict.fromkeys(texts))  # one line per distinct reason, in order


def relative_paths(text: str, tasks: set[str], home: str) -> str:
    """``text`` with each absolute path shown relative to the tasks directory (the part
    from a task folder of the board on), the home (``~/...``), or else as its last two
    components (``…/docs/harness.md``): no absolute path of the operator's tree."""

    def shorter(match: re.Match[str]) -> str:
        path = match.group(0)
        if home not in ("", "/") and (path == home or path.startswith(home + "/")):
            return "~" + path[len(home) :]
        parts = [p for p in path.split("/") if p]
        for index, part in enumerate(parts):
            if part in tasks:
                return "/".join(parts[index:])
        return "…/" + "/".join(parts[-2:]) if len(parts) > 2 else path

    return _ABSOLUTE.sub(shorter, text)


def _fold(runs: Iterable[tuple[SetupStanding, GatedRun, tuple[str, ...]]]) -> list[_Line]:
    """Runs of the same setup and task with the same gate, outcome and reasons as one
    line, their iterations listed together."""
    folded: dict[tuple[str, str, str, tuple[str, ...], tuple[str, ...]], list[int]] = {}
    for standing, run, reasons in runs:
        outcome = "0" if run.outcome_score is None else f"{run.outcome_score:.3f}"
        key = (standing.setup_id, run.task_folder, outcome, run.kinds, reasons)
        folded.setdefault(key, []).append(run.iteration)
    return [
        _Line(setup, task, tuple(sorted(its)), outcome, kinds, reasons)
        for (setup, task, outcome, kinds, reasons), its in folded.items()
    ]


def iteration_label(iterations: Sequence[int]) -> str:
    """``1-3`` for a run of consecutive iterations, ``1,3`` otherwise (``1-2,5``)."""
    spans: list[tuple[int, int]] = []
    for i in sorted(iterations):
        if spans and i == spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], i)
        else:
            spans.append((i, i))
    return ",".join(str(a) if a == b else f"{a}-{b}" for a, b in spans)


def _runs_table(title: str, lines: Sequence[_Line], *, verbose: bool) -> Table:
    table = Table(title=title, title_justify="left", header_style="bold")
    table.add_column("setup", overflow="fold")
    table.add_column("task#iter", overflow="fold")
    table.add_column("outcome", justify="right")
    table.add_column("gate", overflow="fold")
    table.add_column("top reason" + ("" if verbose else " (+N more: -v, the page)"), ratio=1)
    for line in lines:
        more = len(line.reasons) - 1
        top = (line.reasons[0] if line.reasons else "—") + (f" (+{more} more)" if more else "")
        table.add_row(
            Text(line.setup_id),
            Text(f"{line.task_folder}#{iteration_label(line.iterations)}"),
            Text(line.outcome, style="bold red" if title == GATED_TITLE else "yellow"),
            Text(", ".join(line.kinds) or "—"),
            Text(top),
        )
    return table


def _print_reasons(console: Console, lines: Sequence[_Line]) -> None:
    for line in lines:
        label = f"{line.setup_id} {line.task_folder}#{iteration_label(line.iterations)}:"
        console.print(Text(printable(label), style="bold"))
        for reason in line.reasons:
            console.print(Text(printable(f"  • {reason}")))


def _print(console: Console, table: Table) -> None:
    """A table on a terminal; off one, plain lines each cut to :data:`MAX_LINE`."""
    if console.is_terminal:
        print_table(console, table)
        return
    for line in plain_lines(table):
        console.print(Text(cut_line(line)))


def _cut(text: str, console: Console) -> str:
    return text if console.is_terminal else cut_line(text)


def cut_line(line: str, limit: int = MAX_LINE) -> str:
    """``line`` if it fits, else cut at the last space before ``limit`` with ``…``."""
    if len(line) <= limit:
        return line
    head = line[: limit - 1]
    space = head.rfind(" ")
    if space > limit // 2:
        head = head[:space]
    return head.rstrip() + "…"
