"""One batch, end to end: run every task, then detect, gate, finalize and publish.

The order is the reference's, kept on purpose:

1. the home is inventoried before the batch and again just before each run;
2. each run gets a fresh workspace and runs its agent (sandboxed or not), then its
   verification checks; a crashed or timed-out agent keeps its partial transcript;
3. every record is scanned with the static rules plus its own snapshot's rules;
4. ``results.json`` is written raw, so a scoring failure loses nothing;
5. verification scores, the integrity gate and the outcome composite are applied;
6. ``results.json`` is written again, then ``rows.json`` and ``manifest.json``.

Records are seeded with every key up front (the same key set for a success, a crash
and a timeout), so downstream readers never branch on which keys exist.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from benchguard.detection.detector import TRANSCRIPT_TRUNCATED_KEY
from benchguard.detection.models import Rule
from benchguard.harness import integrity
from benchguard.harness.agents.config import (
    AgentConfig,
    agent_environment,
    builtin_agent_script,
    make_state_dirs,
    program_tree,
    render_argv,
    resolve_program,
)
from benchguard.harness.identity import AgentIdentity, hand_over
from benchguard.harness.process import ChildBaseline, become_subreaper, run_process
from benchguard.harness.sandbox import SandboxSpec, bwrap_argv, self_check_in_scratch
from benchguard.harness.tasks import Task
from benchguard.harness.trajectory import capture, read_tail
from benchguard.harness.verification import run_checks
from benchguard.harness.workspace import Scratch, granted_paths, make_scratch
from benchguard.records import parse_record
from benchguard.results.io import dumps, results_document, write_text_atomic
from benchguard.results.rows import Manifest, build_rows, setup_id_for
from benchguard.scoring.judge import Judge
from benchguard.scoring.pipeline import score_records
from benchguard.scoring.verification import verification_scores

log = logging.getLogger(__name__)

SandboxMode = Literal["none", "bwrap"]
RESULTS_FILE = "results.json"
ROWS_FILE = "rows.json"
MANIFEST_FILE = "manifest.json"
# Kept on a failed record so an operator sees why without opening files.
STDERR_TAIL_CHARS = 1000


@dataclass(frozen=True)
class Job:
    """One run in the batch; ``position`` pairs it with its snapshot and its record."""

    position: int
    task: Task
    iteration: int


@dataclass(frozen=True)
class BatchSettings:
    agent: AgentConfig
    home: Path
    out_dir: Path
    iterations: int = 1
    jobs: int = 1
    sandbox: SandboxMode = "none"
    bwrap: str = "bwrap"
    integrity: integrity.IntegritySettings = field(default_factory=integrity.IntegritySettings)
    judge: Judge | None = None
    # Set when the harness is root: sandboxed agents run as this unprivileged uid.
    identity: AgentIdentity | None = None


@dataclass
class BatchResult:
    run_dir: Path
    records: list[dict[str, Any]]
    errors: list[str]


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


def seed_record(job: Job, settings: BatchSettings) -> dict[str, Any]:
    task = job.task
    return {
        "name": task.name,
        "folder": task.folder,
        "iteration": job.iteration,
        "agent": settings.agent.name,
        "input": task.prompt,
        "output": "",
        "trajectory": [],
        "status": "error",
        "error": None,
        "errors": [],
        "transcript_errors": [],
        TRANSCRIPT_TRUNCATED_KEY: False,
        "exit_code": None,
        "duration_s": 0.0,
        "strays_killed": 0,
        "expected_output": task.expected_output,
        "rubric": task.rubric,
        "verification_report": [],
        "scores": {},
        "cheating_report": {},
        "integrity_checked": False,
        "home_snapshot": [],
        "validated": False,
        "sandboxed": settings.sandbox == "bwrap",
    }


def _command(
    job: Job, settings: BatchSettings, scratch_paths: Scratch
) -> tuple[list[str], dict[str, str], dict[str, Path]]:
    agent = settings.agent
    argv = render_argv(
        agent, prompt=job.task.prompt, workspace=scratch_paths.workspace, home=settings.home
    )
    # Agent CLIs' own state (sessions, settings) lives in this run's scratch only.
    state_dirs = make_state_dirs(agent, scratch_paths.root / "agent-state")
    env = agent_environment(
        agent,
        home=settings.home,
        trajectory_file=scratch_paths.trajectory_file,
        parent=os.environ,
        state_dirs=state_dirs,
    )
    if settings.sandbox == "bwrap":
        read_only = sandbox_read_only(agent, settings.home)
        spec = SandboxSpec(
            workspace=scratch_paths.workspace,
            home=settings.home,
            writable_files=(scratch_paths.trajectory_file,),
            writable_dirs=tuple(state_dirs.values()),
            read_only=read_only,
            network=job.task.network or agent.network,
        )
        hand_over(
            settings.identity,
            scratch_paths.workspace,
            scratch_paths.trajectory_file,
            *state_dirs.values(),
        )
        argv = bwrap_argv(spec, argv, bwrap=settings.bwrap, identity=settings.identity)
    return argv, env, state_dirs


def sandbox_read_only(agent: AgentConfig, home: Path) -> tuple[Path, ...]:
    """What the agent's programs need, read-only: granted skills, its own directory
    (only when its argv uses ``{agent_dir}``), the built-in agent's script, and the
    tree of a program found on the agent's ``PATH`` outside the system directories
    (an npm-installed CLI's ``node_modules``)."""
    paths = list(granted_paths(agent.skills, home))
    program = resolve_program(agent)
    if program is not None:
        paths.append(program_tree(program))
    if agent.agent_dir is not None and any("{agent_dir}" in arg for arg in agent.argv):
        paths.append(agent.agent_dir)
    if agent.uses_builtin_agent():
        paths.append(builtin_agent_script())
    return tuple(p for p in paths if p.exists())


def run_job(
    job: Job, settings: BatchSettings, *, orphans: ChildBaseline | None = None
) -> dict[str, Any]:
    """Run one agent on one task and verify it; never raises for an agent failure.

    ``orphans``: when this is the only run in flight (``-j 1``), every process that
    became a child of the harness since the baseline is this run's (or an earlier
    run's) orphan and is killed before the checks run, token or not.
    """
    record = seed_record(job, settings)
    scratch: Scratch | None = None
    try:
        scratch = make_scratch(job.task)
        argv, env, state_dirs = _command(job, settings, scratch)
        timeout = min(job.task.timeout, settings.agent.timeout or job.task.timeout)
        finished = run_process(
            argv,
            cwd=scratch.workspace,
            env=env,
            timeout_s=timeout,
            stdout_file=scratch.stdout_file,
            stderr_file=scratch.stderr_file,
        )
        strays = finished.strays_killed
        if orphans is not None:
            strays += _sweep_orphans(orphans, f"after {job.task.folder}#{job.iteration}")
        taken = capture(
            settings.agent.trajectory,
            stdout_file=scratch.stdout_file,
            trajectory_file=scratch.trajectory_file,
            state_dirs=state_dirs,
        )
        record.update(
            output=taken.output,
            trajectory=taken.trajectory,
            transcript_errors=taken.errors,
            exit_code=finished.returncode,
            # The detector reads this mark: a cut transcript is never a clean scan.
            **{TRANSCRIPT_TRUNCATED_KEY: taken.truncated},
            duration_s=round(finished.duration_s, 3),
            strays_killed=strays,
        )
        if finished.start_error is not None:
            record.update(status="error", error=f"agent could not start: {finished.start_error}")
        elif finished.timed_out:
            record.update(status="timeout", error=f"agent timed out after {timeout:g}s")
        elif finished.returncode != 0:
            tail = read_tail(scratch.stderr_file, STDERR_TAIL_CHARS)
            record.update(
                status="error",
                error=f"agent exited with code {finished.returncode}: {tail.strip()}",
            )
        else:
            record["status"] = "success"
        record["verification_report"] = run_checks(
            job.task, workspace=scratch.workspace, home=settings.home
        )
    except Exception as exc:  # a harness fault on one run must not lose the batch
        log.exception("run %s#%s failed in the harness", job.task.folder, job.iteration)
        record.update(status="error", error=f"harness error: {type(exc).__name__}: {exc}")
    finally:
        if scratch is not None:
            leftovers = scratch.remove()
            if leftovers and record["error"] is None:
                record.update(
                    status="error",
                    error="harness error: scratch not removed: " + "; ".join(leftovers),
                )
    record["errors"] = [e for e in [record["error"], *record["transcript_errors"]] if e]
    # The edge: whatever the agent wrote is bounded and sanitised here, once.
    return parse_record(record).to_json()


def _sweep_orphans(orphans: ChildBaseline, when: str) -> int:
    killed = orphans.sweep_new()
    if killed:
        log.warning("killed %d orphaned agent process(es) %s", killed, when)
    return killed


def run_batch(
    tasks: Sequence[Task],
    settings: BatchSettings,
    *,
    static_rules: Sequence[Rule] = (),
    on_done: Callable[[Job, Mapping[str, Any]], None] | None = None,
) -> BatchResult:
    """Run, detect, score and publish one batch; see the module doc for the order."""
    now = datetime.now(UTC)
    run_dir = new_run_dir(settings.out_dir, now)
    jobs = plan(tasks, settings.iterations)
    snapshots = integrity.HomeSnapshots(
        settings.home,
        granted_paths(settings.agent.skills, settings.home),
        enabled=settings.integrity.inventory_active,
        profile=settings.integrity.profile,
        extra_roots=settings.integrity.inventory_roots,
    )
    snapshots.before_batch()
    if settings.sandbox == "bwrap":
        # Before the first task: a sandbox that leaks refuses the batch (raises).
        hand_over(settings.identity, settings.home)
        self_check_in_scratch(settings.home, settings.identity, bwrap=settings.bwrap)
    inventories: list[tuple[Rule, ...]] = [() for _ in jobs]
    records: list[dict[str, Any]] = [{} for _ in jobs]
    # Orphans of the agents re-parent to the harness; whatever becomes its child during
    # the batch is killed after each run (-j 1) or at the end of the batch (-j N).
    become_subreaper()
    orphans = ChildBaseline.now()
    per_run_orphans = orphans if settings.jobs <= 1 else None

    def execute(job: Job) -> None:
        inventories[job.position] = snapshots.start_task(job.task.name)
        try:
            records[job.position] = run_job(job, settings, orphans=per_run_orphans)
        finally:
            snapshots.finish_task(job.task.name)
        if on_done is not None:
            on_done(job, records[job.position])

    started = time.monotonic()
    try:
        if settings.jobs <= 1:
            for job in jobs:
                execute(job)
        else:
            with ThreadPoolExecutor(max_workers=settings.jobs) as pool:
                for future in [pool.submit(execute, job) for job in jobs]:
                    future.result()
    finally:
        _sweep_orphans(orphans, "at the end of the batch")
    for record, rules in zip(records, inventories, strict=True):
        record["home_snapshot"] = sorted({r.source for r in rules if r.source})
    errors: list[str] = []
    if settings.integrity.detect:
        errors += integrity.annotate(records, static_rules, inventories)
    manifest = batch_manifest(settings, run_dir, now)
    write_results(run_dir, records, manifest)
    errors += publish(records, settings, run_dir, manifest, time.monotonic() - started)
    return BatchResult(run_dir=run_dir, records=records, errors=errors)


def batch_manifest(settings: BatchSettings, run_dir: Path, now: datetime) -> Manifest:
    augmentation = ("sandboxed",) if settings.sandbox == "bwrap" else ()
    return Manifest(
        run_id=run_dir.name,
        t=now.strftime("%Y-%m-%dT%H:%M:%SZ"),
        setup_id=setup_id_for(settings.agent.model, settings.agent.name, augmentation),
        model=settings.agent.model,
        harness=settings.agent.name,
        augmentation=augmentation,
    )


def write_results(run_dir: Path, records: list[dict[str, Any]], manifest: Manifest) -> None:
    document = results_document(records, run_id=manifest.run_id, t=manifest.t, manifest=manifest)
    write_text_atomic(run_dir / RESULTS_FILE, dumps(document.to_json()))


def publish(
    records: list[dict[str, Any]],
    settings: BatchSettings,
    run_dir: Path,
    manifest: Manifest,
    elapsed_s: float,
) -> list[str]:
    """Score in place, then write results, rows and manifest; each stage best-effort."""
    errors: list[str] = []
    for record in records:
        scores = record.setdefault("scores", {})
        if isinstance(scores, dict):
            scores.update(verification_scores(record.get("verification_report")))
    try:
        errors += score_records(records, judge=settings.judge)
    except Exception as exc:
        errors.append(f"scoring failed: {type(exc).__name__}: {exc}")
    write_results(run_dir, records, manifest)
    try:
        rows = [row.to_json() for row in build_rows(records, manifest)]
        write_text_atomic(run_dir / ROWS_FILE, dumps(rows))
    except Exception as exc:
        errors.append(f"rows failed: {type(exc).__name__}: {exc}")
    write_text_atomic(
        run_dir / MANIFEST_FILE, dumps({**manifest.to_json(), "elapsedS": round(elapsed_s, 3)})
    )
    return errors
