"""``benchguard check-run RUN_DIR...``: harness integrity re-checked on finished runs.

Thin: it calls ``workflows.check_run`` and prints a summary (or ``--json``). Exit
codes: 0 every run was handed exactly its task's prompt, 1 a run was not (or what it
was handed cannot be verified), 2 bad input (a missing directory, no results.json, an
unreadable task directory). Identical deliverables across setups are listed, never an
exit code.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer

from benchguard.cli._output import fail, plain_console
from benchguard.errors import BenchguardError
from benchguard.workflows.check_run import CheckRunRequest, CheckRunResult, check_runs

_err = plain_console(stderr=True)


def check_run_command(
    run_dirs: Annotated[
        list[Path],
        typer.Argument(
            help="Batch directories (holding results.json) or --out directories holding batches.",
            show_default=False,
        ),
    ],
    tasks: Annotated[
        Path | None,
        typer.Option(
            "--tasks",
            help="The task directory to verify against (default: each batch's "
            "command.json tasks_dir).",
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the result as JSON.")] = False,
) -> None:
    """Re-verify what each run's agent was handed as its prompt against the task files,
    and list runs of one task by different setups with byte-identical deliverables."""
    try:
        result = check_runs(CheckRunRequest(tuple(run_dirs), tasks))
    except BenchguardError as exc:
        raise fail(_err, exc) from None
    if as_json:
        typer.echo(json.dumps(result.to_json(), indent=2))
    else:
        _print(result)
    if result.exit_code:
        raise typer.Exit(result.exit_code)


def _print(result: CheckRunResult) -> None:
    for finding in result.prompt_findings:
        typer.echo(f"PROMPT {finding.run.label} ({finding.run.setup}, {finding.run.batch}):")
        for problem in finding.problems:
            typer.echo(f"  {problem}")
    for ref in result.not_handed:
        typer.echo(f"NO PROMPT {ref.label} ({ref.setup}): its argv names no {{prompt}}")
    for group in result.identical:
        setups = sorted({r.setup for r in group.runs})
        typer.echo(
            f"IDENTICAL deliverables of {group.task} ({', '.join(group.files)}) across "
            f"{len(setups)} setups: {', '.join(setups)}"
        )
        for run in group.runs:
            typer.echo(f"  {run.label} ({run.setup}, {run.batch})")
    typer.echo(
        f"{result.runs} run(s) in {len(result.batches)} batch(es): {result.intact} handed "
        f"exactly the task's prompt, {len(result.prompt_findings)} not, "
        f"{len(result.not_handed)} handed none; "
        f"{len(result.identical)} group(s) of identical deliverables across setups"
    )


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""
    app.command(name="check-run")(check_run_command)
