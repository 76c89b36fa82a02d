"""``benchguard run``: run an agent on a directory of tasks, detect, gate and publish.

Thin: it parses flags, checks everything that can be checked before an agent starts
(tasks, agent config, rules file, sandbox), then hands over to ``harness.runner``.
Bad input exits 2 with a message naming the file or flag; it never shows a traceback.
"""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from benchguard.cli._output import bad_input, fail, labelled, plain_console, print_warning
from benchguard.cli._settings import values
from benchguard.detection.rules import DEFAULT_PROFILE
from benchguard.errors import ConfigError
from benchguard.harness import integrity
from benchguard.harness.agents.config import AgentConfigError, resolve_agent
from benchguard.harness.audit import AUDIT_MODES, AuditSettings, AuditUnavailable, probe_strace
from benchguard.harness.identity import IdentityError, agent_identity
from benchguard.harness.journal import JournalError
from benchguard.harness.preflight import PreflightError, preflight
from benchguard.harness.runner import (
    BatchResult,
    BatchSettings,
    Job,
    SandboxMode,
    run_batch,
    sandbox_read_only,
)
from benchguard.harness.sandbox import (
    SandboxSelfCheckFailed,
    SandboxUnavailable,
    exposure_problems,
    probe_bwrap,
)
from benchguard.harness.tasks import TaskDirError, load_tasks
from benchguard.harness.verification import CheckSandbox
from benchguard.harness.workspace import (
    DEFAULT_AGENT_HOME,
    WorkspaceError,
    ensure_directory,
    prepare_home,
)
from benchguard.records import RunRecord
from benchguard.scoring.judge import Judge, judge_or_null

HOME_ENV = "BENCHGUARD_AGENT_HOME"


def _home_source(home: Path | None) -> tuple[str, Path]:
    """Where the agent home comes from (flag, environment or default) and its path."""
    if home is not None:
        return "--home", home
    from_env = os.environ.get(HOME_ENV)
    if from_env:
        return HOME_ENV, Path(from_env)
    return "the default agent home", DEFAULT_AGENT_HOME


def _configured(
    profile: str | None, rules: Path | None, roots: list[Path] | None
) -> tuple[str, Path | None, list[Path] | None]:
    """Profile, extra rules and inventory roots: flags, then the environment, then the
    configuration file (benchguard.toml or [tool.benchguard]), then the defaults."""
    configured = values({"profile": profile})
    if rules is None and not os.environ.get(integrity.RULES_ENV):
        rules = configured["rules"]
    if not roots and not os.environ.get(integrity.INVENTORY_ROOTS_ENV, "").strip():
        roots = list(configured["inventory_roots"]) or None
    return str(configured["profile"]), rules, roots


