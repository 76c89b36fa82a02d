"""``benchguard scan``: detect benchmark-material access in recorded runs, any format.

Thin: it collects files (named files, ``-`` for standard input, and directory trees
walked in sorted order), loads the ruleset, hands the files to an engine (serial or
dask), applies reviewed dismissals and prints in the chosen output format. Log formats
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

import json
from collections.abc import Mapping, Sequence
from contextlib import ExitStack
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from benchguard import __version__
from benchguard.cli._engine import SchedulerOption, WorkersOption, engine_choice_problem
from benchguard.cli._findings_view import finding_lines
from benchguard.cli._help import choices
from benchguard.cli._knowledge import BaseCommitOption, InstancesOption, RepoOption
from benchguard.cli._output import (
    bad_input,
    fail,
    labelled,
    plain_console,
    print_error,
    print_warning,
)
from benchguard.cli._profiles import ProfilesOption
from benchguard.cli._settings import values
from benchguard.cli._stdin import STDIN_LABEL, STDIN_NAME, spooled_stdin
from benchguard.cli._view import print_table, printable
from benchguard.detection.models import CheatingReport
from benchguard.detection.profile_choice import AUTO, ProfileChoice, union_rules
from benchguard.detection.rules import (
    load_ruleset,
    ruleset_digest,
)
from benchguard.engines import ENGINE_NAMES, FileScan
from benchguard.errors import BadInputError, BenchguardError
from benchguard.importers.registry import FORMAT_NAMES
from benchguard.results.dismissals import load_dismissals
from benchguard.results.formats import (
    OUTPUT_FORMATS,
    ReportedRecord,
    junit_xml,
    parse_output_format,
    sarif_log,
)
from benchguard.results.io import write_text_atomic
from benchguard.workflows._scan_gaps import (
    InputGap,
    coverage_warnings,
    summary_line,
)
from benchguard.workflows.history import history_knowledge
from benchguard.workflows.profiles import describe_names, named_choice, profile_names
from benchguard.workflows.scan import ScanRequest, scan_logs

EXIT_CLEAN, EXIT_FLAGGED = 0, 1


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
    # Markup off: file names, record names and error texts print as themselves.
    err = plain_console(stderr=True)
    try:
        settings = values(
            {
                "format": output_format,
                "profile": None,
                "rules": rules_file,
                "dismissals": dismissals_file,
                "engine": engine,
                "scheduler": scheduler,
                "workers": workers,
            }
        )
        names = profile_names(profile, settings["profile"])
        rules_file = settings["rules"]
        dismissals_file, engine = settings["dismissals"], settings["engine"]
        scheduler, workers = settings["scheduler"], settings["workers"]
        chosen = _output_format(output_format, settings["format"], as_json)
        if input_format is not None and input_format not in FORMAT_NAMES:
            raise BadInputError(
                f"--input-format {input_format!r} is not a format we read; choose one of: "
                f"{', '.join(FORMAT_NAMES)}"
            )
        engine_problem = engine_choice_problem(engine, scheduler)
        if engine_problem is not None:
            raise BadInputError(engine_problem)
        if sum(str(p) == STDIN_NAME for p in paths) > 1:
            raise BadInputError("- (standard input) may be named only once")
        named = named_choice(names, rules_file)
        rules = named.rules if named is not None else load_ruleset(AUTO, rules_file)
        entries = load_dismissals(dismissals_file) if dismissals_file is not None else ()
        with ExitStack() as stack:
            renamed: dict[str, str] = {}
            if any(str(p) == STDIN_NAME for p in paths):
                renamed[str(stack.enter_context(spooled_stdin()))] = STDIN_LABEL
            spool = {label: path for path, label in renamed.items()}
            outcome = scan_logs(
                ScanRequest(
                    paths=[Path(spool[STDIN_LABEL]) if str(p) == STDIN_NAME else p for p in paths],
                    rules=rules,
                    dismissals=entries,
                    input_format=input_format,
                    engine="dask" if engine == "dask" else "serial",
                    scheduler=scheduler,
                    workers=workers,
                    renamed=renamed,
                    fail_on_review=fail_on_review,
                    profiles=names,
                    extra_rules=rules_file,
                    history=history_knowledge(repo, base_commit, instances),
                )
            )
    except BenchguardError as exc:
        # Bad flags, config, rules or dismissals, or an engine that cannot run: nothing
        # was reported. An unknown profile's message already lists the built-in ones.
        raise fail(err, exc) from None

    scans, missing, failed = outcome.scans, outcome.missing, outcome.failed
    skipped, unmatched, gaps = outcome.skipped, outcome.unmatched, outcome.gaps
    for problem in missing:
        print_error(err, problem)
    for bad in failed:
        print_error(err, bad.error or "")
    for unread in (s for s in scans if s.error and s not in failed and s not in skipped):
        print_warning(err, unread.error or "")
    for scanned in scans:
        for problem in scanned.problems:
            print_warning(err, problem)
    for entry in unmatched:
        print_warning(err, f"{dismissals_file}: dismissal matched no finding: {entry.describe()}")
    for skip in skipped:
        err.print(
            labelled("skipped ", "dim", f"{skip.path}: not a log format we read"), soft_wrap=True
        )
    if outcome.choices:
        # auto: every file's rules were chosen for it; SARIF describes all of them.
        rules = union_rules(("", choice.rules) for choice in outcome.choices.values())
    for warning in coverage_warnings(scans, names):
        print_warning(err, warning)
    if not scans and not missing and chosen != "table":
        # The table names it in its summary; a missing path already said so in one line.
        print_warning(err, gaps[0].file + ": " + gaps[0].reason)

    if out is not None:
        _write_out(err, out, scans, describe_names(names), engine, outcome.choices)
    if chosen == "json":
        typer.echo(json.dumps(_json_entries(scans, gaps), indent=2, ensure_ascii=False))
    elif chosen == "sarif":
        log = sarif_log(_reported(scans), rules, tool_version=__version__)
        typer.echo(json.dumps(log, indent=2, ensure_ascii=False))
    elif chosen == "junit":
        typer.echo(junit_xml(_reported(scans), name="benchguard scan"), nl=False)
    elif not (missing or failed) or any(_shown(s) for s in scans):
        # After bad input, a table is printed only if some file could be reported.
        console = plain_console()
        _print_table(console, scans, show_all=show_all)
        if verbose:
            _print_findings(console, scans)
        # Like pytest's collection errors: every input not scanned, named, on stdout.
        for gap in gaps:
            where = gap.file if gap.record is None else f"{gap.file} record {gap.record}"
            console.print(Text(printable(f"incomplete: {where}: {gap.reason}")), soft_wrap=True)
        console.print(
            summary_line(
                outcome.profiles_line() or describe_names(names),
                ruleset_digest(rules),
                gaps,
                outcome.exit_code,
            ),
            soft_wrap=True,
        )

    raise typer.Exit(outcome.exit_code)


def _output_format(flag: str | None, value: str, as_json: bool) -> str:
    """The output format; ``--json`` is ``--format json`` (a config file's ``format``
    gives way to it, a conflicting ``--format`` flag is refused)."""
    if as_json and flag is None:
        return "json"
    if value in FORMAT_NAMES:
        raise BadInputError(
            f"--format {value!r} names a log format; force it with --input-format {value} "
            f"(--format chooses the output: {', '.join(OUTPUT_FORMATS)})"
        )
    chosen = parse_output_format(value)
    if as_json and chosen not in ("table", "json"):
        raise BadInputError(f"--json and --format {chosen} disagree; give one of them")
    return "json" if as_json else chosen


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


def _write_out(
    err: Console,
    out: Path,
    scans: list[FileScan],
    profile: str,
    engine: str,
    choices: Mapping[str, ProfileChoice],
) -> None:
    document: dict[str, Any] = {
        "profile": profile,
        "engine": engine,
        "files": [s.model_dump(mode="json") for s in scans],
    }
    if choices:
        # auto: the profiles each file was scanned with, and why each was chosen.
        document["profiles"] = {
            path: [{"profile": n, "why": r} for n, r in zip(c.names, c.reasons, strict=True)]
            for path, c in sorted(choices.items())
        }
    try:
        write_text_atomic(out, json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    except OSError as exc:
        raise bad_input(err, f"{out}: cannot write ({exc.strerror or exc})") from None


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
