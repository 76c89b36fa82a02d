"""``benchguard audit-tasks``: which tasks a cheat passes, before any agent runs.

Thin: it parses flags, calls ``workflows.audit_tasks`` and prints a table (one block
per task) or ``--json``. Exit codes: 0 no task is hackable, 1 one is, 2 bad input.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated

import typer

from benchguard.cli._output import bad_input, fail, plain_console, print_warning
from benchguard.errors import BenchguardError
from benchguard.harness.audit import AuditSettings
from benchguard.harness.runner import SandboxMode
from benchguard.taskaudit.formats import junit_xml, sarif_log
from benchguard.workflows.audit_tasks import AuditTasksRequest, TaskAudit, audit_tasks
from benchguard.workflows.run import NoticeKind

FORMATS = ("table", "json", "sarif", "junit")


def audit_tasks_command(
    tasks_dir: Annotated[
        Path,
        typer.Argument(
            help="Directory of <folder>/task.yaml files (benchguard or Terminal-Bench) "
            "or Harbor <folder>/task.toml folders."
        ),
    ],
    jobs: Annotated[int, typer.Option("-j", "--jobs", min=1, help="Runs in parallel.")] = 1,
    sandbox: Annotated[
        str,
        typer.Option("--sandbox", help="As for run: bwrap or none.", metavar="[none|bwrap]"),
    ] = "none",
    home: Annotated[
        Path | None,
        typer.Option(
            "--home", help="Agent home (default: a fresh one per exploit).", show_default=False
        ),
    ] = None,
    out: Annotated[
        Path | None,
        typer.Option("--out", help="Keep the exploit runs' results here.", show_default=False),
    ] = None,
    exploits: Annotated[
        Path | None,
        typer.Option(
            "--exploits", help="A directory of your own exploits (*.py).", show_default=False
        ),
    ] = None,
    only: Annotated[
        list[str] | None,
        typer.Option("--exploit", help="Run only this exploit (repeatable).", show_default=False),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the audit as JSON.")] = False,
    output_format: Annotated[
        str,
        typer.Option(
            "--format", help="table, json, sarif or junit.", metavar="[table|json|sarif|junit]"
        ),
    ] = "table",
) -> None:
    """Lint every task and run a no-op agent and the exploit library on each; name the
    tasks whose checks a cheat passes (credit counted before the integrity gate).

    Exit codes: 0 no task is hackable; 1 a task is hackable; 2 bad input, or a
    Terminal-Bench/Harbor task that could not be audited here.
    """
    console = plain_console(stderr=True)
    logging.basicConfig(level=logging.ERROR, format="%(levelname)s %(name)s: %(message)s")
    if sandbox not in ("none", "bwrap"):
        raise bad_input(console, f"--sandbox {sandbox!r}: allowed values are none, bwrap")
    mode: SandboxMode = "bwrap" if sandbox == "bwrap" else "none"
    chosen = "json" if as_json else output_format
    if chosen not in FORMATS:
        raise bad_input(
            console, f"--format {output_format!r}: allowed values are {', '.join(FORMATS)}"
        )
    if not tasks_dir.is_dir():
        raise bad_input(console, f"{tasks_dir}: not a directory of tasks")

    def notify(kind: NoticeKind, message: str) -> None:
        print_warning(console, message)

    request = AuditTasksRequest(
        tasks_dir=tasks_dir,
        jobs=jobs,
        sandbox=mode,
        home=home,
        out=out,
        exploits_dir=exploits,
        only=tuple(only or ()),
        audit=AuditSettings("none"),
    )
    try:
        result = audit_tasks(request, notify)
    except BenchguardError as exc:
        raise fail(console, exc) from None
    if chosen == "json":
        typer.echo(json.dumps(result.to_json(), indent=2))
    elif chosen == "sarif":
        from benchguard import __version__

        typer.echo(json.dumps(sarif_log(result.to_json(), tool_version=__version__), indent=2))
    elif chosen == "junit":
        typer.echo(junit_xml(result.to_json()), nl=False)
    else:
        _table(result)
    if result.exit_code:
        raise typer.Exit(result.exit_code)


def _table(result: TaskAudit) -> None:
    for task in result.tasks:
        if task.hackable:
            verdict = "HACKABLE by " + ", ".join(task.hacks)
        elif task.unaudited:
            verdict = "NOT AUDITED: " + task.unaudited
        else:
            verdict = "sound"
        kind = "" if task.format == "benchguard" else f" ({task.format})"
        typer.echo(f"{task.name}{kind}: {verdict}")
        for finding in task.lint:
            typer.echo(
                f"  lint {finding.id}{' (' + finding.check + ')' if finding.check else ''}: {finding.message}"
            )
        for outcome in task.exploits:
            if outcome.credit > 0:
                accepted = ", ".join(outcome.accepted) or "-"
                typer.echo(
                    f"  {outcome.exploit}: correctness {outcome.credit:.2f}, accepted by {accepted}"
                )
        skipped = [o.exploit for o in task.exploits if o.not_applicable]
        if skipped:
            typer.echo(
                f"  not applicable (not run; its run would be the no-op's): {', '.join(skipped)}"
            )
        if task.reference is not None:
            word = "failed" if task.reference_failed else "passed"
            typer.echo(f"  reference solution {word}: correctness {task.reference.credit:.2f}")
        for ack in task.acknowledged:
            typer.echo(f"  acknowledged {ack['id']}: {ack['reason']}")
        for reading in task.reading:
            typer.echo(
                f"  {reading}: answered from the task file (the tasks were reachable: use --sandbox bwrap)"
            )
        for destructive in task.destructive_uncaught:
            typer.echo(f"  {destructive}: changed the workspace and no safeguard failed")
    _identical(result)
    hackable = sum(t.hackable for t in result.tasks)
    unaudited = sum(bool(t.unaudited) and not t.hackable for t in result.tasks)
    typer.echo(
        f"{hackable} of {len(result.tasks)} task(s) hackable"
        + (f", {unaudited} not audited" if unaudited else "")
        + f"; {len(result.exploits)} exploits, sandbox {result.sandbox}"
    )


# Groups of identical deliverables the table prints; the rest are in --json.
TABLE_GROUPS = 20


def _identical(result: TaskAudit) -> None:
    groups = result.identical
    if not groups:
        return
    typer.echo(f"identical deliverables ({len(groups)} groups of byte-identical files):")
    for group in groups[:TABLE_GROUPS]:
        files = ", ".join(f["path"] for f in group["files"])
        probes = ", ".join(f"{p['task']}:{p['exploit']}" for p in group["probes"])
        typer.echo(f"  {group['sha256'][:12]} ({files}): {probes}")
    if len(groups) > TABLE_GROUPS:
        typer.echo(f"  ... {len(groups) - TABLE_GROUPS} more (--json)")


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""
    app.command(name="audit-tasks")(audit_tasks_command)
