"""``benchguard run --engine dask``: the batch's jobs on a ``distributed`` cluster.

The client (this process) plans the batch, owns the one durable journal (``runs/*.json``
and ``batch.json``, the layout of a local batch) and publishes results.json, rows.json
and manifest.json exactly as a local batch does. Each worker runs its jobs exactly as a
local batch runs them (:func:`benchguard.harness.runner.run_and_finish`: the same
sandbox, home inventory, system audit, checks, scan and score), the agent a descendant
of the worker's own process on the worker's machine. What differs is where the inputs
come from and what a fault costs:

- **inputs**: the tasks, the agent's directory and the home template are shipped to the
  workers as one archive named by its digest, or read from the same paths on a shared
  file system and digest-checked there (``harness.cluster_inputs``);
- **pre-flight on every worker**, including workers that join later: the inputs'
  digest, the benchguard version, the sandbox probe, the audit's tracer, the agent's
  program and the model endpoint (the local pre-flight, run on the worker). A worker
  that fails is given no job; the manifest's ``cluster.refusedWorkers`` says why;
- **a lost worker**: its job runs once more on another worker and the lost attempt is
  kept on the record (``lost_attempts``); lost twice, the run is recorded errored,
  naming the workers, and marked so ``--resume`` runs it again;
- **SIGINT/SIGTERM** on the client: no new job starts, every worker kills the batch's
  agents at once, running jobs are cancelled, and the batch publishes what finished;
  ``--resume RUN_DIR`` (locally or on a cluster) runs the rest.

Every record names the worker that ran it (``worker``: address and name). This module
imports ``distributed`` (the optional ``dask`` extra) and is imported only for such a batch.
"""

from __future__ import annotations

import asyncio
import io
import logging
import os
import shutil
import tarfile
import tempfile
import threading
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from distributed import WorkerPlugin

import benchguard
from benchguard.detection.detector import Detector
from benchguard.detection.models import Rule
from benchguard.engines.dask_jobs import (
    MAX_ATTEMPTS,
    ClusterJob,
    ClusterSettings,
    WorkerInfo,
    cluster_client,
    note_attempt,
    prior_attempts,
    run_cluster_jobs,
)
from benchguard.errors import BadInputError, BenchguardError
from benchguard.harness import integrity
from benchguard.harness.agents.config import BUILTIN_AGENT_NAME, resolve_agent
from benchguard.harness.audit import AuditSettings, probe_strace
from benchguard.harness.cluster_inputs import (
    Inputs,
    InputTrees,
    check_shared,
    pack_inputs,
    shared_inputs,
    unpack_inputs,
)
from benchguard.harness.confine import batch_confinement
from benchguard.harness.disk_budget import (
    DEFAULT_DISK_BUDGET,
    free_space_problem,
    home_share_problem,
)
from benchguard.harness.fanotify import require_fanotify
from benchguard.harness.home import HomeMode, evidence_dir, home_settings_for
from benchguard.harness.home import measure as measure_home
from benchguard.harness.identity import agent_identity, hand_over
from benchguard.harness.journal import Journal
from benchguard.harness.preflight import preflight
from benchguard.harness.process import ChildBaseline, become_subreaper
from benchguard.harness.runner import (
    LOST_WITH_WORKER_KEY,
    BatchResult,
    BatchSettings,
    Job,
    StopSignals,
    journal_record,
    needs_rerun,
    open_journal,
    plan,
    publish,
    run_and_finish,
    sandbox_read_only,
    seed_record,
)
from benchguard.harness.sandbox import probe_bwrap, self_check_in_scratch
from benchguard.harness.tasks import Task, load_tasks
from benchguard.harness.verification import CheckSandbox
from benchguard.harness.workspace import granted_paths
from benchguard.records import RunRecord, parse_record

log = logging.getLogger(__name__)

# Record fields a cluster run adds (a local run has neither).
WORKER_KEY = "worker"
LOST_ATTEMPTS_KEY = "lost_attempts"


