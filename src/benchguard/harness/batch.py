"""The batch: plan, scheduler, stop signals, journal and publish.

One batch, end to end: run every task, finish each run on its own, publish.

The order:

1. the home is inventoried before the batch and again just before each run;
2. each run gets a fresh workspace and runs its agent (sandboxed or not), then its
   verification checks; a crashed or timed-out agent keeps its partial transcript;
3. the moment a run ends it is *finished* on its own: its record is parsed at the edge
   (``records.parse_record``), scanned with the static rules plus its own snapshot's
   rules, scored (verification, judge, gate, outcome) and written to the journal
   (``harness.journal``), durably. A failure in any of these steps marks that run
   ``error`` with its reason and touches no other run;
4. ``results.json``, ``rows.json`` and ``manifest.json`` are built from the journal at
   the end of the batch, and also when it is interrupted.

SIGINT and SIGTERM stop the batch: no run is launched after the signal, every running
agent's processes (its whole tree, sandboxed or not) are killed, those runs are
recorded ``interrupted``, and the files are written from what finished. ``--resume``
runs what is missing. Exit codes are the CLI's (docs/harness.md).
"""

from __future__ import annotations

import logging
import os
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchguard.detection.detector import TRANSCRIPT_TRUNCATED_KEY, Detector
from benchguard.detection.knowledge import HarnessKnowledge
from benchguard.detection.models import SCAN_INCOMPLETE_CATEGORY, Rule
from benchguard.errors import EXIT_FINDINGS, EXIT_INCOMPLETE, EXIT_OK
from benchguard.harness import cgroup, integrity
from benchguard.harness.finish import finish_run, mark_failed
from benchguard.harness.grading_turns import GradingTurns
from benchguard.harness.home import (
    evidence_dir,
)
from benchguard.harness.identity import hand_over
from benchguard.harness.job import BatchSettings, Job, leftover_paths, run_job, sweep_orphans
from benchguard.harness.journal import BatchPlan, Journal, JournalError, PlannedRun
from benchguard.harness.process import ChildBaseline, become_subreaper
from benchguard.harness.sandbox import (
    self_check_in_scratch,
)
from benchguard.harness.tasks import Task
from benchguard.harness.workspace import granted_paths
from benchguard.record.codec import BATCH_FILE, MANIFEST_FILE, RESULTS_FILE, ROWS_FILE
from benchguard.record.filenames import escape_surrogates
from benchguard.record.infrastructure import infrastructure_reason
from benchguard.record.rulesets import RulesetTable
from benchguard.records import NO_CREDIT_STATUSES, RunRecord, parse_record
from benchguard.results.io import dumps, results_document, write_files_atomic
from benchguard.results.rows import (
    HOME_PASSED_BEFORE,
    MAX_HOME_PASSED_BEFORE,
    Manifest,
    ResultRow,
    build_rows,
    home_passed_before,
    setup_id_for,
)

log = logging.getLogger(__name__)


@dataclass
class BatchResult:
    """What a batch left: its records and rows in plan order (runs that never started
    have neither), its manifest, and what went wrong outside any one run."""

    run_dir: Path
    records: list[RunRecord]
    rows: list[ResultRow]
    manifest: Manifest
    errors: list[str]
    # The signal that stopped the batch ("SIGINT", "SIGTERM"), if one did.
    interrupted_by: str | None = None
    # Whether results.json, rows.json and manifest.json were written.
    published: bool = True

    @property
    def exit_code(self) -> int:
        """1 if any run was flagged or gated (an interrupted one: see :func:`_is_finding`);
        else 3 if the batch is incomplete (a run errored or was interrupted, a run never
        started, a task was skipped, the files could not be written); else 0.
        A finding wins: it must never be hidden behind an incomplete batch."""
        # Rows are built one per record, in order; were they ever not, every flag counts.
        if len(self.records) == len(self.rows):
            pairs = zip(self.rows, self.records, strict=True)
            found = any(_is_finding(row, record) for row, record in pairs)
        else:
            found = any(row.catastrophic or row.integrity_status == "flagged" for row in self.rows)
        if found:
            return EXIT_FINDINGS
        incomplete = (
            not self.published
            or self.interrupted_by is not None
            or self.manifest.not_run
            or self.manifest.skipped_tasks
            or any(record.status in NO_CREDIT_STATUSES for record in self.records)
        )
        return EXIT_INCOMPLETE if incomplete else EXIT_OK


