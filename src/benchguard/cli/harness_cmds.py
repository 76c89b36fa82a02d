"""``benchguard run``: run an agent on a directory of tasks, detect, gate and publish.

Thin: it parses flags, checks everything that can be checked before an agent starts
(tasks, agent config, rules file, sandbox), then hands over to ``harness.runner``.
Bad input exits 2 with a message naming the file or flag; it never shows a traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchguard.cli._engine import SchedulerOption, WorkersOption
from benchguard.cli._output import bad_input, fail, labelled, plain_console, print_warning
from benchguard.cli._profiles import ProfilesOption, one_profile_for_run
from benchguard.cli._run_view import AGENT_WORDS, plain_logging, run_line
from benchguard.errors import BadInputError, BenchguardError
from benchguard.harness import integrity
from benchguard.harness.audit import AUDIT_MODES, AuditSettings, AuditUnavailable, probe_strace
from benchguard.harness.fanotify import require_fanotify
from benchguard.harness.runner import (
    BatchResult,
    Job,
    SandboxMode,
)
from benchguard.records import RunRecord
from benchguard.workflows.resume import load_command, runs_done, save_command
from benchguard.workflows.run import HOME_ENV, NoticeKind, RunRequest, prepare_run, run_prepared


def run(
    tasks_dir: Annotated[
        Path | None,
        typer.Argument(
            help="Directory of <folder>/task.yaml files (not needed with --resume RUN_DIR).",
            show_default=False,
        ),
    ] = None,
    agent: Annotated[
        str | None,
        typer.Option(
            "--agent",
            help="Agent YAML path, or a name (benchguard-agent); required unless --resume.",
            show_default=False,
        ),
    ] = None,
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
            help="System audit of the agent's file access: fanotify (root), strace, none, "
            "or auto (fanotify as root, else strace where it can trace, else none).",
            metavar="[auto|fanotify|strace|none]",
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
    unconfined: Annotated[
        bool,
        typer.Option(
            "--unconfined",
            help="Run agents without Landlock confinement where the kernel has none "
            "(rows and the leaderboard say 'unconfined').",
        ),
    ] = False,
    home_mode: Annotated[
        str,
        typer.Option(
            "--home-mode",
            help="fresh: each run gets its own copy-on-write home made from --home, "
            "never seen by another run; persistent: runs share --home itself.",
        ),
    ] = "fresh",
    discard_home_writes: Annotated[
        bool,
        typer.Option(
            "--discard-home-writes",
            help="Fresh home: do not keep what each run wrote to its home "
            "(kept by default under the run directory's home-writes/).",
        ),
    ] = False,
    quiet: Annotated[bool, typer.Option("--quiet", help="No progress bar.")] = False,
    resume: Annotated[
        Path | None,
        typer.Option(
            "--resume",
            help="Finish an interrupted batch: run only the runs RUN_DIR's journal lacks. "
            "Alone, the command is read from RUN_DIR; with TASKS_DIR and --agent, they must "
            "match the first command's.",
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
    given = dict(locals())
    given.pop("console")
    quiet, resume = given.pop("quiet"), given.pop("resume")
    try:
        fields = command_fields(given, resume)
    except BenchguardError as exc:
        raise fail(console, exc) from None
    _run_batch(console, fields, quiet=quiet, resume=resume)


def _run_batch(
    console: Console, fields: dict[str, Any], *, quiet: bool, resume: Path | None
) -> None:
    """The batch ``fields`` describe (the flags, or the command a run directory holds)."""
    sandbox, audit, protect = fields["sandbox"], fields["audit"], fields["protect"]
    # A stored command holds the one profile the batch used; the flag, a list of them.
    profile = [fields["profile"]] if isinstance(fields["profile"], str) else fields["profile"]
    iterations = fields["iterations"]
    if sandbox not in ("none", "bwrap"):
        raise bad_input(console, f"--sandbox {sandbox!r}: allowed values are none, bwrap")
    sandbox_mode: SandboxMode = "bwrap" if sandbox == "bwrap" else "none"
    audit_settings = _audit_settings(console, audit, protect or [])
    home_mode = fields.get("home_mode", "fresh")
    if home_mode not in ("fresh", "persistent"):
        raise bad_input(console, f"--home-mode {home_mode!r}: allowed values are fresh, persistent")

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
        tasks_dir=Path(fields["tasks_dir"]),
        agent=str(fields["agent"]),
        iterations=iterations,
        jobs=fields["jobs"],
        sandbox=sandbox_mode,
        out=Path(fields["out"]),
        home=_path(fields["home"]),
        profile=chosen_profile,
        rules=_path(fields["rules"]),
        detect=fields["detect"],
        inventory=fields["inventory"],
        inventory_roots=_paths(fields["inventory_roots"]),
        judge=fields["judge"],
        audit=audit_settings,
        engine=fields["engine"],
        scheduler=fields["scheduler"],
        workers=fields["workers"],
        shared_inputs=fields["shared_inputs"],
        unconfined=bool(fields.get("unconfined", False)),
        home_mode="fresh" if home_mode == "fresh" else "persistent",
        keep_home_writes=not fields.get("discard_home_writes", False),
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
        # A resumed batch starts at the runs its journal already holds.
        already = runs_done(resume) if resume is not None else 0
        bar = progress.add_task(
            f"{prepared.settings.agent.name}", total=total, completed=min(already, total)
        )

        def done(job: Job, record: RunRecord) -> None:
            words = AGENT_WORDS.get(str(record.status), str(record.status))
            progress.update(bar, advance=1, description=f"{job.task.folder}: {words}")

        try:
            result = run_prepared(prepared, on_done=done, resume=resume)
        except BenchguardError as exc:
            raise fail(console, exc) from None
    for message in result.errors:
        print_warning(console, message)
    try:
        save_command(result.run_dir, {**fields, "profile": chosen_profile})
    except (OSError, BenchguardError) as exc:
        print_warning(console, f"{result.run_dir}: cannot record the command for --resume: {exc}")
    _summary(console, result)
    typer.echo(str(result.run_dir))
    if result.exit_code != 0:
        raise typer.Exit(result.exit_code)


def command_fields(given: dict[str, Any], resume: Path | None) -> dict[str, Any]:
    """The flags as given; with ``--resume RUN_DIR`` and neither TASKS_DIR nor --agent,
    the command RUN_DIR recorded. One of the two without the other is bad input."""
    if given["tasks_dir"] is not None and given["agent"] is not None:
        return given
    if resume is None:
        missing = "TASKS_DIR" if given["tasks_dir"] is None else "--agent"
        raise BadInputError(f"missing {missing} (or give --resume RUN_DIR alone)")
    if given["tasks_dir"] is not None or given["agent"] is not None:
        raise BadInputError(
            "with --resume, give both TASKS_DIR and --agent as the first time, or neither "
            "(the run directory holds the command)"
        )
    return load_command(resume).model_dump()


def _path(value: str | Path | None) -> Path | None:
    return None if value is None else Path(value)


def _paths(values: list[Any] | None) -> list[Path] | None:
    return None if values is None else [Path(v) for v in values]


def _audit_settings(console: Console, mode: str, protect: list[Path]) -> AuditSettings:
    if mode not in ("auto", *AUDIT_MODES):
        raise bad_input(
            console, f"--audit {mode!r}: allowed values are auto, fanotify, strace, none"
        )
    paths = tuple(Path(os.path.abspath(os.path.expanduser(p))) for p in protect)
    if mode == "none":
        return AuditSettings("none", protect=paths)
    if mode in ("auto", "fanotify"):
        try:
            require_fanotify()
            return AuditSettings("fanotify", protect=paths)
        except AuditUnavailable as exc:
            if mode == "fanotify":
                raise bad_input(console, str(exc)) from None
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
