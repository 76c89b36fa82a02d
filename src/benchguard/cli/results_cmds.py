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

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from benchguard.cli import score_cmds
from benchguard.cli._board_view import print_board
from benchguard.cli._help import choices
from benchguard.cli._output import (
    fail,
    plain_console,
    print_warning,
)
from benchguard.cli._view import print_table
from benchguard.errors import BenchguardError
from benchguard.results.aggregate import (
    ROWS_FILENAME,
)
from benchguard.results.leaderboard import (
    UNVERIFIED_POLICIES,
    render_task_table,
)
from benchguard.scoring.zeroes import DEFAULT_REVIEW_POLICY, DEFAULT_UNVERIFIED_POLICY
from benchguard.workflows.aggregate import aggregate_tree
from benchguard.workflows.dismiss import DEFAULT_DISMISSALS_FILE, DismissOptions, dismiss_finding
from benchguard.workflows.publish import parse_policy, publish

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
        done = dismiss_finding(DismissOptions(**locals()))
    except BenchguardError as exc:
        raise fail(_err, exc) from None
    _out.print(
        f"dismissed rule {rule!r} on {task}#{iteration} ({reviewer}, {done.entry.date}); "
        f"recorded in {done.target}. Apply with: benchguard score {results} --dismissals "
        f"{done.target}"
    )


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""
    app.command("score")(score_cmds.score)
    app.command("aggregate")(aggregate_cmd)
    app.command("leaderboard")(leaderboard)
    app.command("dismiss")(dismiss)