@dataclass(frozen=True)
class WorkerBatch:
    """What a worker needs to rebuild the batch's settings on its own machine."""

    run_id: str
    inputs: Inputs
    agent_file: str | None  # the agent YAML's name in its directory; None: built-in
    sandbox: str
    audit_mode: str
    protect: tuple[Path, ...]
    integrity: integrity.IntegritySettings
    iterations: int
    static_rules: tuple[Rule, ...]
    version: str
    # The client's confinement and home choices, applied with this worker's own kernel:
    # Landlock unless the operator ran --unconfined; fresh or persistent home.
    unconfined: bool = False
    home_mode: HomeMode = "fresh"
    keep_home_writes: bool = True
    # The client's --allow-host-network (harness.host_network), checked there.
    allow_host_network: bool = False
    # The client's --disk-budget in bytes (harness.disk_budget): each worker checks its
    # own free space against it and enforces it on every run it makes.
    disk_budget: int = DEFAULT_DISK_BUDGET
    # The client's --memory-budget in bytes (harness.memory_limit); None: each worker's
    # default, a fraction of its own memory over its own threads.
    memory_budget: int | None = None


@dataclass
class _WorkerState:
    settings: BatchSettings
    tasks: dict[str, Task]
    snapshots: integrity.HomeSnapshots
    knowledge: Any
    orphans: ChildBaseline
    stop: threading.Event
    lock: threading.Lock
    # This worker's detector (its compiled plans, shared by its runs), guarded by lock.
    detector: Detector
    static_rules: tuple[Rule, ...]
    root: Path

    @property
    def evidence_root(self) -> Path | None:
        """Where this worker keeps runs' home writes until they are sent back."""
        return self.root / "evidence" if self.settings.home_settings.keep_writes else None


class BatchOnWorker(WorkerPlugin):  # type: ignore[misc, unused-ignore]
    """The worker plugin: unpack (or check) the inputs, run pre-flight, and hold the
    batch's per-worker state. ``problem`` is None once the worker is fit for work."""

    def __init__(self, name: str, batch: WorkerBatch) -> None:
        self.name = name
        self.batch = batch
        self.problem: str | None = None
        self.done = False
        self.state: _WorkerState | None = None

    async def setup(self, worker: Any) -> None:
        # Pre-flight takes seconds (the sandbox probe, the agent's check): off the
        # worker's event loop, which must keep answering the scheduler meanwhile.
        threads = int(worker.state.nthreads)
        try:
            self.state = await asyncio.to_thread(_prepare_worker, self.name, self.batch, threads)
        except BenchguardError as exc:
            self.problem = str(exc)
        except Exception as exc:  # any other failure refuses the worker, never the batch
            self.problem = f"{type(exc).__name__}: {exc}"
        self.done = True

    def teardown(self, worker: Any) -> None:
        if self.state is not None:
            self.state.stop.set()
            self.state.orphans.sweep_new()
            shutil.rmtree(self.state.root, ignore_errors=True)


def _check_disk(root: Path, home: Path, budget: int, threads: int, *, fresh: bool) -> None:
    """The client's pre-flight of the disk budget, with this worker's own disks: its
    runs' scratch and records must fit, and a fresh home must leave a run room."""
    short = free_space_problem([root, Path(tempfile.gettempdir())], budget, threads)
    if short is None and fresh:
        short = home_share_problem(home, measure_home(home)[0], budget, "the batch's home")
    if short is not None:
        raise BadInputError(f"pre-flight refused the batch on this worker: {short}")