def _is_finding(row: ResultRow, record: RunRecord) -> bool:
    """Whether a run counts for exit 1: flagged or gated, except an interrupted run
    flagged for nothing but an incomplete scan. The batch's own stop cuts that run's
    audit (strace killed before it wrote its log, a log cut mid-line) and its
    transcript: the incompleteness is the stop's, and exit 3 already says the batch is
    incomplete. A finding the interrupted run did record still wins (fail closed: a
    report of any other shape counts as one)."""
    if not (row.catastrophic or row.integrity_status == "flagged"):
        return False
    # A run the machine failed (harness.box_shortage) is the same: the full disk cut
    # its transcript, and exit 3 says the batch is incomplete.
    if record.status != "interrupted" and infrastructure_reason(record) is None:
        return True
    findings = record.cheating_report.get("findings")
    categories = record.cheating_report.get("categories")
    if not isinstance(findings, list) or not isinstance(categories, list):
        return True
    return bool(findings) or any(c != SCAN_INCOMPLETE_CATEGORY for c in categories)


def plan(tasks: Sequence[Task], iterations: int) -> list[Job]:
    """Every task once per iteration, iteration-major, in task order."""
    jobs: list[Job] = []
    for iteration in range(1, iterations + 1):
        for task in tasks:
            jobs.append(Job(position=len(jobs), task=task, iteration=iteration))
    return jobs


def new_run_dir(out_dir: Path, now: datetime) -> Path:
    """``OUT/run_YYYYMMDD_HHMMSS_<pid>``, suffixed if a run already took that name."""
    base = f"run_{now:%Y%m%d_%H%M%S}_{os.getpid()}"
    out_dir.mkdir(parents=True, exist_ok=True)
    for attempt in range(1, 1000):
        candidate = out_dir / (base if attempt == 1 else f"{base}_{attempt}")
        try:
            candidate.mkdir()
            return candidate
        except FileExistsError:
            continue
    raise RuntimeError(f"{out_dir}: no free run directory name for {base}")


class StopSignals:
    """SIGINT/SIGTERM while a batch runs: remember the signal, let the batch wind down.

    Installed only from the main thread (where Python delivers signals); the previous
    handlers are restored when the batch is done.
    """

    def __init__(self) -> None:
        self.event = threading.Event()
        self.signal_name: str | None = None
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> StopSignals:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *_: object) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)

    def _handle(self, signum: int, _frame: object) -> None:
        if self.signal_name is None:
            self.signal_name = signal.Signals(signum).name
        self.event.set()


def _plan_model(jobs: Sequence[Job], settings: BatchSettings, run_id: str, t: str) -> BatchPlan:
    return BatchPlan(
        run_id=run_id,
        t=t,
        agent=settings.agent.name,
        sandbox=settings.sandbox,
        runs=tuple(
            PlannedRun(position=j.position, folder=j.task.folder, iteration=j.iteration)
            for j in jobs
        ),
    )


def open_journal(jobs: Sequence[Job], settings: BatchSettings, resume: Path | None) -> Journal:
    """A new run directory and journal, or the one being resumed (which must have
    planned exactly these runs with this agent; ``JournalError`` otherwise)."""
    if resume is None:
        now = datetime.now(UTC)
        run_dir = new_run_dir(settings.out_dir, now)
        t = now.strftime("%Y-%m-%dT%H:%M:%SZ")
        return Journal.create(run_dir, _plan_model(jobs, settings, run_dir.name, t))
    journal = Journal.open(resume)
    wanted = _plan_model(jobs, settings, journal.plan.run_id, journal.plan.t)
    if wanted != journal.plan:
        raise JournalError(
            f"{resume / BATCH_FILE}: planned {len(journal.plan.runs)} run(s) of agent "
            f"{journal.plan.agent!r} (sandbox {journal.plan.sandbox}); this command plans "
            f"{len(wanted.runs)} of {wanted.agent!r} (sandbox {wanted.sandbox}): resume "
            "with the same tasks, agent, --iterations and --sandbox"
        )
    return journal


