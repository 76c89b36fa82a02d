"""``benchguard scan``: detect benchmark-material access in recorded runs, any format.

Thin: it builds a :class:`~benchguard.workflows.scan_command.ScanOptions`, calls
:func:`~benchguard.workflows.scan_command.scan_command` (which collects files: named
files, ``-`` for standard input, directory trees walked in sorted order; loads the
ruleset; hands the files to an engine, serial or dask; applies reviewed dismissals)
and prints the result in the chosen output format (:mod:`benchguard.cli._scan_view`). Log formats
are detected by content (``--input-format`` forces one). Exit codes: 0 nothing flagged,
1 at least one record flagged, 2 bad input (an unreadable or unknown-format file that
was named, a missing path, a bad profile, rules or dismissals file, an unavailable
engine), 3 incomplete input (a skipped sample or line, a walked file that could not be
read or was not a log format, a file without records, an empty input: each is listed
with its reason, in the JSON output as an entry with ``"report": null`` and a
``skipped`` reason). Bad input wins over flagged, flagged over incomplete, and every
readable file is still scanned and reported. The summary names the profile and the
ruleset digest, and warns when the input's framework (Inspect, verifiers, SWE-agent)
has material the chosen profile does not cover.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from benchguard.cli._engine import SchedulerOption, WorkersOption
from benchguard.cli._help import choices
from benchguard.cli._knowledge import (
    BaseCommitOption,
    InstancesOption,
    MaterialOption,
    RepoOption,
)
from benchguard.cli._output import fail, plain_console
from benchguard.cli._profiles import ProfilesOption
from benchguard.cli._scan_view import print_scan, progress_line
from benchguard.engines import ENGINE_NAMES
from benchguard.errors import BenchguardError
from benchguard.importers.registry import FORMAT_NAMES
from benchguard.results.formats import OUTPUT_FORMATS
from benchguard.workflows.scan_command import ScanOptions, scan_command


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""
    app.command(name="scan")(scan)


def scan(
    paths: Annotated[
        list[Path],
        typer.Argument(
            help="Log files or directories (walked recursively, sorted); - reads standard input.",
            show_default=False,
        ),
    ],
    output_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="Output format (default: table, or the config file's).",
            show_default=False,
            metavar=choices(OUTPUT_FORMATS),
        ),
    ] = None,
    input_format: Annotated[
        str | None,
        typer.Option(
            "--input-format",
            help="Force a log format (default: detected by content).",
            show_default=False,
            metavar=choices(FORMAT_NAMES),
        ),
    ] = None,
    profile: ProfilesOption = None,
    rules_file: Annotated[
        Path | None,
        typer.Option(
            "--rules", help="Extra rules YAML, appended to the profile.", show_default=False
        ),
    ] = None,
    dismissals_file: Annotated[
        Path | None,
        typer.Option(
            "--dismissals",
            help="Reviewed dismissals (YAML or JSON) to apply, like a scanner's baseline.",
            show_default=False,
        ),
    ] = None,
    engine: Annotated[
        str | None,
        typer.Option(
            "--engine",
            help="Scan engine (default: serial).",
            show_default=False,
            metavar=choices(ENGINE_NAMES),
        ),
    ] = None,
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
        bool, typer.Option("--json", help="Same as --format json.", show_default=False)
    ] = False,
    show_all: Annotated[
        bool, typer.Option("--all", help="List every record, not only flagged ones.")
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option("-v", "--verbose", help="Print each finding's rule, step and excerpt."),
    ] = False,
    material: MaterialOption = None,
    repo: RepoOption = None,
    base_commit: BaseCommitOption = None,
    instances: InstancesOption = None,
    fail_on_review: Annotated[
        bool,
        typer.Option(
            "--fail-on-review",
            help="Exit 1 when a record is sent to review (only weak findings), as when one "
            "is flagged.",
        ),
    ] = False,
) -> None:
    """Scan recorded agent runs for access to benchmark material.

    Exit codes: 0 nothing flagged (records sent to review, with only weak findings, are
    listed and counted but exit 0 unless --fail-on-review), 1 a record flagged, 2 bad
    input, 3 some input was skipped or unread, or nothing had anything to scan; 2 wins
    over 1, 1 over 3 (docs/exit-codes.md).
    """
    options = ScanOptions(
        paths=paths,
        output_format=output_format,
        as_json=as_json,
        input_format=input_format,
        profiles=profile,
        rules=rules_file,
        dismissals=dismissals_file,
        engine=engine,
        scheduler=scheduler,
        workers=workers,
        out=out,
        material=material,
        repo=repo,
        base_commit=base_commit,
        instances=instances,
        fail_on_review=fail_on_review,
    )
    try:
        with progress_line() as progress:
            result = scan_command(replace(options, on_progress=progress))
    except BenchguardError as exc:
        # Bad flags, config, rules or dismissals, or an engine that cannot run: nothing
        # was reported. An unknown profile's message already lists the built-in ones.
        raise fail(plain_console(stderr=True), exc) from None
    print_scan(result, show_all=show_all, verbose=verbose)
    raise typer.Exit(result.exit_code)
