"""``benchguard score | aggregate | leaderboard | dismiss``: publication commands.

Thin: each parses, calls ``benchguard.scoring`` / ``benchguard.results``, prints. Exit
codes: 0 ok; 1 outputs written but something needs attention (a record that could not
be scored, a dismissal that matched nothing, a rows file skipped); 2 bad input, with a
message naming the file and what is wrong, never a traceback. ``score`` takes many
files or trees: a bad one is reported (exit 2) and every good one is still written.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.table import Table
from rich.text import Text

from benchguard import __version__
from benchguard.cli._engine import SchedulerOption, WorkersOption, engine_choice_problem
from benchguard.cli._inputs import collect_inputs
from benchguard.cli._output import (
    EXIT_BAD_INPUT,
    bad_input,
    plain_console,
    print_error,
    print_warning,
)
from benchguard.cli._settings import values
from benchguard.cli._view import print_table
from benchguard.detection.models import SCAN_INCOMPLETE_CATEGORY, CheatingReport, Rule
from benchguard.detection.rules import DEFAULT_PROFILE, RulesetError, load_ruleset
from benchguard.engines import ENGINE_NAMES, EngineUnavailableError, scan_records
from benchguard.engines.work import record_label
from benchguard.errors import BadInputError
from benchguard.importers.registry import detect_format, import_path
from benchguard.importers.results_json import FORMAT_NAME as RESULTS_FORMAT
from benchguard.importers.transcript import UnreadableLogError
from benchguard.results.aggregate import (
    MANIFEST_FILENAME,
    MANIFESTS_FILENAME,
    ROWS_FILENAME,
    aggregate,
    dedupe_latest,
    find_rows_files,
    iso_t,
    new_run_id,
)
from benchguard.results.dismissals import (
    Dismissal,
    DismissalFileError,
    append_dismissal,
    load_dismissals,
)
from benchguard.results.formats import (
    OUTPUT_FORMATS,
    ReportedRecord,
    junit_xml,
    parse_output_format,
    sarif_log,
)
from benchguard.results.imported import imported_document
from benchguard.results.io import (
    ResultsDocument,
    ResultsFileError,
    dumps,
    read_manifest,
    read_results,
    read_rows,
    write_files_atomic,
    write_text_atomic,
)
from benchguard.results.leaderboard import (
    DEFAULT_UNVERIFIED_POLICY,
    UNVERIFIED_POLICIES,
    build_leaderboard,
    render_html,
    render_table,
    render_task_table,
)
from benchguard.results.rescore import (
    BatchScan,
    rescan_documents,
    rescore_records,
    unmatched_messages,
)
from benchguard.results.rows import (
    INTEGRITY_STATUSES,
    Manifest,
    ResultRow,
    build_rows,
    record_iteration,
    record_task_folder,
    setup_id_for,
)
from benchguard.suggest import did_you_mean

DEFAULT_DISMISSALS_FILE = "dismissals.yaml"

# Markup off: paths, task folders and setup ids in these files print as themselves.
_out = plain_console()
_err = plain_console(stderr=True)


def _warn(message: str) -> None:
    print_warning(_err, message)


# ---- score ----------------------------------------------------------------------------

RESULTS_FILENAME = "results.json"
# Beside an imported log, the folder its scored outputs are written to.
IMPORTED_SUFFIX = ".benchguard"


@dataclass
class _ScoreInput:
    """One results file being scored, and the directory its outputs go to."""

    path: Path
    document: ResultsDocument
    manifest: Manifest
    target: Path
    # Outputs of an imported log go to a folder of their own named after it.
    subdir: str = ""


def score(
    results: Annotated[
        list[Path],
        typer.Argument(
            help="results.json files (list or object layout), any other log scan reads "
            "(Inspect .eval/.json, verifiers traces, SWE-agent, mini-swe-agent, Claude "
            "Code), or directories searched (recursively, sorted) for results.json files.",
            show_default=False,
        ),
    ],
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile",
            help=f"Detection rule profile name or profile YAML path (default: {DEFAULT_PROFILE}).",
            show_default=False,
        ),
    ] = None,
    rules: Annotated[
        Path | None,
        typer.Option(
            "--rules", help="Extra rules YAML, appended to the profile.", show_default=False
        ),
    ] = None,
    dismissals: Annotated[
        Path | None,
        typer.Option(
            "--dismissals", help="Reviewed dismissals (YAML or JSON) to apply.", show_default=False
        ),
    ] = None,
    engine: Annotated[
        str | None,
        typer.Option(
            "--engine",
            help=f"Rescan engine: {', '.join(ENGINE_NAMES)} (default: serial).",
            show_default=False,
        ),
    ] = None,
    scheduler: SchedulerOption = None,
    workers: WorkersOption = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help="Write here instead of beside each input; with several inputs, each "
            "input's location relative to their common directory is mirrored under DIR "
            "(created with any missing parents).",
            show_default=False,
        ),
    ] = None,
    output_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help=f"What to print: {', '.join(OUTPUT_FORMATS)} (default: table).",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Rescan, apply dismissals, gate and finalize; write results.json, rows.json, manifest.json.

    Exit 0 ok; 1 outputs written but something needs attention; 2 bad input (every
    readable input is still scored and written).
    """
    try:
        settings = values(
            {
                "profile": profile,
                "rules": rules,
                "dismissals": dismissals,
                "engine": engine,
                "scheduler": scheduler,
                "workers": workers,
                "format": output_format,
            }
        )
        engine, scheduler = settings["engine"], settings["scheduler"]
        workers, dismissals = settings["workers"], settings["dismissals"]
        chosen = parse_output_format(settings["format"])
        engine_problem = engine_choice_problem(engine, scheduler)
        if engine_problem is not None:
            raise BadInputError(engine_problem)
        ruleset = load_ruleset(settings["profile"], settings["rules"])
        entries = load_dismissals(dismissals) if dismissals is not None else ()
    except (BadInputError, RulesetError, ResultsFileError) as exc:
        # An unknown profile's message already lists the built-in ones; a config
        # file's error names the file and key.
        raise bad_input(_err, str(exc)) from None

    # A directory under -o is not walked: a second run must not score its own outputs.
    found = collect_inputs(results, _is_results_file, exclude=out_dir)
    bad = [f"{path}: no {RESULTS_FILENAME} files found" for path in found.empty_dirs]
    inputs = _read_inputs([item.path for item in found.files], bad)
    inputs = _assign_targets(inputs, out_dir, bad)
    if not inputs:
        for message in bad:
            print_error(_err, message)
        raise typer.Exit(code=EXIT_BAD_INPUT)

    scan_batch = _engine_scan(engine, scheduler, workers)
    try:
        verdicts = rescan_documents([i.document.records for i in inputs], ruleset, scan_batch)
    except (EngineUnavailableError, ValueError) as exc:
        raise bad_input(_err, str(exc)) from None

    attention: list[str] = []
    used = [False] * len(entries)
    summaries: list[tuple[str, list[ResultRow]]] = []
    written: list[Path] = []
    scored: list[tuple[_ScoreInput, list[ResultRow]]] = []
    for item, fresh in zip(inputs, verdicts, strict=True):
        document, manifest = item.document, item.manifest
        for position in document.non_object_positions():
            _warn(f"{item.path}: record {position} is not an object; kept as it is, with no row")
        outcome = rescore_records(
            document.records,
            verdicts=fresh,
            dismissals=entries,
            run_id=manifest.run_id,
        )
        used = [a or b for a, b in zip(used, outcome.dismissals_used, strict=True)]
        attention.extend(f"{item.path}: {m}" for m in (*outcome.errors, *outcome.stale_dismissals))
        rows = build_rows(document.records, manifest)
        if document.layout == "object":
            document.manifest = manifest.to_json()
            document.run_id, document.t = manifest.run_id, manifest.t
        try:
            write_files_atomic(
                {
                    item.target / RESULTS_FILENAME: dumps(document.to_json()),
                    item.target / ROWS_FILENAME: dumps([row.to_json() for row in rows]),
                    item.target / MANIFEST_FILENAME: dumps(manifest.to_json()),
                }
            )
        except OSError as exc:
            bad.append(f"{item.target}: cannot write outputs: {exc.strerror or exc}")
            continue
        summaries.append((str(item.path), rows))
        written.append(item.target)
        scored.append((item, rows))
    attention.extend(unmatched_messages(entries, used))

    if chosen == "table":
        if summaries:
            print_table(_out, _score_summary(summaries))
        for target in written:
            _out.print(
                f"wrote {target / RESULTS_FILENAME}, {target / ROWS_FILENAME}", soft_wrap=True
            )
    else:
        _print_scored(chosen, scored, ruleset)
    for message in attention:
        _warn(message)
    for message in bad:
        print_error(_err, message)
    if bad:
        raise typer.Exit(code=EXIT_BAD_INPUT)
    if attention:
        raise typer.Exit(code=1)