def _prepare_worker(name: str, batch: WorkerBatch, threads: int) -> _WorkerState:
    if batch.version != benchguard.__version__:
        raise BadInputError(
            f"this worker has benchguard {benchguard.__version__}, the client "
            f"{batch.version}: install the same version on every worker"
        )
    root = Path(tempfile.mkdtemp(prefix=f"bg-worker-{batch.run_id}-"))
    if batch.inputs.shared:
        check_shared(batch.inputs)
        trees = batch.inputs.trees
    else:
        assert batch.inputs.bundle is not None
        trees = unpack_inputs(batch.inputs.bundle, batch.inputs.digest, root / "inputs")
    loaded = load_tasks(trees.tasks_dir)
    if batch.agent_file is None:
        agent = resolve_agent(BUILTIN_AGENT_NAME)
    else:
        assert trees.agent_dir is not None
        agent = resolve_agent(str(trees.agent_dir / batch.agent_file))
    home = trees.home.resolve()
    bwrap, identity = "bwrap", None
    if batch.sandbox == "bwrap":
        bwrap = probe_bwrap()
        identity = agent_identity(os.environ)
        hand_over(identity, home)
        self_check_in_scratch(home, identity, bwrap=bwrap)
    # The audit the client chose, or the worker is refused: a run must not be audited on
    # one worker and not on another.
    audit = AuditSettings("none", protect=batch.protect)
    if batch.audit_mode == "fanotify":
        require_fanotify()
        audit = AuditSettings("fanotify", protect=batch.protect)
    elif batch.audit_mode != "none":
        audit = AuditSettings("strace", strace=probe_strace(), protect=batch.protect)
    confinement = batch_confinement(unconfined=batch.unconfined)
    home_settings = home_settings_for(
        batch.home_mode, keep_writes=batch.keep_home_writes, home=home, source="the batch's home"
    )
    try:
        check_sandbox: CheckSandbox | None = CheckSandbox(
            bwrap if batch.sandbox == "bwrap" else probe_bwrap(), agent_identity(os.environ)
        )
    except BenchguardError:
        check_sandbox = None
    preflight(
        agent,
        sandbox=batch.sandbox,
        home=home,
        read_only=sandbox_read_only(agent, home),
        bwrap=bwrap,
        identity=identity,
        confinement=confinement,
        home_settings=home_settings,
    )
    _check_disk(root, home, batch.disk_budget, threads, fresh=home_settings.fresh)
    out_dir = root / "results"
    out_dir.mkdir()
    settings = BatchSettings(
        agent=agent,
        home=home,
        out_dir=out_dir,
        iterations=batch.iterations,
        jobs=threads,
        sandbox="bwrap" if batch.sandbox == "bwrap" else "none",
        bwrap=bwrap,
        integrity=batch.integrity,
        identity=identity,
        audit=audit,
        check_sandbox=check_sandbox,
        confinement=confinement,
        home_settings=home_settings,
        allow_host_network=batch.allow_host_network,
        disk_budget=batch.disk_budget,
        memory_budget=batch.memory_budget,
    )
    snapshots = integrity.HomeSnapshots(
        home,
        granted_paths(agent.skills, home),
        enabled=batch.integrity.inventory_active,
        profile=batch.integrity.profile,
        extra_roots=batch.integrity.inventory_roots,
        once=integrity.inventory_once(home_settings, confinement),
    )
    snapshots.before_batch()
    knowledge = (
        integrity.harness_knowledge(
            loaded.tasks,
            home=home,
            results_root=out_dir,
            protect=batch.protect,
            profile=batch.integrity.profile,
        )
        if batch.integrity.detect
        else None
    )
    # The agents are this worker process's descendants; orphans re-parent to it and are
    # killed after each run (one slot) or when the batch stops.
    become_subreaper()
    return _WorkerState(
        settings=settings,
        tasks={task.folder: task for task in loaded.tasks},
        snapshots=snapshots,
        knowledge=knowledge,
        orphans=ChildBaseline.now(),
        stop=threading.Event(),
        lock=threading.Lock(),
        detector=Detector(),
        static_rules=batch.static_rules,
        root=root,
    )


def run_on_worker(plugin_name: str, key: str, position: int, folder: str, iteration: int) -> Any:
    """The task a worker runs for one job: the record, exactly as a local run's, naming
    this worker; or, on a third start after two lost attempts, an errored record; or
    None, launching nothing, once the batch was stopped."""
    from distributed import Reschedule, get_worker

    worker = get_worker()
    plugin: Any = worker.plugins.get(plugin_name)
    state: _WorkerState | None = getattr(plugin, "state", None)
    if state is None:
        # Refused (or still in pre-flight): the scheduler places the job elsewhere. A job
        # lands here only when the workers it was meant for are gone.
        raise Reschedule()
    if state.stop.is_set():
        # The batch was stopped while this job sat queued behind another: launch nothing
        # (as a local batch launches nothing after the signal). The client has stopped
        # reading results and records the run as not run.
        return None
    earlier = prior_attempts(plugin_name, key)
    job = Job(position=position, task=state.tasks[folder], iteration=iteration)
    if len(earlier) >= MAX_ATTEMPTS:
        return WorkerResult(lost_record(job, state.settings, earlier))
    here = note_attempt(plugin_name, key)
    record = run_and_finish(
        job,
        state.settings,
        static_rules=state.static_rules,
        snapshots=state.snapshots,
        knowledge=state.knowledge,
        orphans=state.orphans if state.settings.jobs <= 1 else None,
        stop=state.stop,
        lock=state.lock,
        detector=state.detector,
        home_evidence_root=state.evidence_root,
    )
    if state.stop.is_set() and record.status != "interrupted":
        record = record.model_copy(
            update={"status": "interrupted", "error": "interrupted: the batch was stopped"}
        )
    record = record.model_copy(update={WORKER_KEY: here.to_json()})
    return WorkerResult(record, _take_evidence(state.evidence_root, job))