def run_batch(
    tasks: Sequence[Task],
    settings: BatchSettings,
    *,
    static_rules: Sequence[Rule] = (),
    on_done: Callable[[Job, RunRecord], None] | None = None,
    skipped_tasks: Sequence[str] = (),
    resume: Path | None = None,
) -> BatchResult:
    """Run, finish and publish one batch (see the module doc); with ``resume``, only the
    runs the journal in that directory does not hold (or holds as interrupted)."""
    jobs = plan(tasks, settings.iterations)
    if settings.sandbox == "bwrap":
        # Before the first task: a sandbox that leaks refuses the batch (raises).
        hand_over(settings.identity, settings.home)
        self_check_in_scratch(settings.home, settings.identity, bwrap=settings.bwrap)
    journal = open_journal(jobs, settings, resume)
    done, errors = journal.finished()
    todo = [j for j in jobs if j.position not in done or needs_rerun(done[j.position])]
    snapshots = integrity.HomeSnapshots(
        settings.home,
        granted_paths(settings.agent.skills, settings.home),
        enabled=settings.integrity.inventory_active,
        profile=settings.integrity.profile,
        extra_roots=settings.integrity.inventory_roots,
        once=integrity.inventory_once(settings.home_settings, settings.confinement),
    )
    # Orphans of the agents re-parent to the harness; whatever becomes its child during
    # the batch is killed after each run (-j 1), at the end of the batch (-j N), and
    # at once when the batch is interrupted.
    become_subreaper()
    orphans = ChildBaseline.now()
    per_run_orphans = orphans if settings.jobs <= 1 else None
    # The batch's detector (its compiled plans, shared by every run) and the lock that
    # keeps it single-threaded.
    lock, detector = threading.Lock(), Detector()
    # No grading box runs while another run's agent does (harness.grading_turns).
    turns = GradingTurns()
    started = time.monotonic()
    knowledge = (
        integrity.harness_knowledge(
            tasks,
            home=settings.home,
            results_root=settings.out_dir,
            protect=settings.audit.protect,
            profile=settings.integrity.profile,
        )
        if settings.integrity.detect
        else None
    )

    # One cgroup per run under one batch directory; stale ones of dead harnesses swept.
    cgroups = cgroup.BatchCgroups.open()
    if isinstance(cgroups, str):
        log.info("runs are contained without a cgroup: %s", cgroups)
    with StopSignals() as stop:
        snapshots.before_batch()

        def execute(job: Job) -> None:
            record = run_and_finish(
                job,
                settings,
                static_rules=static_rules,
                snapshots=snapshots,
                knowledge=knowledge,
                orphans=per_run_orphans,
                stop=stop.event,
                lock=lock,
                detector=detector,
                cgroups=cgroups,
                home_evidence_root=(
                    journal.run_dir if settings.home_settings.keep_writes else None
                ),
                turns=turns,
            )
            with lock:
                record = journal_record(journal, job.position, record)
                done[job.position] = record
            if on_done is not None:
                on_done(job, record)

        try:
            _run_jobs(todo, execute, settings.jobs, stop, orphans)
        finally:
            sweep_orphans(orphans, "at the end of the batch")
            if not isinstance(cgroups, str):
                cgroups.close()
        result = publish(journal, jobs, done, settings, skipped_tasks, stop.signal_name)
    result.errors[:0] = errors
    manifest_elapsed = time.monotonic() - started
    log.debug("batch %s took %.1fs", journal.run_dir.name, manifest_elapsed)
    return result


