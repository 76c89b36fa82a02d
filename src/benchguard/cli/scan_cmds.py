"""``benchguard scan``: detect benchmark-material access in recorded runs, any format.

Thin: it collects files (named files, and directory trees walked in sorted order),
loads the ruleset, hands the files to an engine (serial or dask) and prints. Formats
are detected by content (``--format`` forces one). Exit codes: 0 nothing flagged,
1 at least one record flagged, 2 bad input (an unreadable or unknown-format file that
was named, a missing path, a bad profile or rules file, an unavailable engine); bad
input wins over flagged, and every readable file is still scanned and reported.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from benchguard.cli._engine import SchedulerOption, WorkersOption, engine_choice_problem
from benchguard.cli._inputs import collect_inputs
from benchguard.cli._output import (
    EXIT_BAD_INPUT,
    bad_input,
    labelled,
    plain_console,
    print_error,
    print_warning,
)
from benchguard.detection.rules import DEFAULT_PROFILE, RulesetError, load_ruleset
from benchguard.engines import ENGINE_NAMES, EngineUnavailableError, FileScan, scan_files
from benchguard.importers.registry import FORMAT_NAMES
from benchguard.results.aggregate import MANIFEST_FILENAME, MANIFESTS_FILENAME, ROWS_FILENAME
from benchguard.results.io import write_text_atomic

# Suffixes picked up when walking a directory; a file named on the command line is
# read whatever its name.
WALK_SUFFIXES = (".json", ".jsonl", ".eval", ".traj")
# Files the harness and ``aggregate`` write beside results.json that hold no records.
WALK_SKIP_NAMES = frozenset({ROWS_FILENAME, MANIFEST_FILENAME, MANIFESTS_FILENAME})

EXIT_CLEAN, EXIT_FLAGGED = 0, 1


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""
    app.command(name="scan")(scan)


def _is_log_file(path: Path) -> bool:
    """Whether a file found by walking a directory is one to scan."""
    return path.suffix in WALK_SUFFIXES and path.name not in WALK_SKIP_NAMES


def scan(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Log files or directories (walked recursively, sorted).", show_default=False
        ),
    ],
    format_name: Annotated[
        str | None,
        typer.Option(
            "--format", help=f"Force a format: {', '.join(FORMAT_NAMES)}.", show_default=False
        ),
    ] = None,
    profile: Annotated[
        str, typer.Option("--profile", help="Rule profile name or profile YAML path.")
    ] = DEFAULT_PROFILE,
    rules_file: Annotated[
        Path | None,
        typer.Option(
            "--rules", help="Extra rules YAML, appended to the profile.", show_default=False
        ),
    ] = None,
    engine: Annotated[
        str, typer.Option("--engine", help=f"Scan engine: {', '.join(ENGINE_NAMES)}.")
    ] = "serial",
    scheduler: SchedulerOption = None,
    workers: WorkersOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help="Write every file's reports as JSON here (missing parent directories are "
            "created).",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a JSON list of reports instead of a table.")
    ] = False,
) -> None:
    """Scan recorded agent runs for access to benchmark material.

    Exit code 0 when nothing is flagged, 1 when any record is flagged, 2 for bad input.
    """
    # Markup off: file names, record names and error texts print as themselves.
    err = plain_console(stderr=True)
    if format_name is not None and format_name not in FORMAT_NAMES:
        raise bad_input(
            err,
            f"--format {format_name!r} is not a format we read; choose one of: "
            f"{', '.join(FORMAT_NAMES)}",
        )
    engine_problem = engine_choice_problem(engine, scheduler)
    if engine_problem is not None:
        raise bad_input(err, engine_problem)
    try:
        rules = load_ruleset(profile, rules_file)
    except RulesetError as exc:
        # An unknown profile's message already lists the built-in ones.
        raise bad_input(err, str(exc)) from None
    inputs = collect_inputs(paths, _is_log_file).files
    missing = [
        f"{item.path}: no such file or directory"
        for item in inputs
        if item.named and not item.path.is_file()
    ]
    files = [str(item.path) for item in inputs if not item.named or item.path.is_file()]
    named = {str(item.path) for item in inputs if item.named}
    try:
        scans = scan_files(
            files,
            rules,
            format_name=format_name,
            engine="dask" if engine == "dask" else "serial",
            scheduler=scheduler,
            workers=workers,
        )
    except EngineUnavailableError as exc:
        raise bad_input(err, str(exc)) from None

    skipped = [s for s in scans if s.error_kind == "unknown-format" and s.path not in named]
    failed = [s for s in scans if s.error and s not in skipped]
    for problem in missing:
        print_error(err, problem)
    for bad in failed:
        print_error(err, bad.error or "")
    for scanned in scans:
        for problem in scanned.problems:
            print_warning(err, problem)
    for skip in skipped:
        err.print(
            labelled("skipped ", "dim", f"{skip.path}: not a log format we read"), soft_wrap=True
        )

    if out is not None:
        _write_out(err, out, scans, profile, engine)
    if as_json:
        typer.echo(json.dumps(_json_entries(scans), indent=2, ensure_ascii=False))
    elif not (missing or failed) or any(_shown(s) for s in scans):
        # After bad input, a table is printed only if some file could be reported.
        _print_table(plain_console(), scans)

    flagged = any(r.report.status == "flagged" for s in scans for r in s.records)
    if missing or failed:
        raise typer.Exit(EXIT_BAD_INPUT)
    raise typer.Exit(EXIT_FLAGGED if flagged else EXIT_CLEAN)


def _shown(scanned: FileScan) -> bool:
    """Whether the table has a line for this file (a file that failed outright has none)."""
    return bool(scanned.records) or not scanned.error


def _json_entries(scans: list[FileScan]) -> list[dict[str, Any]]:
    return [
        {
            "file": s.path,
            "format": s.format,
            "record": r.index,
            "name": r.name,
            "report": r.report.model_dump(mode="json"),
        }
        for s in scans
        for r in s.records
    ]


def _write_out(err: Console, out: Path, scans: list[FileScan], profile: str, engine: str) -> None:
    document = {
        "profile": profile,
        "engine": engine,
        "files": [s.model_dump(mode="json") for s in scans],
    }
    try:
        write_text_atomic(out, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise bad_input(err, f"{out}: cannot write ({exc.strerror or exc})") from None


def _print_table(console: Console, scans: list[FileScan]) -> None:
    table = Table(title="benchguard scan", show_lines=False)
    for column in ("file", "record", "status", "categories", "findings"):
        table.add_column(column, overflow="fold")
    counts = {"flagged": 0, "clean": 0, "no_data": 0}
    for scanned in scans:
        if not _shown(scanned):
            continue
        if not scanned.records:
            table.add_row(Text(scanned.path), "-", Text("no records", style="dim"), "", "0")
        for rec in scanned.records:
            report = rec.report
            counts[report.status] += 1
            style = {"flagged": "bold red", "clean": "green", "no_data": "yellow"}[report.status]
            label = rec.name or f"#{rec.index}"
            table.add_row(
                Text(scanned.path),
                Text(label),
                Text(report.status, style=style),
                Text(", ".join(report.categories)),
                str(len(report.findings)),
            )
    console.print(table)
    files = sum(1 for s in scans if not s.error)
    console.print(
        f"{files} file(s), {sum(counts.values())} record(s): {counts['flagged']} flagged, "
        f"{counts['clean']} clean, {counts['no_data']} no data"
    )