@dataclass(frozen=True)
class WorkerResult:
    """A job's record and, packed, the home writes the run left (fresh home), which the
    client unpacks at the same place in its own run directory."""

    record: RunRecord
    home_writes: bytes | None = None


def _take_evidence(root: Path | None, job: Job) -> bytes | None:
    """The run's kept home writes as a tar archive (paths relative to ``root``), removed
    from the worker; None when it kept none. Bounded by the home's own limits."""
    if root is None:
        return None
    folder = evidence_dir(root, job.position, job.task.folder, job.iteration)
    if not folder.exists():
        return None
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        archive.add(folder, arcname=folder.relative_to(root).as_posix())
    shutil.rmtree(folder, ignore_errors=True)
    return buffer.getvalue()


def _place_evidence(run_dir: Path, packed: bytes) -> list[str]:
    """Unpack a worker's kept home writes into the client's run directory, member by
    member (the tarfile data filter: nothing outside it, no devices, nothing written
    through a link). A symlink the agent left is evidence as it stands, wherever it
    points: it is made as a link, never followed, as a local batch keeps it. Returns a
    problem for each member not kept; the others are kept beside it."""
    problems: list[str] = []
    root = os.path.realpath(run_dir)
    with tarfile.open(fileobj=io.BytesIO(packed), mode="r") as archive:
        for member in archive.getmembers():
            try:
                archive.extract(member, run_dir, filter="data")
            except (tarfile.AbsoluteLinkError, tarfile.LinkOutsideDestinationError) as exc:
                if not (member.issym() and _make_link(root, member)):
                    problems.append(f"home write {member.name!r} not kept: {exc}")
            except (tarfile.FilterError, OSError) as exc:
                problems.append(f"home write {member.name!r} not kept: {exc}")
    return problems


def _make_link(root: str, member: tarfile.TarInfo) -> bool:
    """Make ``member``'s symlink at its place under ``root`` if that place is a new name
    in a real directory inside ``root`` (no link on the way)."""
    target = os.path.join(root, member.name)
    parent = os.path.dirname(target)
    if os.path.realpath(parent) != os.path.normpath(parent) or not (
        os.path.normpath(parent) + os.sep
    ).startswith(root + os.sep):
        return False
    if os.path.lexists(target):
        return False
    os.makedirs(parent, exist_ok=True)
    os.symlink(member.linkname, target)
    return True


def stop_on_worker(plugin_name: str, dask_worker: Any) -> int:
    """On every worker when the client is stopped: no job of the batch goes on, and
    every agent process it started is killed now. Returns how many were killed."""
    plugin = dask_worker.plugins.get(plugin_name)
    state = getattr(plugin, "state", None)
    if state is None:
        return 0
    state.stop.set()
    return int(state.orphans.sweep_new())


def lost_record(job: Job, settings: BatchSettings, attempts: Sequence[WorkerInfo]) -> RunRecord:
    """The record of a job whose workers were lost: errored, naming them, and marked so
    ``--resume`` runs it again."""
    names = ", ".join(f"{a.name} ({a.address})" for a in attempts) or "unknown"
    record = seed_record(job, settings)
    record.update(
        status="error",
        error=f"lost with its worker: {names}; not retried again",
        **{LOST_WITH_WORKER_KEY: True, LOST_ATTEMPTS_KEY: [a.to_json() for a in attempts]},
    )
    record["errors"] = [record["error"]]
    return parse_record(record)


@dataclass
class _Opened:
    """The client's journal and what it already held (once a worker passed)."""

    journal: Journal | None = None
    done: dict[int, RunRecord] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)


