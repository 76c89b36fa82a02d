"""``benchguard score | aggregate | leaderboard | dismiss``: publication commands.

Thin: each parses, calls one workflow, prints (``score`` itself lives in
:mod:`benchguard.cli.score_cmds`; it is registered here, in its family's order). Exit
codes are the project's one policy (docs/exit-codes.md): ``score`` 0 clean, 1 a row
gated or flagged, 2 bad input (a message naming the file and what is wrong, never a
traceback), 3 a record not rescored; ``aggregate`` 3 when a rows file was skipped.
``score`` takes many files or trees: a bad one is reported (exit 2) and every good one
is still written.
"""

from __future__ import annotations

import datetime as dt
import json
import sys
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError

from benchguard.cli import score_cmds
from benchguard.cli._board_view import print_board
from benchguard.cli._help import choices
from benchguard.cli._output import (
    bad_input,
    fail,
    plain_console,
    print_warning,
)
from benchguard.cli._view import print_table
from benchguard.errors import BenchguardError
from benchguard.results.aggregate import (
    ROWS_FILENAME,
)
from benchguard.results.dismissals import (
    Dismissal,
    append_dismissal,
)
from benchguard.results.io import (
    ResultsDocument,
    ResultsFileError,
    read_results,
)
from benchguard.results.leaderboard import (
    DEFAULT_REVIEW_POLICY,
    DEFAULT_UNVERIFIED_POLICY,
    UNVERIFIED_POLICIES,
    render_task_table,
)
from benchguard.results.rows import (
    record_iteration,
    record_task_folder,
)
from benchguard.suggest import did_you_mean
from benchguard.workflows.aggregate import aggregate_tree
from benchguard.workflows.publish import parse_policy, publish
from benchguard.workflows.score import (
    RESULTS_FILENAME,
    read_score_input,
)

DEFAULT_DISMISSALS_FILE = "dismissals.yaml"

# Markup off: paths, task folders and setup ids in these files print as themselves.
_out = plain_console()
_err = plain_console(stderr=True)


def _warn(message: str) -> None:
    print_warning(_err, message)


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
    """Merge per-task rows.json files into one batch: rows.json and manifests.json.

    Exit codes: 0 merged, 2 bad input, 3 a rows file was skipped (docs/exit-codes.md).
    """
    try:
        outcome = aggregate_tree(root, out_dir=out_dir, run_id=run_id, t=t)
    except BenchguardError as exc:
        raise fail(_err, exc) from None
    result = outcome.result
    _out.print(
        f"merged {len(result.sources)} file(s) into {len(result.rows)} row(s) across "
        f"{len(result.manifests)} setup(s): {outcome.target / ROWS_FILENAME}",
        soft_wrap=True,
    )
    for message in result.problems:
        _warn(f"skipped: {message}")
    if outcome.exit_code:
        raise typer.Exit(code=outcome.exit_code)


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
    verbose: Annotated[
        bool,
        typer.Option(
            "-v", "--verbose", help="List every reason of every gated run, paths in full."
        ),
    ] = False,
    unverified: Annotated[
        str,
        typer.Option(
            "--unverified",
            help="How the ranked mean treats no_data and unverified runs: zero (count "
            "them as 0), include (with their own outcome) or exclude (leave them out).",
            metavar=choices(UNVERIFIED_POLICIES),
        ),
    ] = DEFAULT_UNVERIFIED_POLICY,
    review: Annotated[
        str,
        typer.Option(
            "--review",
            help="How the ranked mean treats runs sent to review (only weak findings): "
            "include (with their own outcome, marked), zero (count them as 0) or exclude.",
        ),
    ] = DEFAULT_REVIEW_POLICY,
) -> None:
    """Rank setups by mean outcome (± standard error), with gated runs shown as zeros
    with their kind. Runs nobody could verify count as 0 unless --unverified says
    otherwise; runs sent to review count with their own outcome, marked, unless
    --review says otherwise; the table and the page say which policies ranked them.

    Exit codes: 0 published, 2 bad input (docs/exit-codes.md).
    """
    try:
        board = publish(
            rows_files,
            policy=parse_policy(unverified),
            html_file=html_file,
            review_policy=parse_policy(review, "--review"),
        )
    except BenchguardError as exc:
        raise fail(_err, exc) from None
    if as_json:
        sys.stdout.write(json.dumps(board.to_json(), indent=2, ensure_ascii=False) + "\n")
        return
    print_board(_out, board, verbose=verbose)
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
    """Record a reviewed dismissal of one rule's findings on one record.

    Exit codes: 0 recorded, 2 bad input (docs/exit-codes.md).
    """
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
    except BenchguardError as exc:
        raise fail(_err, exc) from None
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
    except BenchguardError as exc:
        raise fail(_err, exc) from None
    except OSError as exc:
        raise bad_input(_err, f"{target}: cannot write: {exc.strerror or exc}") from None
    _out.print(
        f"dismissed rule {rule!r} on {task}#{iteration} ({reviewer}, {entry.date}); recorded in "
        f"{target}. Apply with: benchguard score {results} --dismissals {target}"
    )


def _dismissable(results: Path) -> tuple[ResultsDocument, str]:
    """The scored document whose findings a dismissal names, and its run id: a results
    file as it is; for another tool's log, the results ``score`` wrote for it."""
    item = read_score_input(results)
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
    app.command("score")(score_cmds.score)
    app.command("aggregate")(aggregate_cmd)
    app.command("leaderboard")(leaderboard)
    app.command("dismiss")(dismiss)
