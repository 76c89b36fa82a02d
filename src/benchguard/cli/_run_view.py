"""How ``benchguard run`` reports each run to a person: what the agent did, then what the
task's checks said, then the gate, in words that never confuse the two.

The stored ``status`` (``success``, ``error``, ``timeout``, ``interrupted``) says whether
the agent process ran to its end; it is not whether the task was solved. The line says
"agent finished" for it, then "task passed", "task failed: check 'X'" (naming the check
that failed) or "gated" (a cheating run, scored 0 whatever its checks said). Only these
words change: results.json and rows.json keep their status values.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from types import TracebackType
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchguard.cli._output import labelled, print_warning
from benchguard.harness.job import Job
from benchguard.records import RunRecord
from benchguard.results.rows import ResultRow
from benchguard.workflows.run import NoticeKind
from benchguard.workflows.run_command import RunCommandResult

AGENT_WORDS = {
    "success": "agent finished",
    "error": "agent errored",
    "timeout": "agent timed out",
    "interrupted": "run interrupted",
}


def run_line(row: ResultRow, checks: Sequence[Mapping[str, Any]] = ()) -> str:
    """``sum-numbers#1: agent finished; task failed: check 'total' (outcome 0.00);
    integrity clean``; ``checks`` is the record's verification report."""
    agent = AGENT_WORDS.get(row.status, f"agent {row.status}")
    outcome = "not scored" if row.outcome_score is None else f"outcome {row.outcome_score:.2f}"
    failed = [str(c.get("name") or "?") for c in checks if c.get("passed") is False]
    if row.catastrophic:
        kinds = ", ".join(row.catastrophic_kinds) or "catastrophic"
        task = f"gated to 0 ({kinds})"
    elif row.outcome_score is None:
        task = "task not scored"
    elif failed:
        more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
        task = f"task failed: check {failed[0]!r}{more} ({outcome})"
    elif row.outcome_score >= 1.0:
        task = f"task passed ({outcome})"
    else:
        task = f"task scored below full marks ({outcome})"
    why = f"; {row.error}" if row.error else ""
    return (
        f"{row.task_folder}#{row.iteration}: {agent}; {task}; integrity {row.integrity_status}{why}"
    )


class _Plain(logging.Formatter):
    """``warning: message``, the style of every other line benchguard prints."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


def plain_logging() -> None:
    """Log warnings (from the harness and its helpers) as ``warning: ...`` on stderr."""
    handler = logging.StreamHandler()
    handler.setFormatter(_Plain())
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)


class RunView:
    """What ``run`` shows while the batch is prepared and runs (a
    :class:`benchguard.workflows.run_command.RunWatcher`): notices as they come, then a
    progress bar (none with ``quiet``), stopped when the ``with`` block ends."""

    def __init__(self, console: Console, *, quiet: bool) -> None:
        self.console = console
        self.quiet = quiet
        self.progress: Progress | None = None
        self.bar: Any = None

    def notice(self, kind: NoticeKind, message: str) -> None:
        if kind == "skipped task":
            self.console.print(labelled("skipped task: ", "yellow", message), soft_wrap=True)
        else:
            print_warning(self.console, message)

    def started(self, agent: str, total: int, done: int) -> None:
        self.progress = Progress(
            # The description is a task folder: shown verbatim, never parsed as markup.
            TextColumn("{task.description}", style="bold", markup=False),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            disable=self.quiet,
            transient=False,
        )
        self.progress.start()
        self.bar = self.progress.add_task(agent, total=total, completed=done)

    def finished(self, job: Job, record: RunRecord) -> None:
        if self.progress is not None:
            words = AGENT_WORDS.get(str(record.status), str(record.status))
            self.progress.update(self.bar, advance=1, description=f"{job.task.folder}: {words}")

    def __enter__(self) -> RunView:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if self.progress is not None:
            self.progress.stop()


def print_run(console: Console, result: RunCommandResult) -> None:
    """The warnings, then one line per run saying what its row says (outcome, integrity
    status, and why it did not complete), then what never ran and why the batch
    stopped."""
    for message in result.warnings:
        print_warning(console, message)
    batch = result.batch
    checks = {(r.folder, r.iteration): r.verification_report for r in batch.records}
    for row in batch.rows:
        line = run_line(row, checks.get((row.task_folder, row.iteration), ()))
        console.print(line, soft_wrap=True)
    manifest = batch.manifest
    if manifest.not_run:
        console.print(
            f"not run ({len(manifest.not_run)}): {', '.join(manifest.not_run)}", soft_wrap=True
        )
    if batch.interrupted_by is not None:
        console.print(
            f"interrupted by {batch.interrupted_by}: finished runs are written; "
            f"finish with --resume {batch.run_dir}",
            soft_wrap=True,
        )