def run(
    tasks_dir: Annotated[Path, typer.Argument(help="Directory of <folder>/task.yaml files.")],
    agent: Annotated[
        str, typer.Option("--agent", help="Agent YAML path, or a name (benchguard-agent).")
    ],
    iterations: Annotated[int, typer.Option("--iterations", min=1, help="Runs per task.")] = 1,
    jobs: Annotated[int, typer.Option("-j", "--jobs", min=1, help="Runs in parallel.")] = 1,
    sandbox: Annotated[
        str, typer.Option("--sandbox", help="none, or bwrap (bubblewrap isolation).")
    ] = "none",
    out: Annotated[
        Path,
        typer.Option("--out", help="Results root directory (created with any missing parents)."),
    ] = Path("results"),
    home: Annotated[
        Path | None,
        typer.Option("--home", help=f"Persistent agent home (env {HOME_ENV}).", show_default=False),
    ] = None,
    profile: Annotated[
        str | None,
        typer.Option(
            "--profile",
            help=f"Detection rule profile (default: {DEFAULT_PROFILE}, or the config file's).",
            show_default=False,
        ),
    ] = None,
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
            help="System audit of the agent's file access: strace, none, or auto (strace "
            "where it can trace, else none).",
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
    started, or a task was skipped; 2 bad input (nothing ran).
    """
    # Markup off: task names, paths and error texts print as themselves.
    console = plain_console(stderr=True)
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    if sandbox not in ("none", "bwrap"):
        raise bad_input(console, f"--sandbox {sandbox!r}: allowed values are none, bwrap")
    sandbox_mode: SandboxMode = "bwrap" if sandbox == "bwrap" else "none"
    audit_settings = _audit_settings(console, audit, protect or [])
    try:
        profile, rules, inventory_roots = _configured(profile, rules, inventory_roots)
    except ConfigError as exc:
        raise fail(console, exc) from None
    try:
        settings_integrity = integrity.IntegritySettings.resolve(
            os.environ,
            detect=detect,
            inventory=inventory,
            profile=profile,
            rules_file=rules,
            inventory_roots=inventory_roots,
        )
        static_rules = integrity.load_static_rules(settings_integrity)
    except integrity.IntegrityConfigError as exc:
        raise fail(console, exc) from None
    try:
        loaded = load_tasks(tasks_dir)
    except TaskDirError as exc:
        raise fail(console, exc) from None
    for message in loaded.errors:
        console.print(labelled("skipped task: ", "yellow", message), soft_wrap=True)
    if not loaded.tasks:
        raise bad_input(console, f"{tasks_dir}: no valid task to run")
    try:
        agent_config = resolve_agent(
            agent, search_dirs=(Path("agents"), tasks_dir.parent / "agents")
        )
    except AgentConfigError as exc:
        raise fail(console, exc) from None
    bwrap = "bwrap"
    identity = None
    if sandbox_mode == "bwrap":
        try:
            bwrap = probe_bwrap()
            identity = agent_identity(os.environ)
        except (SandboxUnavailable, IdentityError) as exc:
            raise fail(console, exc) from None
    # Both directories are checked (and created) before any agent starts: a regular file
    # in the way would otherwise fail the batch halfway, with a traceback.
    home_source, home_path = _home_source(home)
    try:
        home_dir = prepare_home(home_path)
    except WorkspaceError as exc:
        raise bad_input(console, f"{home_source} {exc}") from None
    try:
        ensure_directory(out)
    except WorkspaceError as exc:
        raise bad_input(console, f"--out {exc}") from None
    try:
        integrity.check_roots_against_home(settings_integrity.inventory_roots, home_dir)
    except integrity.IntegrityConfigError as exc:
        raise fail(console, exc) from None
    if sandbox_mode == "bwrap":
        # The home is bound read-write: a home that holds the tasks would expose them.
        binds = (*sandbox_read_only(agent_config, home_dir), home_dir)
        problems = exposure_problems(binds, (tasks_dir, out))
        if problems:
            raise bad_input(console, "; ".join(problems))
    try:
        preflight(
            agent_config,
            sandbox=sandbox_mode,
            home=home_dir,
            read_only=sandbox_read_only(agent_config, home_dir),
            bwrap=bwrap,
            identity=identity,
        )
    except PreflightError as exc:
        raise bad_input(console, f"pre-flight refused the batch: {exc}") from None
    if sandbox_mode == "none" or not audit_settings.active:
        missing = [
            n
            for n, on in (("sandbox", sandbox_mode == "bwrap"), ("audit", audit_settings.active))
            if not on
        ]
        # Once per batch: rows say it too (sandboxed, evidence sources).
        print_warning(
            console,
            f"running without the {' and the '.join(missing)}: "
            + (
                "the agent can reach the tasks, results and harness files; "
                if sandbox_mode == "none"
                else ""
            )
            + (
                "nothing but its own transcript shows what it opened"
                if not audit_settings.active
                else "the audit records what it opens"
            ),
        )
    if home_dir == Path.home().resolve():
        print_warning(
            console,
            "the agent home is your own home: the agent sees your files, "
            "and every entry in it will read as a prior-run leftover (use --home)",
        )
    settings = BatchSettings(
        agent=agent_config,
        home=home_dir,
        out_dir=out,
        iterations=iterations,
        jobs=jobs,
        sandbox=sandbox_mode,
        bwrap=bwrap,
        integrity=settings_integrity,
        judge=_judge(judge, console),
        identity=identity,
        audit=audit_settings,
        check_sandbox=_check_sandbox(console, bwrap if sandbox_mode == "bwrap" else None),
    )
    total = len(loaded.tasks) * iterations
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
        bar = progress.add_task(f"{agent_config.name}", total=total)

        def done(job: Job, record: RunRecord) -> None:
            progress.update(bar, advance=1, description=f"{job.task.folder} {record.status}")

        try:
            result = run_batch(
                loaded.tasks,
                settings,
                static_rules=static_rules,
                on_done=done,
                skipped_tasks=loaded.errors,
                resume=resume,
            )
        except JournalError as exc:
            raise bad_input(console, f"--resume {exc}") from None
        except SandboxSelfCheckFailed as exc:
            raise fail(console, exc) from None
    for message in result.errors:
        print_warning(console, message)
    _summary(console, result)
    typer.echo(str(result.run_dir))
    if result.exit_code != 0:
        raise typer.Exit(result.exit_code)


def _check_sandbox(console: Console, bwrap: str | None) -> CheckSandbox | None:
    """Command checks are sandboxed wherever bubblewrap works, whatever --sandbox says."""
    try:
        found = bwrap or probe_bwrap()
        identity = agent_identity(os.environ)
    except (SandboxUnavailable, IdentityError) as exc:
        print_warning(
            console,
            f"verification commands run without a sandbox ({exc}); records say "
            "checks_sandboxed: false",
        )
        return None
    return CheckSandbox(found, identity)


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


def _judge(provider: str | None, console: Console) -> Judge | None:
    if not provider:
        return None
    chosen, reason = judge_or_null(provider, os.environ)
    if reason:
        print_warning(console, reason)
    return chosen


def _summary(console: Console, result: BatchResult) -> None:
    """One line per run, saying what its row says (outcome, integrity status, and why
    it did not complete), then what never ran and why the batch stopped."""
    for row in result.rows:
        shown = "n/a" if row.outcome_score is None else f"{row.outcome_score:.2f}"
        kinds = ",".join(row.catastrophic_kinds)
        why = f"; {row.error}" if row.error else ""
        console.print(
            f"{row.task_folder}#{row.iteration}: {row.status}, outcome {shown}, "
            f"integrity {row.integrity_status}{' (' + kinds + ')' if kinds else ''}{why}",
            soft_wrap=True,
        )
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