def run_batch_on_cluster(
    tasks: Sequence[Task],
    settings: BatchSettings,
    cluster: ClusterSettings,
    *,
    tasks_dir: Path,
    static_rules: Sequence[Rule] = (),
    on_done: Callable[[Job, RunRecord], None] | None = None,
    skipped_tasks: Sequence[str] = (),
    resume: Path | None = None,
) -> BatchResult:
    """Plan, journal and publish on the client; run every job on the cluster."""
    jobs = plan(tasks, settings.iterations)
    trees = InputTrees(
        tasks_dir=tasks_dir.resolve(), agent_dir=settings.agent.agent_dir, home=settings.home
    )
    inputs = shared_inputs(trees) if cluster.shared_inputs else pack_inputs(trees)
    batch_id = uuid.uuid4().hex[:12]
    plugin_name = f"benchguard-run-{batch_id}"
    batch = WorkerBatch(
        run_id=batch_id,
        inputs=inputs,
        agent_file=Path(settings.agent.source).name if settings.agent.source else None,
        sandbox=settings.sandbox,
        audit_mode=settings.audit.mode,
        protect=settings.audit.protect,
        integrity=settings.integrity,
        iterations=settings.iterations,
        static_rules=tuple(static_rules),
        version=benchguard.__version__,
        unconfined=not settings.confinement.active,
        home_mode=settings.home_settings.mode,
        keep_home_writes=settings.home_settings.keep_writes,
        allow_host_network=settings.allow_host_network,
        disk_budget=settings.disk_budget,
        memory_budget=settings.memory_budget,
    )
    # Opened once a worker passed pre-flight: a batch no worker can run leaves no
    # run directory behind.
    opened = _Opened()

    def make_jobs() -> list[ClusterJob]:
        opened.journal = open_journal(jobs, settings, resume)
        opened.done, opened.errors = opened.journal.finished()
        done = opened.done
        todo = [j for j in jobs if j.position not in done or needs_rerun(done[j.position])]
        by_key.update({f"{plugin_name}-{j.position}": j for j in todo})
        return [
            ClusterJob(
                key, run_on_worker, (plugin_name, key, j.position, j.task.folder, j.iteration)
            )
            for key, j in by_key.items()
        ]

    by_key: dict[str, Job] = {}

    def finished(job: ClusterJob, result: WorkerResult, attempts: list[WorkerInfo]) -> None:
        run = by_key[job.key]
        record = result.record
        if result.home_writes is not None and opened.journal is not None:
            try:
                problems = _place_evidence(opened.journal.run_dir, result.home_writes)
            except (OSError, tarfile.TarError) as exc:
                problems = [f"home writes not kept: {exc}"]
            if problems:
                # Evidence the client could not keep: the record says so (fail closed).
                log.warning("run %s: %s", record.label, "; ".join(problems))
                writes = dict(record.home_writes) if isinstance(record.home_writes, dict) else {}
                writes["complete"] = False
                writes["problems"] = [*writes.get("problems", []), *problems]
                record = record.model_copy(update={"home_writes": writes})
        ran_on = getattr(record, WORKER_KEY, None) or {}
        lost = [a.to_json() for a in attempts if a.address != ran_on.get("address")]
        if lost:
            record = record.model_copy(update={LOST_ATTEMPTS_KEY: lost})
        keep(run, record)

    def lost(job: ClusterJob, attempts: list[WorkerInfo], reason: str) -> None:
        run = by_key[job.key]
        record = lost_record(run, settings, attempts)
        record = record.model_copy(update={"error": f"{record.error} ({reason})"})
        keep(run, record)

    def keep(run: Job, record: RunRecord) -> None:
        assert opened.journal is not None
        record = journal_record(opened.journal, run.position, record)
        opened.done[run.position] = record
        if on_done is not None:
            on_done(run, record)

    with StopSignals() as stop, cluster_client(cluster.scheduler, cluster.workers) as client:
        outcome = run_cluster_jobs(
            client,
            BatchOnWorker(plugin_name, batch),
            make_jobs,
            on_result=finished,
            on_lost=lost,
            should_stop=stop.event.is_set,
            stop_function=stop_on_worker,
        )
        assert opened.journal is not None
        result = publish(
            opened.journal,
            jobs,
            opened.done,
            settings,
            skipped_tasks,
            stop.signal_name,
            extra_manifest={
                "cluster": {
                    "scheduler": cluster.scheduler or "local",
                    "inputsDigest": inputs.digest,
                    "sharedInputs": inputs.shared,
                    "workers": [w.to_json() for w in outcome.workers],
                    "refusedWorkers": [r.to_json() for r in outcome.refused],
                }
            },
        )
    result.errors[:0] = opened.errors
    result.errors.extend(
        f"worker {r.worker.name} ({r.worker.address}) refused: {r.reason}" for r in outcome.refused
    )
    return result
