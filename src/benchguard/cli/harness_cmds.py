"""``benchguard run``: run an agent on a directory of tasks, detect, gate and publish.

Thin: the options become a :class:`~benchguard.workflows.run_command.RunOptions` (one
field per parameter, of the same name), :func:`~benchguard.workflows.run_command.run_command`
checks everything that can be checked before an agent starts (tasks, agent config,
rules file, sandbox, audit) and runs the batch, :mod:`benchguard.cli._run_view` shows
its progress and prints each run's line; the last line of stdout is the run directory.
Bad input exits 2 with a message naming the file or flag; it never shows a traceback.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from benchguard.cli._engine import SchedulerOption, WorkersOption
from benchguard.cli._output import fail, plain_console
from benchguard.cli._profiles import ProfilesOption
from benchguard.cli._run_view import RunView, plain_logging, print_run
from benchguard.errors import BenchguardError
from benchguard.harness import integrity
from benchguard.workflows.run import HOME_ENV
from benchguard.workflows.run_command import RunOptions, run_command


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
    disk_budget: Annotated[
        str,
        typer.Option(
            "--disk-budget",
            help="What each run's writable space (workspace, home, tmp, agent state) may "
            "hold, e.g. 2GiB or 512MiB; a run that reaches it is stopped and errors "
            "(docs/harness.md, 'Disk budget').",
        ),
    ] = "2GiB",
    memory_budget: Annotated[
        str | None,
        typer.Option(
            "--memory-budget",
            help="What each run's processes may hold in memory, e.g. 512M or 4G; the "
            "kernel OOM-kills within the run at its limit, and the run errors. Default: "
            "three quarters of the machine's memory divided by -j "
            "(docs/harness.md, 'Memory limit per run').",
            show_default=False,
        ),
    ] = None,
    allow_host_network: Annotated[
        bool,
        typer.Option(
            "--allow-host-network",
            help="Give a task or agent asking for network: true the host's network, "
            "where concurrent runs' loopback servers are reachable (refused without it; "
            "the manifest, rows and leaderboard say 'host network').",
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
    given = dict(locals())
    quiet = given.pop("quiet")
    # Markup off: task names, paths and error texts print as themselves.
    console = plain_console(stderr=True)
    plain_logging()
    with RunView(console, quiet=quiet) as view:
        try:
            result = run_command(RunOptions(**given), view)
        except BenchguardError as exc:
            # Printed above the progress bar, as the bar stops.
            raise fail(console, exc) from None
    print_run(console, result)
    typer.echo(str(result.batch.run_dir))
    if result.exit_code != 0:
        raise typer.Exit(result.exit_code)


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""
    app.command(name="run")(run)