def run_and_finish(
    job: Job,
    settings: BatchSettings,
    *,
    static_rules: Sequence[Rule],
    snapshots: integrity.HomeSnapshots,
    knowledge: HarnessKnowledge | None,
    orphans: ChildBaseline | None,
    stop: threading.Event,
    lock: threading.Lock,
    detector: Detector | None = None,
    cgroups: cgroup.BatchCgroups | str | None = None,
    home_evidence_root: Path | None = None,
    turns: GradingTurns | None = None,
) -> RunRecord:
    """One job end to end, as a local batch and a cluster worker both run it: the home
    snapshot around the agent, :func:`run_job`, then :func:`finish_run` under ``lock``
    with ``detector`` (the batch's, which ``lock`` guards; a fresh one when None).
    ``cgroups``: the batch's run cgroups (a worker without them uses its process's).
    ``home_evidence_root``: the batch directory the run's home writes are kept under
    (None: not kept). ``turns``: the batch's agent/box turns (None: a worker alone)."""
    rules = snapshots.start_task(job.task.name)
    try:
        record = run_job(
            job,
            settings,
            orphans=orphans,
            stop=stop,
            leftovers=leftover_paths(rules, job.task.prompt, settings.home),
            knowledge=knowledge,
            cgroups=cgroups,
            home_evidence=(
                evidence_dir(home_evidence_root, job.position, job.task.folder, job.iteration)
                if home_evidence_root is not None
                else None
            ),
            turns=turns,
        )
    finally:
        snapshots.finish_task(job.task.name)
    # Scanning and scoring are CPU-bound (the GIL serialises them anyway); one at a
    # time keeps the detector's shared caches single-threaded.
    with lock:
        return finish_run(
            record,
            static_rules=static_rules,
            rules=rules,
            settings=settings,
            knowledge=knowledge,
            answers=integrity.task_answers(job.task),
            own_material=integrity.task_files(job.task),
            detector=detector,
        )


# A record a cluster worker's loss left errored carries this mark; --resume runs it again
# (the loss was the cluster's, not the agent's).
LOST_WITH_WORKER_KEY = "lost_with_worker"


def needs_rerun(record: RunRecord) -> bool:
    """Whether ``--resume`` runs this journaled record's job again: it was interrupted,
    lost with a cluster worker, or failed by the machine (no space, descriptors or
    memory for its grading box: harness.box_shortage)."""
    return (
        record.status == "interrupted"
        or bool(getattr(record, LOST_WITH_WORKER_KEY, False))
        or infrastructure_reason(record) is not None
    )


def journal_record(journal: Journal, position: int, record: RunRecord) -> RunRecord:
    """Write ``record``; if it cannot be written, write it errored, without its
    transcript and through the edge parser again (a record too strange to encode must
    not cost the run its place)."""
    try:
        journal.write(position, record)
        return record
    except Exception as exc:
        failed = mark_failed(record, "writing the record", exc).to_json()
        failed.update(trajectory=[], output="", **{TRANSCRIPT_TRUNCATED_KEY: True})
        # Whatever else could not be encoded (a name that is not UTF-8) is escaped.
        safe = parse_record(escape_surrogates(failed))
        safe.rulesets.merge(record.rulesets)
        try:
            journal.write(position, safe)
        except Exception:
            log.exception("run %s: cannot be journaled", record.label)
        return safe


def _run_jobs(
    jobs: Sequence[Job],
    execute: Callable[[Job], None],
    workers: int,
    stop: StopSignals,
    orphans: ChildBaseline,
) -> None:
    """Run ``jobs`` on ``workers`` threads; on a stop, launch nothing more and kill every
    agent process (all harness children since the baseline, and their trees) until the
    running jobs have returned."""
    pending = list(reversed(jobs))
    running: set[Future[None]] = set()
    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        while pending or running:
            while pending and len(running) < workers and not stop.event.is_set():
                running.add(pool.submit(execute, pending.pop()))
            if not running:
                break
            finished, running = wait(running, timeout=_POLL_S, return_when=FIRST_COMPLETED)
            for future in finished:
                exc = future.exception()
                if exc is not None:  # execute guards every stage; this is a harness bug
                    log.error("a run failed outside its guards: %r", exc)
            if stop.event.is_set() and running:
                cgroup.end_all()
                sweep_orphans(orphans, f"on {stop.signal_name}")


# How often the coordinator looks at the stop flag while runs are in flight.
_POLL_S = 0.1


