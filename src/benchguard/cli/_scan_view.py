"""How ``benchguard scan`` prints a :class:`benchguard.workflows.scan_command.ScanResult`:
problems on stderr (one line each), then the chosen output on stdout (a table off a
terminal as plain aligned lines, JSON, SARIF or JUnit), and on a terminal a progress
line on stderr while files are scanned (never in a pipe or a file).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import Any, TextIO

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from benchguard import __version__
from benchguard.cli._findings_view import finding_lines
from benchguard.cli._json_text import indented_json
from benchguard.cli._output import labelled, plain_console, print_error, print_warning
from benchguard.cli._view import print_table, printable
from benchguard.detection.models import CheatingReport
from benchguard.detection.rules import ruleset_digest
from benchguard.engines import FileScan
from benchguard.results.formats._record import ReportedRecord
from benchguard.workflows._scan_gaps import InputGap, coverage_warnings, summary_line
from benchguard.workflows.profiles import describe_names
from benchguard.workflows.scan import ScanProgress
from benchguard.workflows.scan_command import ScanResult

_MB = 1024 * 1024


def print_scan(result: ScanResult, *, show_all: bool, verbose: bool) -> None:
    """Everything ``scan`` prints for ``result``, in the order a reader needs it."""
    # Markup off: file names, record names and error texts print as themselves.
    err = plain_console(stderr=True)
    outcome, names, chosen = result.outcome, result.profiles, result.output_format
    scans, missing, failed = outcome.scans, outcome.missing, outcome.failed
    skipped, gaps = outcome.skipped, outcome.gaps
    for problem in missing:
        print_error(err, problem)
    for bad in failed:
        print_error(err, bad.error or "")
    for unread in (s for s in scans if s.error and s not in failed and s not in skipped):
        print_warning(err, unread.error or "")
    for scanned in scans:
        for problem in scanned.problems:
            print_warning(err, problem)
    for entry in outcome.unmatched:
        print_warning(
            err, f"{result.dismissals_file}: dismissal matched no finding: {entry.describe()}"
        )
    for skip in skipped:
        err.print(
            labelled("skipped ", "dim", f"{skip.path}: not a log format we read"), soft_wrap=True
        )
    for warning in coverage_warnings(scans, names):
        print_warning(err, warning)
    if not scans and not missing and chosen != "table":
        # The table names it in its summary; a missing path already said so in one line.
        print_warning(err, gaps[0].file + ": " + gaps[0].reason)
    if result.out_error is not None:
        print_error(err, result.out_error)
        return
    if chosen == "json":
        typer.echo(indented_json(_json_entries(scans, gaps)))
    elif chosen == "sarif":
        from benchguard.results.formats.sarif import sarif_log  # on use: start-up

        log = sarif_log(_reported(scans), result.rules, tool_version=__version__)
        typer.echo(indented_json(log))
    elif chosen == "junit":
        from benchguard.results.formats.junit import junit_xml  # on use: start-up

        typer.echo(junit_xml(_reported(scans), name="benchguard scan"), nl=False)
    elif not (missing or failed) or any(_shown(s) for s in scans):
        # After bad input, a table is printed only if some file could be reported.
        _print_text(result, show_all=show_all, verbose=verbose)


def _print_text(result: ScanResult, *, show_all: bool, verbose: bool) -> None:
    """The table (flagged records, or every one), findings under ``verbose``, every
    input not scanned, and the summary line."""
    console = plain_console()
    outcome = result.outcome
    _print_table(console, outcome.scans, show_all=show_all)
    if verbose:
        _print_findings(console, outcome.scans)
    # Like pytest's collection errors: every input not scanned, named, on stdout.
    for gap in outcome.gaps:
        where = gap.file if gap.record is None else f"{gap.file} record {gap.record}"
        # Importers word a problem with its file's path first; say the path once.
        reason = gap.reason.removeprefix(f"{gap.file}: ")
        console.print(Text(printable(f"incomplete: {where}: {reason}")), soft_wrap=True)
    console.print(
        summary_line(
            outcome.profiles_line() or describe_names(result.profiles),
            ruleset_digest(result.rules),
            outcome.gaps,
            outcome.exit_code,
        ),
        soft_wrap=True,
    )


@contextmanager
def progress_line(stream: TextIO | None = None) -> Iterator[ProgressLine | None]:
    """A :class:`ProgressLine` on ``stream`` (stderr) when it is a terminal, else
    ``None``; the line is cleared when the scan ends, so the output follows cleanly."""
    target = sys.stderr if stream is None else stream
    if not target.isatty():
        yield None
        return
    line = ProgressLine(target)
    try:
        yield line
    finally:
        line.clear()


class ProgressLine:
    """``scanning: 3/10 files, 45.2/200.0 MB``, rewritten in place on a terminal."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream
        self.shown = False

    def __call__(self, progress: ScanProgress) -> None:
        self.stream.write(
            f"\r\x1b[Kscanning: {progress.files_done}/{progress.files} files, "
            f"{progress.bytes_done / _MB:.1f}/{progress.bytes / _MB:.1f} MB"
        )
        self.stream.flush()
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self.stream.write("\r\x1b[K")
            self.stream.flush()


