"""``benchguard run``: run an agent on a directory of tasks, detect, gate and publish.

Thin: it parses flags, checks everything that can be checked before an agent starts
(tasks, agent config, rules file, sandbox), then hands over to ``harness.runner``.
Bad input exits 2 with a message naming the file or flag; it never shows a traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchguard.cli._engine import SchedulerOption, WorkersOption
from benchguard.cli._output import bad_input, fail, labelled, plain_console, print_warning
from benchguard.cli._profiles import ProfilesOption, one_profile_for_run
from benchguard.cli._run_view import plain_logging, run_line
from benchguard.errors import BenchguardError
from benchguard.harness import integrity
from benchguard.harness.audit import AUDIT_MODES, AuditSettings, AuditUnavailable, probe_strace
from benchguard.harness.runner import (
    BatchResult,
    Job,
    SandboxMode,
)
from benchguard.records import RunRecord
from benchguard.workflows.run import HOME_ENV, NoticeKind, RunRequest, prepare_run, run_prepared


def run(
    tasks_dir: Annotated[Path, typer.Argument(help="Directory of <folder>/task.yaml files.")],
    agent: Annotated[
        str, typer.Option("--agent", help="Agent YAML path, or a name (benchguard-agent).")
    ],
    iterations: Annotated[int, typer.Option("--iterations", min=1, help="Runs per task.")] = 1,
    jobs: Annotated[int, typer.Option("-j", "--jobs", min=1, help="Runs in parallel.")] = 1,
    sandbox: Annotated[
        str,
        typer.Option(
            "--sandbox",
            help="bwrap: bubblewrap isolation; none: on the host.",
            metavar="[none|bwrap]",
        ),
    ] = "none",
    out: Annotated[
        Path,
        typer.Option("--out", help="Results root directory (created with any missing parents)."),
    ] = Path("results"),
    home: Annotated[
        Path | None,
        typer.Option("--home", help=f"Persistent agent home (env {HOME_ENV}).", show_default=False),
    ] = None,
    profile: ProfilesOption = None,
    rules: Annotated[
        Path | None, typer.Option("--rules", help="Extra rules YAML (env BENCHGUARD_CHEAT_RULES).")
    ] = None,
    detect: Annotated[
        bool | None,
        typer.Option(
            "--detect/--no-detect",
            help="Cheat detection (env BENCHGUARD_CHEAT_DETECT).",
            show_default=False,
        ),
    ] = None,
    inventory: Annotated[
        bool | None,
        typer.Option(
            "--inventory/--no-inventory",
            help="Home inventory (env BENCHGUARD_CHEAT_INVENTORY).",
            show_default=False,
        ),
    ] = None,
    inventory_roots: Annotated[
        list[Path] | None,
        typer.Option(
            integrity.INVENTORY_ROOT_FLAG,
            help="Another directory to inventory besides the home, e.g. /tmp or the "
            "workspace parent (repeatable; env BENCHGUARD_INVENTORY_ROOTS, "
            f"'{os.pathsep}'-separated). Must exist.",
            show_default=False,
        ),
    ] = None,
    judge: Annotated[
        str | None,
        typer.Option("--judge", help="Judge provider for expected_output/rubric (default none)."),
    ] = None,
    audit: Annotated[
        str,
        typer.Option(
            "--audit",
            help="System audit of the agent's file access: auto is strace where it can "
            "trace, else none.",
            metavar="[auto|strace|none]",
        ),
    ] = "auto",
    protect: Annotated[
        list[Path] | None,
        typer.Option(
            "--protect",
            help="Another path the audit reports any access to (repeatable).",
            show_default=False,
        ),
    ] = None,
    engine: Annotated[
        str | None,
        typer.Option(
            "--engine",
            help="serial (this machine, -j runs at once; the default) or dask (each run on "
            "a worker of a distributed cluster; see docs/distributed-runs.md).",
            show_default=False,
        ),
    ] = None,
    scheduler: SchedulerOption = None,
    workers: WorkersOption = None,
    shared_inputs: Annotated[
        bool,
        typer.Option(
            "--shared-inputs",
            help="dask only: the workers read the tasks, agent and home from the same "
            "paths (a shared file system), digest-checked, instead of being sent them.",
        ),
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            help="Finish an interrupted batch: run only the runs RUN_DIR's journal lacks "
            "(same tasks, agent, --iterations and --sandbox as the first command).",
            show_default=False,
            metavar="RUN_DIR",
        ),
    ] = None,
) -> None:
    """Run AGENT on every task in TASKS_DIR, then detect, gate, score and write results.

    Exit codes: 0 every run completed and none was flagged; 1 a run was flagged or
    gated (wins over 3); 3 a run errored or was interrupted, a planned run never
    started, or a task was skipped; 2 bad input (nothing ran) (docs/exit-codes.md).
    """
    # Markup off: task names, paths and error texts print as themselves.
    console = plain_console(stderr=True)
    plain_logging()
    if sandbox not in ("none", "bwrap"):
        raise bad_input(console, f"--sandbox {sandbox!r}: allowed values are none, bwrap")
    sandbox_mode: SandboxMode = "bwrap" if sandbox == "bwrap" else "none"
    audit_settings = _audit_settings(console, audit, protect or [])

    def notify(kind: NoticeKind, message: str) -> None:
        if kind == "skipped task":
            console.print(labelled("skipped task: ", "yellow", message), soft_wrap=True)
        else:
            print_warning(console, message)

    try:
        chosen_profile = one_profile_for_run(profile)
    except BenchguardError as exc:
        raise fail(console, exc) from None
    request = RunRequest(
        tasks_dir=tasks_dir,
        agent=agent,
        iterations=iterations,
        jobs=jobs,
        sandbox=sandbox_mode,
        out=out,
        home=home,
        profile=chosen_profile,
        rules=rules,
        detect=detect,
        inventory=inventory,
        inventory_roots=inventory_roots,
        judge=judge,
        audit=audit_settings,
        engine=engine,
        scheduler=scheduler,
        workers=workers,
        shared_inputs=shared_inputs,
    )
    try:
        prepared = prepare_run(request, notify)
    except BenchguardError as exc:
        raise fail(console, exc) from None
    total = len(prepared.tasks) * iterations
    with Progress(
        # The description is a task folder: shown verbatim, never parsed as markup.
        TextColumn("{task.description}", style="bold", markup=False),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=quiet,
        transient=False,
    ) as progress:
        bar = progress.add_task(f"{prepared.settings.agent.name}", total=total)

        def done(job: Job, record: RunRecord) -> None:
            progress.update(bar, advance=1, description=f"{job.task.folder} {record.status}")

        try:
            result = run_prepared(prepared, on_done=done, resume=resume)
        except BenchguardError as exc:
            raise fail(console, exc) from None
    for message in result.errors:
        print_warning(console, message)
    _summary(console, result)
    typer.echo(str(result.run_dir))
    if result.exit_code != 0:
        raise typer.Exit(result.exit_code)


def _audit_settings(console: Console, mode: str, protect: list[Path]) -> AuditSettings:
    if mode not in ("auto", *AUDIT_MODES):
        raise bad_input(console, f"--audit {mode!r}: allowed values are auto, strace, none")
    paths = tuple(Path(os.path.abspath(os.path.expanduser(p))) for p in protect)
    if mode == "none":
        return AuditSettings("none", protect=paths)
    try:
        strace = probe_strace()
    except AuditUnavailable as exc:
        if mode == "strace":
            raise bad_input(console, str(exc)) from None
        return AuditSettings("none", protect=paths)
    return AuditSettings("strace", strace=strace, protect=paths)


def _summary(console: Console, result: BatchResult) -> None:
    """One line per run, saying what its row says (outcome, integrity status, and why
    it did not complete), then what never ran and why the batch stopped."""
    checks = {(r.folder, r.iteration): r.verification_report for r in result.records}
    for row in result.rows:
        line = run_line(row, checks.get((row.task_folder, row.iteration), ()))
        console.print(line, soft_wrap=True)
    manifest = result.manifest
    if manifest.not_run:
        console.print(
            f"not run ({len(manifest.not_run)}): {', '.join(manifest.not_run)}", soft_wrap=True
        )
    if result.interrupted_by is not None:
        console.print(
            f"interrupted by {result.interrupted_by}: finished runs are written; "
            f"finish with --resume {result.run_dir}",
            soft_wrap=True,
        )


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""
    app.command(name="run")(run)