def batch_manifest(
    plan: BatchPlan,
    settings: BatchSettings,
    *,
    skipped_tasks: Sequence[str] = (),
    not_run: Sequence[str] = (),
    interrupted_by: str | None = None,
    records: Sequence[RunRecord] = (),
) -> Manifest:
    """The batch's manifest; ``records`` (plan order) give its ``homePassedBefore``."""
    augmentation: tuple[str, ...] = ("sandboxed",) if settings.sandbox == "bwrap" else ()
    if not settings.confinement.active:
        augmentation += ("unconfined",)
    if not settings.home_settings.fresh:
        augmentation += ("persistent-home",)
    if settings.allow_host_network:
        # The operator granted network: true (harness.host_network): a containment choice.
        augmentation += ("host-network",)
    return Manifest(
        run_id=plan.run_id,
        t=plan.t,
        setup_id=setup_id_for(settings.agent.model, settings.agent.name, augmentation),
        model=settings.agent.model,
        harness=settings.agent.name,
        augmentation=augmentation,
        planned_runs=len(plan.runs),
        not_run=tuple(not_run),
        skipped_tasks=tuple(skipped_tasks),
        interrupted_by=interrupted_by,
        home_passed_before=_home_passed_before(records),
    )


def _home_passed_before(records: Sequence[RunRecord]) -> tuple[str, ...]:
    """``folder#iteration: <check> (<file>)`` of every run whose home already passed a
    ~/ check before its agent started (bounded: a batch of many runs lists the first)."""
    found: list[str] = []
    for record in records:
        label = f"{record.folder or record.name}#{record.iteration}"
        for passing in home_passed_before(getattr(record, HOME_PASSED_BEFORE, None)):
            if len(found) >= MAX_HOME_PASSED_BEFORE:
                return tuple(found)
            found.append(f"{label}: {passing}")
    return tuple(found)


def publish(
    journal: Journal,
    jobs: Sequence[Job],
    done: dict[int, RunRecord],
    settings: BatchSettings,
    skipped_tasks: Sequence[str] = (),
    interrupted_by: str | None = None,
    extra_manifest: Mapping[str, Any] | None = None,
) -> BatchResult:
    """Write results.json, rows.json and manifest.json from the finished runs
    (``extra_manifest``: keys only some batches have, e.g. a cluster batch's workers).

    Runs are in plan order; a run that never started has no record and is listed in
    the manifest's ``notRun``. The three files are staged together and renamed into
    place together, so readers never see them disagree.
    """
    errors: list[str] = []
    records = [done[j.position] for j in jobs if j.position in done]
    not_run = [f"{j.task.folder}#{j.iteration}" for j in jobs if j.position not in done]
    manifest = batch_manifest(
        journal.plan,
        settings,
        skipped_tasks=skipped_tasks,
        not_run=not_run,
        interrupted_by=interrupted_by,
        records=records,
    )
    raw = [record.to_json() for record in records]
    rows: list[ResultRow] = []
    try:
        rows = build_rows(records, manifest)  # typed: rows read attributes
    except Exception as exc:
        errors.append(f"rows failed: {type(exc).__name__}: {exc}")
    # The journal's table holds every ruleset its runs name; a record that never
    # reached it brings its own.
    rulesets = RulesetTable()
    rulesets.merge(journal.rulesets)
    for record in records:
        rulesets.merge(record.rulesets)
    document = results_document(
        raw, run_id=manifest.run_id, t=manifest.t, manifest=manifest, rulesets=rulesets
    )
    run_dir = journal.run_dir
    written = True
    try:
        write_files_atomic(
            {
                run_dir / RESULTS_FILE: dumps(document.to_json()),
                run_dir / ROWS_FILE: dumps([row.to_json() for row in rows]),
                run_dir / MANIFEST_FILE: dumps(
                    {
                        **manifest.to_json(),
                        "evidenceSources": list(settings.evidence_sources),
                        **(extra_manifest or {}),
                    }
                ),
            }
        )
    except (OSError, ValueError) as exc:
        # The runs are safe in the journal: --resume writes the files again.
        written = False
        errors.append(
            f"{run_dir}: cannot write {RESULTS_FILE}, {ROWS_FILE} and {MANIFEST_FILE} "
            f"({type(exc).__name__}: {exc}); the finished runs are in {run_dir / 'runs'}, "
            f"and --resume {run_dir} writes them"
        )
    return BatchResult(
        run_dir=run_dir,
        records=records,
        rows=rows,
        manifest=manifest,
        errors=errors,
        interrupted_by=interrupted_by,
        published=written,
    )