def _reported(scans: list[FileScan]) -> list[ReportedRecord]:
    return [
        ReportedRecord(s.path, r.label or f"#{r.index}", r.report, r.line)
        for s in scans
        for r in s.records
    ]


def _shown(scanned: FileScan) -> bool:
    """Whether the table has a line for this file (a file that failed outright has none)."""
    return bool(scanned.records) or not scanned.error


def _json_entries(scans: list[FileScan], gaps: Sequence[InputGap] = ()) -> list[dict[str, Any]]:
    """Each file's records, then its input gaps (``"report": null`` and the reason), in
    walk order; a gap naming no scanned file (an empty input) comes last."""
    by_file: dict[str, list[InputGap]] = {}
    for gap in gaps:
        by_file.setdefault(gap.file, []).append(gap)
    entries: list[dict[str, Any]] = []
    for s in scans:
        entries.extend(
            {
                "file": s.path,
                "format": s.format,
                "record": r.index,
                "name": r.name,
                "label": r.label,
                "report": r.report.model_dump(mode="json"),
            }
            for r in s.records
        )
        entries.extend(gap.json_entry() for gap in by_file.pop(s.path, []))
    for rest in by_file.values():
        entries.extend(gap.json_entry() for gap in rest)
    return entries


_STATUS_STYLE = {
    "flagged": "bold red",
    "review": "bold yellow",
    "clean": "green",
    "no_data": "yellow",
}
# Statuses listed without --all: a review record is shown with its findings too.
_LISTED = frozenset({"flagged", "review"})


def _print_table(console: Console, scans: list[FileScan], *, show_all: bool) -> None:
    """Flagged records only (every record with ``show_all``), then the counts line."""
    table = Table(title="benchguard scan", show_lines=False)
    for column in ("file", "record", "status", "categories", "findings"):
        table.add_column(column, overflow="fold")
    counts = {"flagged": 0, "review": 0, "clean": 0, "no_data": 0}
    dismissed = sum(len(r.report.dismissed) for s in scans for r in s.records)
    for scanned in scans:
        if not _shown(scanned):
            continue
        if not scanned.records and show_all:
            table.add_row(Text(scanned.path), "-", Text("no records", style="dim"), "", "0")
        for rec in scanned.records:
            report = rec.report
            counts[report.status] += 1
            if report.status not in _LISTED and not show_all:
                continue
            table.add_row(
                Text(printable(scanned.path)),
                Text(printable(rec.label or f"#{rec.index}")),
                Text(report.status, style=_STATUS_STYLE[report.status]),
                Text(", ".join(report.categories)),
                str(len(report.findings)),
            )
    if table.row_count:
        print_table(console, table)
    files = sum(1 for s in scans if not s.error)
    hidden = (
        ""
        if show_all or not (counts["clean"] or counts["no_data"])
        else " (--all lists every record)"
    )
    console.print(
        f"{files} file(s), {sum(counts.values())} record(s): {counts['flagged']} flagged, "
        f"{counts['review']} review, {counts['clean']} clean, {counts['no_data']} no data"
        + (f"; {dismissed} finding(s) dismissed by review" if dismissed else "")
        + hidden,
        soft_wrap=True,
    )


def _print_findings(console: Console, scans: list[FileScan]) -> None:
    """Each finding of each flagged or review record (rule, step, surface, excerpt),
    and each record's dismissed findings, also when dismissal made it clean."""
    for scanned in scans:
        for rec in scanned.records:
            if rec.report.status not in _LISTED and not rec.report.dismissed:
                continue
            console.print(
                Text(printable(f"{scanned.path} {rec.label}:"), style="bold"), soft_wrap=True
            )
            for line in _finding_lines(rec.report):
                console.print(Text(printable(line)), soft_wrap=True)


def _finding_lines(report: CheatingReport) -> list[str]:
    return finding_lines(report)
