"""The run workflow: check everything that can be checked before an agent starts, then
run the batch (``harness.batch.run_batch``).

``benchguard run`` parses its options, calls :func:`prepare_run` then :func:`run_prepared`
and prints; nothing here prints. What a person must know before the batch starts (a
skipped task file, running without the sandbox or the audit, the home being the
operator's own) goes to ``notify(kind, message)`` in the order it is found; every
problem that stops the batch before any agent runs is a
:class:`benchguard.errors.BenchguardError` (bad input, exit 2).
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from benchguard.detection.models import Rule
from benchguard.engines import ENGINE_NAMES, LOCAL_SCHEDULERS
from benchguard.engines.dask_engine import scheduler_address_problem
from benchguard.engines.dask_jobs import ClusterSettings
from benchguard.errors import BadInputError
from benchguard.harness import integrity
from benchguard.harness.agents.config import resolve_agent
from benchguard.harness.audit import AuditSettings
from benchguard.harness.batch import BatchResult, run_batch
from benchguard.harness.confine import MIN_ABI, Confinement, batch_confinement
from benchguard.harness.confine import exposure_problems as install_exposure
from benchguard.harness.disk_budget import (
    DEFAULT_DISK_BUDGET,
    free_space_problem,
    home_share_problem,
)
from benchguard.harness.grant_content import task_material
from benchguard.harness.grant_scan import grant_fields
from benchguard.harness.home import HomeMode, HomeSettings, home_settings_for
from benchguard.harness.home import measure as measure_home
from benchguard.harness.host_network import host_network_refusal
from benchguard.harness.identity import IdentityError, agent_identity
from benchguard.harness.job import BatchSettings, Job, SandboxMode, sandbox_read_only
from benchguard.harness.journal import JournalError
from benchguard.harness.memory_limit import below_disk_budget, memory_overcommit
from benchguard.harness.preflight import PreflightError, preflight, separation_warning
from benchguard.harness.sandbox import SandboxUnavailable, exposure_problems, probe_bwrap
from benchguard.harness.tasks import LoadedTasks, Task, load_tasks
from benchguard.harness.verification import CheckSandbox, home_checks_passing_before
from benchguard.harness.workspace import (
    DEFAULT_AGENT_HOME,
    WorkspaceError,
    ensure_directory,
    prepare_home,
)
from benchguard.records import RunRecord
from benchguard.scoring.judge import Judge, judge_or_null
from benchguard.workflows.settings import values

HOME_ENV = "BENCHGUARD_AGENT_HOME"
NoticeKind = Literal["skipped task", "warning"]
Notify = Callable[[NoticeKind, str], None]


@dataclass(frozen=True)
class RunRequest:
    """The batch as asked for (flags; the config file fills profile, rules and roots)."""

    tasks_dir: Path
    agent: str
    iterations: int = 1
    jobs: int = 1
    sandbox: SandboxMode = "none"
    out: Path = Path("results")
    home: Path | None = None
    profile: str | None = None
    rules: Path | None = None
    detect: bool | None = None
    inventory: bool | None = None
    inventory_roots: Sequence[Path] | None = None
    judge: str | None = None
    audit: AuditSettings = field(default_factory=AuditSettings)
    # serial (threads on this machine, -j of them) or dask (a distributed cluster: the
    # scheduler's address, or a local cluster of --workers processes); None: the config
    # file's engine, else serial.
    engine: str | None = None
    scheduler: str | None = None
    workers: int | None = None
    # dask only: the workers read the inputs from the same paths (digest-checked).
    shared_inputs: bool = False
    # Run agents without Landlock (only where the kernel has none; marked on rows).
    unconfined: bool = False
    # fresh: each run's home is a copy-on-write layer over the home (harness.home);
    # persistent: the home itself, as before. keep_home_writes: keep what each run wrote.
    home_mode: HomeMode = "fresh"
    keep_home_writes: bool = True
    # Grant network: true to a task or agent asking for it (harness.host_network).
    allow_host_network: bool = False
    # What each run's writable space may hold, in bytes (harness.disk_budget).
    disk_budget: int = DEFAULT_DISK_BUDGET
    # Each run's memory limit in bytes (harness.memory_limit); None: the default for
    # the -j of the machine that runs it.
    memory_budget: int | None = None
    # The agent is benchguard's own (audit-tasks' probes): its directory holds task
    # files on purpose (the reference solution it replays), so pre-flight does not
    # search its grants for them by content (harness.grant_content); by name it does.
    harness_agent: bool = False


@dataclass(frozen=True)
class PreparedRun:
    """A batch every pre-agent check passed: what to run and with which settings."""

    tasks: tuple[Task, ...]
    skipped_tasks: tuple[str, ...]
    settings: BatchSettings
    static_rules: tuple[Rule, ...]
    tasks_dir: Path = Path(".")
    # Set for --engine dask: where the jobs run.
    cluster: ClusterSettings | None = None


def prepare_run(
    request: RunRequest, notify: Notify, *, tasks: LoadedTasks | None = None
) -> PreparedRun:
    """Resolve and check the batch; raises a ``BenchguardError`` before any agent runs.

    A cluster batch (``--engine dask``) skips the checks of this machine's sandbox and
    agent: its agents run on the workers, and each worker runs them itself before it
    is given work (``workflows.run_cluster``). ``tasks``: the tasks already loaded
    (``audit-tasks`` loads them its own way)."""
    cluster = cluster_settings(request)
    profile, rules, roots = configured(request.profile, request.rules, request.inventory_roots)
    settings_integrity = integrity.IntegritySettings.resolve(
        os.environ,
        detect=request.detect,
        inventory=request.inventory,
        profile=profile,
        rules_file=rules,
        inventory_roots=roots,
    )
    static_rules = integrity.load_static_rules(settings_integrity)
    loaded = tasks if tasks is not None else load_tasks(request.tasks_dir)
    for message in loaded.errors:
        notify("skipped task", message)
    if not loaded.tasks:
        raise BadInputError(f"{request.tasks_dir}: no valid task to run")
    agent_config = resolve_agent(
        request.agent, search_dirs=(Path("agents"), request.tasks_dir.parent / "agents")
    )
    # Before anything is probed or created: the host's network is the operator's grant.
    refusal = host_network_refusal(agent_config, loaded.tasks, allowed=request.allow_host_network)
    if refusal is not None:
        raise BadInputError(f"pre-flight refused the batch: {refusal}")
    bwrap = "bwrap"
    identity = None
    if request.sandbox == "bwrap" and cluster is None:
        bwrap = probe_bwrap()
        identity = agent_identity(os.environ)
    # Both directories are checked (and created) before any agent starts: a regular file
    # in the way would otherwise fail the batch halfway, with a traceback.
    home_source, home_path = home_source_of(request.home)
    try:
        home_dir = prepare_home(home_path)
    except WorkspaceError as exc:
        raise BadInputError(f"{home_source} {exc}") from None
    try:
        ensure_directory(request.out)
    except WorkspaceError as exc:
        raise BadInputError(f"--out {exc}") from None
    if cluster is None:
        # The runs' scratch and the harness's own records must both fit: a run that
        # fills its budget must never be what leaves no room for another's record.
        short = free_space_problem(
            [request.out, Path(tempfile.gettempdir())], request.disk_budget, request.jobs
        )
        if short is not None:
            raise BadInputError(f"pre-flight refused the batch: {short}")
    for crowded in (
        memory_overcommit(request.memory_budget, request.jobs) if cluster is None else None,
        # Only a root harness's scratch is a tmpfs (harness.disk_budget).
        below_disk_budget(request.memory_budget, request.disk_budget)
        if cluster is None and os.geteuid() == 0
        else None,
    ):
        if crowded is not None:
            notify("warning", crowded)
    integrity.check_roots_against_home(settings_integrity.inventory_roots, home_dir)
    # A cluster's agents run on its workers: each applies Landlock (and probes how it can
    # make fresh homes) with its own kernel; here only the operator's choice is kept.
    confinement = (
        batch_confinement(unconfined=request.unconfined)
        if cluster is None
        else Confinement(0 if request.unconfined else MIN_ABI)
    )
    home_settings = (
        home_settings_for(
            request.home_mode,
            keep_writes=request.keep_home_writes,
            home=home_dir,
            source=home_source,
        )
        if cluster is None
        else HomeSettings(mode=request.home_mode, keep_writes=request.keep_home_writes)
    )
    if home_settings.fresh and cluster is None:
        # The launcher copies the home into the run's scratch where it cannot overlay
        # it: a home that takes most of the budget leaves the agent no room.
        home_bytes, _entries = measure_home(home_dir)
        large = home_share_problem(home_dir, home_bytes, request.disk_budget, home_source)
        if large is not None:
            raise BadInputError(f"pre-flight refused the batch: {large}")
    if not confinement.active:
        notify(
            "warning",
            "running unconfined (--unconfined): no Landlock allow-list; the agent can open "
            "anything its uid can, and rows and the leaderboard say 'unconfined'",
        )
    where = f"agent {agent_config.name!r}" + (
        f" ({agent_config.source})" if agent_config.source else ""
    )
    for path in agent_config.install_paths():
        if not path.exists():
            raise BadInputError(
                f"pre-flight refused the batch: {where}: install path {path} does not exist"
            )
    problems = install_exposure(
        sandbox_read_only(agent_config, home_dir),
        (request.tasks_dir, request.out),
        where=where,
        fields=grant_fields(agent_config, home_dir),
        material=None if request.harness_agent else task_material(request.tasks_dir),
    )
    if problems:
        raise BadInputError("pre-flight refused the batch: " + "; ".join(problems))
    if request.sandbox == "bwrap":
        # The home is bound read-write: a home that holds the tasks would expose them.
        binds = (*sandbox_read_only(agent_config, home_dir), home_dir)
        problems = exposure_problems(binds, (request.tasks_dir, request.out))
        if problems:
            raise BadInputError("; ".join(problems))
    try:
        if cluster is None:
            preflight(
                agent_config,
                sandbox=request.sandbox,
                home=home_dir,
                read_only=sandbox_read_only(agent_config, home_dir),
                bwrap=bwrap,
                identity=identity,
                confinement=confinement,
                home_settings=home_settings,
                # The check is agent code: audited over what a run's audit protects.
                audit=request.audit,
                tasks_dirs=(request.tasks_dir,),
                results_root=request.out,
            )
    except PreflightError as exc:
        raise BadInputError(f"pre-flight refused the batch: {exc}") from None
    _warn_unprotected(request.sandbox, request.audit, notify, confined=confinement.active)
    unseparated = separation_warning(sandbox=request.sandbox, confinement=confinement)
    if unseparated is not None and cluster is None:
        notify("warning", unseparated)
    if cluster is not None and cluster.scheduler and not cluster.scheduler.startswith("tls://"):
        _check_plain_scheduler(cluster.scheduler, request.sandbox, notify)
    for task in loaded.tasks:
        for passing in home_checks_passing_before(task, home_dir):
            notify(
                "warning",
                f"{task.folder}: the home already passes check {passing} before any agent "
                "runs: a run could earn it without the work (remove the file from --home)",
            )
    if home_dir == Path.home().resolve():
        notify(
            "warning",
            "the agent home is your own home: the agent sees your files, "
            "and every entry in it will read as a prior-run leftover (use --home)",
        )
    settings = BatchSettings(
        agent=agent_config,
        home=home_dir,
        out_dir=request.out,
        iterations=request.iterations,
        jobs=request.jobs,
        sandbox=request.sandbox,
        bwrap=bwrap,
        integrity=settings_integrity,
        judge=_judge(request.judge, notify),
        identity=identity,
        audit=request.audit,
        check_sandbox=(
            _check_sandbox(bwrap if request.sandbox == "bwrap" else None, notify)
            if cluster is None
            else None
        ),
        confinement=confinement,
        home_settings=home_settings,
        allow_host_network=request.allow_host_network,
        disk_budget=request.disk_budget,
        memory_budget=request.memory_budget,
    )
    return PreparedRun(
        loaded.tasks,
        loaded.errors,
        settings,
        tuple(static_rules),
        tasks_dir=request.tasks_dir,
        cluster=cluster,
    )


def cluster_settings(request: RunRequest) -> ClusterSettings | None:
    """The cluster a ``--engine dask`` batch runs on (flags over the config file); None
    for a local batch. Bad combinations are bad input."""
    chosen = values(
        {"engine": request.engine, "scheduler": request.scheduler, "workers": request.workers}
    )
    engine, scheduler = chosen["engine"], chosen["scheduler"]
    if engine not in ENGINE_NAMES:
        raise BadInputError(f"--engine {engine!r}: choose one of: {', '.join(ENGINE_NAMES)}")
    if engine != "dask":
        if request.scheduler is not None or request.shared_inputs:
            raise BadInputError("--scheduler and --shared-inputs apply only to --engine dask")
        return None
    if scheduler in LOCAL_SCHEDULERS:
        scheduler = None  # scan's local schedulers: run starts a local cluster instead
    if scheduler is not None:
        problem = scheduler_address_problem(scheduler)
        if problem is not None:
            raise BadInputError(problem)
    if request.judge:
        raise BadInputError("--judge with --engine dask: the judge runs only in local batches")
    return ClusterSettings(
        scheduler=scheduler,
        workers=chosen["workers"] or request.jobs,
        shared_inputs=request.shared_inputs,
    )


def run_prepared(
    prepared: PreparedRun,
    *,
    on_done: Callable[[Job, RunRecord], None] | None = None,
    resume: Path | None = None,
) -> BatchResult:
    """Run the batch; a ``--resume`` directory whose journal does not fit is bad input."""
    try:
        if prepared.cluster is not None:
            # Imported here: it needs the optional 'distributed' package.
            from benchguard.workflows.run_cluster import run_batch_on_cluster

            return run_batch_on_cluster(
                prepared.tasks,
                prepared.settings,
                prepared.cluster,
                tasks_dir=prepared.tasks_dir,
                static_rules=prepared.static_rules,
                on_done=on_done,
                skipped_tasks=prepared.skipped_tasks,
                resume=resume,
            )
        return run_batch(
            prepared.tasks,
            prepared.settings,
            static_rules=prepared.static_rules,
            on_done=on_done,
            skipped_tasks=prepared.skipped_tasks,
            resume=resume,
        )
    except JournalError as exc:
        raise BadInputError(f"--resume {exc}") from None


def home_source_of(home: Path | None) -> tuple[str, Path]:
    """Where the agent home comes from (flag, environment or default) and its path."""
    if home is not None:
        return "--home", home
    from_env = os.environ.get(HOME_ENV)
    if from_env:
        return HOME_ENV, Path(from_env)
    return "the default agent home", DEFAULT_AGENT_HOME


def configured(
    profile: str | None, rules: Path | None, roots: Sequence[Path] | None
) -> tuple[str, Path | None, list[Path] | None]:
    """Profile, extra rules and inventory roots: flags, then the environment, then the
    configuration file (benchguard.toml or [tool.benchguard]), then the defaults."""
    settings = values({"profile": profile})
    if rules is None and not os.environ.get(integrity.RULES_ENV):
        rules = settings["rules"]
    chosen = list(roots) if roots else None
    if not chosen and not os.environ.get(integrity.INVENTORY_ROOTS_ENV, "").strip():
        chosen = list(settings["inventory_roots"]) or None
    return str(settings["profile"]), rules, chosen


def _warn_unprotected(
    sandbox: SandboxMode, audit: AuditSettings, notify: Notify, *, confined: bool = False
) -> None:
    """Once per batch: rows say it too (sandboxed, confined, evidence sources)."""
    if sandbox == "bwrap" and audit.active:
        return
    missing = [n for n, on in (("sandbox", sandbox == "bwrap"), ("audit", audit.active)) if not on]
    if sandbox == "none":
        reach = (
            "Landlock still confines the agent to its allow-list; "
            if confined
            else "the agent can reach the tasks, results and harness files; "
        )
    else:
        reach = ""
    notify(
        "warning",
        f"running without the {' and the '.join(missing)}: "
        + reach
        + (
            "nothing but its own transcript shows what it opened"
            if not audit.active
            else "the audit records what it opens"
        ),
    )


def _check_sandbox(bwrap: str | None, notify: Notify) -> CheckSandbox | None:
    """Command checks are sandboxed wherever bubblewrap works, whatever --sandbox says."""
    try:
        found = bwrap or probe_bwrap()
        identity = agent_identity(os.environ)
    except (SandboxUnavailable, IdentityError) as exc:
        notify(
            "warning",
            f"verification commands run without a sandbox ({exc}); records say "
            "checks_sandboxed: false",
        )
        return None
    return CheckSandbox(found, identity)


def _judge(provider: str | None, notify: Notify) -> Judge | None:
    if not provider:
        return None
    chosen, reason = judge_or_null(provider, os.environ)
    if reason:
        notify("warning", reason)
    return chosen


# The operator's explicit acceptance of a scheduler without TLS for agents that have the
# network (an environment variable, so a config file copied around cannot carry it).
INSECURE_SCHEDULER_ENV = "BENCHGUARD_INSECURE_SCHEDULER"


def _check_plain_scheduler(address: str, sandbox: str, notify: Notify) -> None:
    """A scheduler without TLS runs any caller's code on the workers (a red team's agent
    reached one from its run and read every batch's tasks). Agents in the bubblewrap
    sandbox have no network, so it is a warning there; otherwise a refusal unless the
    operator accepts the risk in ``BENCHGUARD_INSECURE_SCHEDULER=1``."""
    risk = (
        f"--scheduler {address} is not a tls:// address: any process that can reach it, an "
        "agent on a worker machine included, can have the workers run its code outside "
        "Landlock and the audit"
    )
    if sandbox == "bwrap" or os.environ.get(INSECURE_SCHEDULER_ENV) == "1":
        notify("warning", f"{risk}; use a TLS cluster (docs/distributed-runs.md)")
        return
    raise BadInputError(
        f"{risk}, and without --sandbox bwrap the agents have the network. Use a TLS "
        "cluster (docs/distributed-runs.md), run with --sandbox bwrap, or accept the risk "
        f"with {INSECURE_SCHEDULER_ENV}=1"
    )