def _print_scored(
    chosen: str, scored: Sequence[tuple[_ScoreInput, list[ResultRow]]], ruleset: Sequence[Rule]
) -> None:
    """The scored records as JSON rows, SARIF or JUnit (each naming its input file)."""
    if chosen == "json":
        document = [
            {
                "input": str(item.path),
                "outputs": str(item.target),
                "rows": [row.to_json() for row in rows],
            }
            for item, rows in scored
        ]
        sys.stdout.write(json.dumps(document, indent=2, ensure_ascii=False) + "\n")
        return
    reported = [
        ReportedRecord(str(item.path), record_label(record, index), _stored_report(record))
        for item, _ in scored
        for index, record in enumerate(item.document.records)
        if isinstance(record, dict)
    ]
    if chosen == "sarif":
        log = sarif_log(reported, ruleset, tool_version=__version__)
        sys.stdout.write(json.dumps(log, indent=2, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(junit_xml(reported, name="benchguard score"))


def _stored_report(record: dict[str, Any]) -> CheatingReport:
    """The record's report as the gate left it; one that cannot be read is shown as a
    flagged, incomplete report (fail closed)."""
    try:
        return CheatingReport.model_validate(record.get("cheating_report"))
    except ValidationError:
        return CheatingReport(
            detector_version=0,
            status="flagged",
            categories=(SCAN_INCOMPLETE_CATEGORY,),
            incomplete=True,
            incomplete_reason="stored report unreadable",
        )


def _is_results_file(path: Path) -> bool:
    """Whether a file found by walking a directory is one to score (never the
    rows.json/manifest.json a previous run wrote beside it)."""
    return path.name == RESULTS_FILENAME


def _is_rows_file(path: Path) -> bool:
    return path.name == ROWS_FILENAME


def _read_inputs(files: Sequence[Path], bad: list[str]) -> list[_ScoreInput]:
    inputs = []
    for path in files:
        try:
            inputs.append(_read_input(path))
        except (ResultsFileError, UnreadableLogError) as exc:
            bad.append(str(exc))
    return inputs


def _read_input(path: Path) -> _ScoreInput:
    """A results.json as it is; any other log ``scan`` reads, imported (its outputs go
    to ``<log name>.benchguard/`` beside it)."""
    try:
        log_format = detect_format(path)
    except UnreadableLogError:
        # Not a log we recognise: the results reader names exactly what is wrong.
        log_format = RESULTS_FORMAT
    if log_format == RESULTS_FORMAT:
        document = read_results(path)
        return _ScoreInput(path, document, _manifest_for(path, document), path.parent)
    document, manifest = imported_document(import_path(path, log_format))
    subdir = f"{path.name}{IMPORTED_SUFFIX}"
    return _ScoreInput(path, document, manifest, path.parent / subdir, subdir)


def _assign_targets(
    inputs: list[_ScoreInput], out_dir: Path | None, bad: list[str]
) -> list[_ScoreInput]:
    """Each input's output directory: beside it, or under ``out_dir`` at its location
    relative to the inputs' common directory. Two inputs that would write the same
    directory are refused (the first keeps it): one would silently overwrite the other."""
    if out_dir is not None and inputs:
        parents = [Path(os.path.abspath(item.path.parent)) for item in inputs]
        base = Path(os.path.commonpath(parents))
        for item, parent in zip(inputs, parents, strict=True):
            item.target = out_dir / parent.relative_to(base) / item.subdir
    kept: list[_ScoreInput] = []
    owners: dict[Path, Path] = {}
    for item in inputs:
        key = Path(os.path.abspath(item.target))
        if key in owners:
            bad.append(
                f"{item.path}: its outputs would overwrite those of {owners[key]} in "
                f"{item.target}; score it on its own with -o DIR"
            )
            continue
        owners[key] = item.path
        kept.append(item)
    return kept


def _engine_scan(engine: str, scheduler: str | None, workers: int | None) -> BatchScan:
    def scan_batch(
        records: Sequence[Mapping[str, Any]],
        rules: Sequence[Rule],
        dynamic_rules: Sequence[Sequence[Rule]],
    ) -> list[CheatingReport]:
        return scan_records(
            records,
            rules,
            engine="dask" if engine == "dask" else "serial",
            scheduler=scheduler,
            workers=workers,
            dynamic_rules=dynamic_rules,
        )

    return scan_batch


def _manifest_for(results: Path, document: ResultsDocument) -> Manifest:
    """The document's own manifest, else manifest.json beside it, else one derived from
    the file (run id = directory name, t = the file's modification time)."""
    if document.manifest is not None:
        try:
            return Manifest.model_validate(document.manifest)
        except ValidationError as exc:
            raise ResultsFileError(results, f"invalid manifest: {exc.errors()[0]['msg']}") from None
    beside = results.parent / MANIFEST_FILENAME
    if beside.is_file():
        return read_manifest(beside)
    modified = dt.datetime.fromtimestamp(results.stat().st_mtime, tz=dt.UTC)
    return Manifest(
        run_id=document.run_id or results.resolve().parent.name,
        t=document.t or iso_t(modified),
        setup_id=setup_id_for("unknown", "unknown"),
        model="unknown",
        harness="unknown",
    )


def _score_summary(summaries: Sequence[tuple[str, list[ResultRow]]]) -> Table:
    """One line per scored file (read from its rows), and a total line when there are
    several."""
    several = len(summaries) > 1
    table = Table(title="Scored", title_justify="left", header_style="bold")
    if several:
        table.add_column("results", overflow="fold")
    for name in ("runs", "scored", "gated", *INTEGRITY_STATUSES, "dismissed"):
        table.add_column(name, justify="right")
    for label, rows in summaries:
        label_cell = [Text(label)] if several else []
        table.add_row(*label_cell, *_summary_cells(rows))
    if several:
        every = [row for _, rows in summaries for row in rows]
        table.add_row(Text("total", style="bold"), *_summary_cells(every))
    return table


def _summary_cells(rows: Sequence[ResultRow]) -> list[str | Text]:
    status = [r.integrity_status for r in rows]
    return [
        str(len(rows)),
        str(sum(r.outcome_score is not None for r in rows)),
        Text(str(sum(r.catastrophic for r in rows)), style="bold red"),
        *(str(status.count(s)) for s in INTEGRITY_STATUSES),
        str(sum(r.dismissed_findings for r in rows)),
    ]


# ---- aggregate ------------------------------------------------------------------------


def aggregate_cmd(
    root: Annotated[Path, typer.Argument(help="Directory holding per-task rows.json files.")],
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help="Output directory (default: ROOT); created with any missing parents.",
            show_default=False,
        ),
    ] = None,
    run_id: Annotated[
        str | None, typer.Option("--run-id", help="Run id for the batch.", show_default=False)
    ] = None,
    t: Annotated[
        str | None, typer.Option("--t", help="Timestamp for the batch.", show_default=False)
    ] = None,
) -> None:
    """Merge per-task rows.json files into one batch: rows.json and manifests.json."""
    if not root.is_dir():
        raise bad_input(_err, f"{root}: not a directory")
    target = out_dir if out_dir is not None else root
    files = find_rows_files(root, exclude=target / ROWS_FILENAME)
    if not files:
        raise bad_input(_err, f"{root}: no {ROWS_FILENAME} files found")
    now = dt.datetime.now(dt.UTC)
    result = aggregate(files, run_id=run_id or new_run_id(now, os.getpid()), t=t or iso_t(now))
    if not result.sources:
        for message in result.problems:
            print_error(_err, message)
        raise bad_input(_err, f"{root}: none of the {len(files)} rows files could be read")
    try:
        write_files_atomic(
            {
                target / ROWS_FILENAME: dumps([row.to_json() for row in result.rows]),
                target / MANIFESTS_FILENAME: dumps([m.to_json() for m in result.manifests]),
            }
        )
    except OSError as exc:
        raise bad_input(_err, f"{target}: cannot write outputs: {exc.strerror or exc}") from None
    _out.print(
        f"merged {len(result.sources)} file(s) into {len(result.rows)} row(s) across "
        f"{len(result.manifests)} setup(s): {target / ROWS_FILENAME}"
    )
    for message in result.problems:
        _warn(f"skipped: {message}")
    if result.problems:
        raise typer.Exit(code=1)


# ---- leaderboard ----------------------------------------------------------------------


def leaderboard(
    rows_files: Annotated[
        list[Path], typer.Argument(help="rows.json files, or directories searched for them.")
    ],
    html_file: Annotated[
        Path | None,
        typer.Option(
            "--html",
            help="Write the HTML page here (missing parent directories are created).",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of tables.")] = False,
    by_task: Annotated[
        bool,
        typer.Option("--by-task", help="Also print each task's setups, best mean first."),
    ] = False,
    unverified: Annotated[
        str,
        typer.Option(
            "--unverified",
            help="How the ranked mean treats no_data and unverified runs: zero (count "
            "them as 0), include (with their own outcome) or exclude (leave them out).",
        ),
    ] = DEFAULT_UNVERIFIED_POLICY,
) -> None:
    """Rank setups by mean outcome (± standard error), with gated runs shown as zeros
    with their kind. Runs nobody could verify count as 0 unless --unverified says
    otherwise; the table and the page say which policy ranked them."""
    policy = next((p for p in UNVERIFIED_POLICIES if p == unverified), None)
    if policy is None:
        raise bad_input(
            _err,
            f"--unverified {unverified!r}: allowed values are {', '.join(UNVERIFIED_POLICIES)}",
        )
    found = collect_inputs(rows_files, _is_rows_file)
    rows: list[ResultRow] = []
    try:
        if found.empty_dirs:
            raise ResultsFileError(found.empty_dirs[0], f"no {ROWS_FILENAME} files found")
        for item in found.files:
            rows.extend(read_rows(item.path))
    except ResultsFileError as exc:
        raise bad_input(_err, str(exc)) from None
    board = build_leaderboard(dedupe_latest(rows), unverified_policy=policy)
    if html_file is not None:
        try:
            write_text_atomic(html_file, render_html(board))
        except OSError as exc:
            raise bad_input(_err, f"{html_file}: cannot write: {exc.strerror or exc}") from None
    if as_json:
        sys.stdout.write(json.dumps(board.to_json(), indent=2, ensure_ascii=False) + "\n")
        return
    for table in render_table(board).renderables:
        if isinstance(table, Table):
            print_table(_out, table)
    if by_task:
        print_table(_out, render_task_table(board))
    if html_file is not None:
        _out.print(f"wrote {html_file}")


# ---- dismiss --------------------------------------------------------------------------


def dismiss(
    results: Annotated[Path, typer.Argument(help="The results.json holding the record.")],
    task: Annotated[str, typer.Option("--task", help="The record's task folder.")],
    iteration: Annotated[int, typer.Option("--iteration", min=0, help="The record's iteration.")],
    rule: Annotated[str, typer.Option("--rule", help="The rule id whose findings to dismiss.")],
    reviewer: Annotated[str, typer.Option("--reviewer", help="Who reviewed the findings.")],
    reason: Annotated[str, typer.Option("--reason", help="Why they are not cheating.")],
    file: Annotated[
        Path | None,
        typer.Option(
            "--file", help=f"Dismissal file (default: {DEFAULT_DISMISSALS_FILE} beside RESULTS)."
        ),
    ] = None,
    date: Annotated[
        str | None, typer.Option("--date", help="YYYY-MM-DD (default: today).", show_default=False)
    ] = None,
) -> None:
    """Record a reviewed dismissal of one rule's findings on one record."""
    try:
        document, run_id = _dismissable(results)
        report = _find_report(results, document, task, iteration)
        entry = Dismissal.model_validate(
            {
                "run_id": run_id,
                "task": task,
                "iteration": iteration,
                "rule": rule,
                "reviewer": reviewer,
                "reason": reason,
                "date": date if date is not None else dt.date.today().isoformat(),
            }
        )
    except (ResultsFileError, UnreadableLogError) as exc:
        raise bad_input(_err, str(exc)) from None
    except ValidationError as exc:
        first = exc.errors()[0]
        raise bad_input(_err, f"--{first['loc'][0]}: {first['msg']}") from None
    with_findings = _report_rules(report)
    if rule not in with_findings:
        raise bad_input(
            _err,
            f"{results}: task {task!r} iteration {iteration} has no finding of rule {rule!r} "
            f"(rules with findings: {', '.join(with_findings) or 'none'})",
        )
    target = file if file is not None else results.parent / DEFAULT_DISMISSALS_FILE
    try:
        append_dismissal(target, entry)
    except DismissalFileError as exc:
        raise bad_input(_err, str(exc)) from None
    except OSError as exc:
        raise bad_input(_err, f"{target}: cannot write: {exc.strerror or exc}") from None
    _out.print(
        f"dismissed rule {rule!r} on {task}#{iteration} ({reviewer}, {entry.date}); recorded in "
        f"{target}. Apply with: benchguard score {results} --dismissals {target}"
    )


def _dismissable(results: Path) -> tuple[ResultsDocument, str]:
    """The scored document whose findings a dismissal names, and its run id: a results
    file as it is; for another tool's log, the results ``score`` wrote for it."""
    item = _read_input(results)
    if not item.subdir:
        return item.document, item.manifest.run_id
    scored = item.target / RESULTS_FILENAME
    if not scored.is_file():
        raise ResultsFileError(
            results,
            f"not scored yet ({scored} is missing): run benchguard score {results} first, "
            "so the dismissal names findings the scan really made",
        )
    return read_results(scored), item.manifest.run_id


def _find_report(
    results: Path, document: ResultsDocument, task: str, iteration: int
) -> dict[str, Any]:
    for record in document.records:
        if (
            isinstance(record, dict)
            and record_task_folder(record) == task
            and record_iteration(record) == iteration
        ):
            report = record.get("cheating_report")
            return report if isinstance(report, dict) else {}
    folders = [record_task_folder(r) for r in document.records if isinstance(r, dict)]
    raise ResultsFileError(
        results,
        f"no record for task {task!r} iteration {iteration}{did_you_mean(task, folders)}",
    )


def _report_rules(report: dict[str, Any]) -> list[str]:
    """Rule ids with findings on the report, dismissed ones included (a second reviewer
    may add their own dismissal)."""
    findings = report.get("findings")
    dismissed = report.get("dismissed")
    candidates: list[Any] = list(findings) if isinstance(findings, list) else []
    for item in dismissed if isinstance(dismissed, list) else []:
        if isinstance(item, dict):
            candidates.append(item.get("finding"))
    return sorted(
        {f["rule"] for f in candidates if isinstance(f, dict) and isinstance(f.get("rule"), str)}
    )


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""
    app.command("score")(score)
    app.command("aggregate")(aggregate_cmd)
    app.command("leaderboard")(leaderboard)
    app.command("dismiss")(dismiss)
