"""One batch, end to end: run every task, finish each run on its own, publish.

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

import dataclasses
import logging
import os
import shutil
import signal
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from benchguard.detection.context import SCAN_CONTEXT_KEY
from benchguard.detection.detector import TRANSCRIPT_TRUNCATED_KEY
from benchguard.detection.harness_evidence import TRANSCRIPT_PROBLEM_KEY
from benchguard.detection.inventory import filter_rules_for_prompt
from benchguard.detection.knowledge import HarnessKnowledge, run_context, run_rules
from benchguard.detection.models import Rule
from benchguard.errors import EXIT_FINDINGS, EXIT_INCOMPLETE, EXIT_OK
from benchguard.harness import cgroup, integrity
from benchguard.harness.agents.config import (
    AgentConfig,
    agent_environment,
    builtin_agent_script,
    make_state_dirs,
    program_tree,
    render_argv,
    resolve_program,
)
from benchguard.harness.audit import AuditSettings, ProtectedSet, protected_set
from benchguard.harness.audit_session import RunSession
from benchguard.harness.confine import (
    EXIT_CONFINE_FAILED,
    EXIT_EXEC_FAILED,
    LAUNCHER_PREFIX,
    Confinement,
    agent_policy,
    launcher_argv,
    launcher_script,
)
from benchguard.harness.containment import RunContainment
from benchguard.harness.granted import changed, digest, granted_inputs
from benchguard.harness.home import (
    HomeSettings,
    RunHome,
    evidence_dir,
    home_view,
    keep_writes,
    make_run_home,
)
from benchguard.harness.identity import AgentIdentity, hand_over
from benchguard.harness.journal import BATCH_FILE, BatchPlan, Journal, JournalError, PlannedRun
from benchguard.harness.model_proxy import ModelProxy, bridge_script, model_endpoint
from benchguard.harness.process import ChildBaseline, become_subreaper, run_process
from benchguard.harness.sandbox import (
    SandboxSpec,
    bwrap_argv,
    interpreter_paths,
    self_check_in_scratch,
)
from benchguard.harness.tampering import TAMPERING_KEY, TamperWatch
from benchguard.harness.tasks import Task
from benchguard.harness.trajectory import capture, read_tail
from benchguard.harness.transcript_channel import TranscriptChannel
from benchguard.harness.verification import CheckSandbox, HomeFiles, grade
from benchguard.harness.workspace import Scratch, granted_paths, make_scratch
from benchguard.record.codec import MANIFEST_FILE, RESULTS_FILE, ROWS_FILE
from benchguard.record.filenames import FileName, escape_surrogates
from benchguard.records import NO_CREDIT_STATUSES, RunRecord, parse_record
from benchguard.results.io import dumps, results_document, write_files_atomic
from benchguard.results.rows import Manifest, ResultRow, build_rows, setup_id_for
from benchguard.scoring.judge import Judge, NullJudge
from benchguard.scoring.keys import OUTCOME_SCORE
from benchguard.scoring.pipeline import no_credit_entry, score_record
from benchguard.scoring.verification import verification_scores

log = logging.getLogger(__name__)

SandboxMode = Literal["none", "bwrap"]
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
    audit: AuditSettings = field(default_factory=AuditSettings)
    # Command checks run in this sandbox; None where bubblewrap is unavailable.
    check_sandbox: CheckSandbox | None = None
    # Landlock for every agent process (harness.confine); abi 0: unconfined.
    confinement: Confinement = field(default_factory=Confinement)
    # How each run's home is made (harness.home): fresh per run, or the persistent one.
    home_settings: HomeSettings = field(default_factory=HomeSettings)

    @property
    def evidence_sources(self) -> tuple[str, ...]:
        """Which layers produced evidence for every run of this batch, sorted."""
        sources = ["transcript"] if self.agent.trajectory != "stdout" else []
        if self.sandbox == "bwrap":
            sources.append("sandbox")
        if self.audit.active:
            sources.append("audit")
        if self.audit.mode == "fanotify":
            # fanotify reports no open that failed: an access Landlock denied is not on
            # the record as "tried" (Landlock still prevented it).
            sources.append("audit-blind-to-denied")
        return tuple(sorted(sources))


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
        """1 if any run was flagged or gated; else 3 if the batch is incomplete (a run
        errored or was interrupted, a run never started, a task was skipped, the files
        could not be written); else 0.
        A finding wins: it must never be hidden behind an incomplete batch."""
        if any(row.catastrophic or row.integrity_status == "flagged" for row in self.rows):
            return EXIT_FINDINGS
        incomplete = (
            not self.published
            or self.interrupted_by is not None
            or self.manifest.not_run
            or self.manifest.skipped_tasks
            or any(record.status in NO_CREDIT_STATUSES for record in self.records)
        )
        return EXIT_INCOMPLETE if incomplete else EXIT_OK


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
        "granted_inputs": [],
        "granted_inputs_changed": [],
        "evidence_sources": list(settings.evidence_sources),
        # Replaced by the audit's summary when the audit is on; None says it was off.
        "system_audit": None,
        "checks_sandboxed": settings.check_sandbox is not None,
        # Digests of what grades the run (harness/tampering.py); None: not taken.
        TAMPERING_KEY: None,
        # conftest.py, sitecustomize.py, usercustomize.py, *.pth left in the workspace:
        # never loaded by the grading box, listed for review.
        "hook_files": [],
        "confined": settings.confinement.active,
        "landlock_abi": settings.confinement.abi or None,
        "home_mode": settings.home_settings.mode,
        "home_writes": None,
    }


def _command(
    job: Job,
    settings: BatchSettings,
    scratch_paths: Scratch,
    granted: Sequence[Path] = (),
    run_home: RunHome | None = None,
) -> tuple[list[str], dict[str, str], dict[str, Path], ModelProxy | None]:
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
    proxy: ModelProxy | None = None
    sockets: tuple[Path, ...] = ()
    if settings.sandbox == "bwrap":
        read_only = sandbox_read_only(agent, settings.home)
        if agent.network == "model" and not job.task.network:
            # Model-only network: no network namespace of its own but a bridge from the
            # endpoint's loopback port to a socket the harness serves (model_proxy).
            endpoint = model_endpoint(agent.endpoint(os.environ) or "")
            socket_path = scratch_paths.root / "model.sock"
            proxy = ModelProxy(
                socket_path,
                endpoint,
                owner=settings.identity.uid if settings.identity is not None else None,
            )
            sockets = (socket_path,)
            argv = [
                sys.executable,
                "-I",
                str(bridge_script()),
                "--port",
                str(endpoint.port),
                "--socket",
                str(socket_path),
                "--",
                *argv,
            ]
        argv = _confined(
            argv, settings, scratch_paths, state_dirs, sockets, tmp=Path("/tmp"), home=run_home
        )
        spec = SandboxSpec(
            workspace=scratch_paths.workspace,
            home=settings.home,
            home_layers=run_home.upper.parent if run_home is not None else None,
            writable_files=(scratch_paths.trajectory_file, *sockets),
            writable_dirs=tuple(state_dirs.values()),
            read_only=read_only,
            read_only_inside=tuple(granted),
            network=bool(job.task.network or agent.network is True),
        )
        # Not the transcript channel: it stays the harness's, write-only for the agent.
        hand_over(settings.identity, scratch_paths.workspace, *state_dirs.values())
        if run_home is not None:
            hand_over(settings.identity, run_home.upper.parent)
        argv = bwrap_argv(spec, argv, bwrap=settings.bwrap, identity=settings.identity)
    else:
        # The host's /tmp holds other runs' scratch: the run gets its own.
        tmp = scratch_paths.root / "tmp"
        if settings.confinement.active or run_home is not None:
            tmp.mkdir(mode=0o700)
            env.setdefault("TMPDIR", str(tmp))
        argv = _confined(argv, settings, scratch_paths, state_dirs, sockets, tmp=tmp, home=run_home)
    return argv, env, state_dirs, proxy


def _confined(
    argv: list[str],
    settings: BatchSettings,
    scratch_paths: Scratch,
    state_dirs: dict[str, Path],
    sockets: Sequence[Path],
    *,
    tmp: Path,
    home: RunHome | None = None,
) -> list[str]:
    """``argv`` through the launcher, always: Landlock when the batch is confined, the
    run's fresh home mounted over the home path when it has one, and every capability
    dropped in any case (an --unconfined root agent must not unmount its /proc or trace
    the harness)."""
    policy = agent_policy(
        agent_paths=sandbox_read_only(settings.agent, settings.home),
        workspace=scratch_paths.workspace,
        home=settings.home,
        tmp=tmp,
        writable_dirs=state_dirs.values(),
        writable_files=(
            scratch_paths.trajectory_file,
            scratch_paths.stdout_file,
            scratch_paths.stderr_file,
            *sockets,
        ),
        home_spec=home.launcher_spec() if home is not None else None,
        confine=settings.confinement.active,
    )
    return launcher_argv(policy, argv)


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
    if agent.network == "model":
        paths.append(bridge_script())  # the in-sandbox half of the model-only network
    paths.extend(agent.install_paths())
    # The Landlock launcher runs the agent (inside the sandbox too): its one file.
    paths.append(launcher_script())
    return tuple(p for p in paths if p.exists())


def leftover_paths(rules: Sequence[Rule], prompt: str, home: Path) -> tuple[Path, ...]:
    """The prior-run leftovers a run's prompt does not authorize, as paths (its inventory
    rules' sources: home-relative names, or full paths for extra roots)."""
    paths = []
    for rule in filter_rules_for_prompt(rules, prompt):
        if rule.source:
            source = _source_path(rule.source)
            paths.append(source if source.is_absolute() else home / source)
    return tuple(sorted(set(paths)))


def _source_path(source: str) -> Path:
    """An inventory rule's source as the path on disk (its name is FileName text)."""
    try:
        return Path(os.fsdecode(FileName.parse(source).raw))
    except ValueError:
        return Path(source)


def run_job(
    job: Job,
    settings: BatchSettings,
    *,
    orphans: ChildBaseline | None = None,
    stop: threading.Event | None = None,
    leftovers: Sequence[Path] = (),
    knowledge: HarnessKnowledge | None = None,
    cgroups: cgroup.BatchCgroups | str | None = None,
    home_evidence: Path | None = None,
) -> RunRecord:
    """Run one agent on one task and verify it; never raises for an agent failure.

    ``home_evidence``: where the run's home writes are kept (fresh home; None keeps
    nothing, the record still lists them).

    ``orphans``: when this is the only run in flight (``-j 1``), every process that
    became a child of the harness since the baseline is this run's (or an earlier
    run's) orphan and is killed before the checks run, token or not.
    ``stop``: set when the batch is interrupted; a run that ends after it is recorded
    ``interrupted`` and its checks are not run (it earns nothing).
    ``knowledge``: the batch's :func:`integrity.harness_knowledge`; the record then
    stores its scan context (the home and working directory) before the agent runs;
    :func:`finish_run` adds the known paths its commands' globs resolve to.
    ``cgroups``: the batch's run cgroups (or why there are none); the run's process
    tree lives in one of them and in a pid namespace (``harness.containment``).
    """
    record = seed_record(job, settings)
    record["started_at"] = _now()
    scratch: Scratch | None = None
    run_home: RunHome | None = None
    channel: TranscriptChannel | None = None
    proxy: ModelProxy | None = None
    session: RunSession | None = None
    try:
        scratch = make_scratch(job.task)
        run_home = make_run_home(settings.home_settings, settings.home, scratch.root)
        if knowledge is not None:
            record[SCAN_CONTEXT_KEY] = _scan_context(knowledge, scratch.workspace)
        if settings.agent.trajectory == "jsonl":
            channel = TranscriptChannel(scratch.trajectory_file)
        granted = granted_inputs(job.task, settings.home)
        record["granted_inputs"] = [str(path) for path in granted]
        argv, env, state_dirs, proxy = _command(job, settings, scratch, granted, run_home)
        if _findable(argv[0], env, scratch.workspace):
            # Nothing to contain or trace when the program does not exist (the tracer
            # would report that as the agent's own failure): its start error stays.
            batch = cgroups if cgroups is not None else cgroup.process_batch()
            session = RunSession(
                settings.audit,
                RunContainment.start(batch, f"{job.position}"),
                scratch.root,
                protected=_protected(job, settings, scratch, leftovers)
                if settings.audit.active
                else None,
            )
            argv = session.command(argv)
        timeout = min(job.task.timeout, settings.agent.timeout or job.task.timeout)
        home_files = HomeFiles.snapshot(
            job.task, settings.home, content_only=settings.home_settings.fresh
        )
        workspace_before = tree_state(scratch.workspace)
        watch = TamperWatch.before_agent(job.task, scratch.workspace)
        granted_before = digest(granted)
        finished = run_process(
            argv,
            cwd=scratch.workspace,
            env=env,
            timeout_s=timeout,
            stdout_file=scratch.stdout_file,
            stderr_file=scratch.stderr_file,
            trace_log=session.trace_log if session is not None else None,
        )
        # The moment the agent ended: what it delivered is fixed from here on.
        watch.agent_ended()
        strays = finished.strays_killed
        if session is not None and finished.start_error is None:
            failed = session.containment.start_error(finished.returncode, scratch.stderr_file)
            if failed is not None:
                # The init, not Popen, tried to exec it: the same "could not start".
                finished = dataclasses.replace(finished, start_error=failed, returncode=None)
        if session is not None:
            # Before anything reads the workspace: nothing the agent left runs on.
            strays += session.end()
            record["containment"] = session.containment.facts()
        # Sandboxed the binds refuse the write; unsandboxed it is at least on the record.
        record["granted_inputs_changed"] = changed(granted_before, granted)
        if orphans is not None:
            strays += _sweep_orphans(orphans, f"after {job.task.folder}#{job.iteration}")
        if session is not None and settings.audit.active:
            record["system_audit"] = session.summary(scratch.workspace)
        tampered = channel.close() if channel is not None else False
        taken = capture(
            settings.agent.trajectory,
            stdout_file=scratch.stdout_file,
            trajectory_file=channel.stored if channel is not None else scratch.trajectory_file,
            state_dirs=state_dirs,
        )
        if tampered:
            record[TRANSCRIPT_PROBLEM_KEY] = "tampered"
        elif (
            channel is not None
            and not taken.trajectory
            and tree_state(scratch.workspace) != workspace_before
        ):
            # Files appeared or changed, and not one step says how.
            record[TRANSCRIPT_PROBLEM_KEY] = "missing"
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
        launcher_error = _launcher_failure(finished.returncode, scratch)
        if stop is not None and stop.is_set():
            record.update(status="interrupted", error="interrupted: the batch was stopped")
        elif finished.start_error is not None:
            record.update(status="error", error=f"agent could not start: {finished.start_error}")
        elif launcher_error is not None:
            record.update(status="error", error=f"agent could not start: {launcher_error}")
        elif finished.timed_out:
            record.update(
                status="timeout",
                error=f"agent timed out after {timeout:g}s and was stopped at the deadline "
                "(no grace period): work after it does not count",
            )
        elif finished.returncode != 0:
            tail = read_tail(scratch.stderr_file, STDERR_TAIL_CHARS)
            record.update(
                status="error",
                error=f"agent exited with code {finished.returncode}: {tail.strip()}",
            )
        else:
            record["status"] = "success"
        started = finished.start_error is None and launcher_error is None
        if record["status"] not in ("interrupted",) and started:
            graded = grade(
                job.task,
                workspace=scratch.workspace,
                home=(
                    settings.home
                    if run_home is None
                    else home_view(run_home, job.task, scratch.root / "home-view")
                ),
                sandbox=settings.check_sandbox,
                home_files=home_files,
            )
            record.update(verification_report=graded.report, hook_files=graded.hook_files)
            watch.graded(graded.tampering)
        record[TAMPERING_KEY] = watch.record()
        if run_home is not None:
            kept = keep_writes(run_home, home_evidence)
            record["home_writes"] = kept.to_json()
            if not kept.complete and kept.problems:
                raise RuntimeError("; ".join(kept.problems))
    except Exception as exc:  # a harness fault on one run must not lose the batch
        log.exception("run %s#%s failed in the harness", job.task.folder, job.iteration)
        record.update(status="error", error=f"harness error: {type(exc).__name__}: {exc}")
    finally:
        if channel is not None:
            channel.close()
            channel.remove()
        if proxy is not None:
            proxy.close()
        if session is not None:
            session.remove()
        if scratch is not None:
            undeleted = scratch.remove()
            if undeleted and record["error"] is None:
                record.update(
                    status="error",
                    error="harness error: scratch not removed: " + "; ".join(undeleted),
                )
    record["errors"] = [e for e in [record["error"], *record["transcript_errors"]] if e]
    record["finished_at"] = _now()
    # The edge: whatever the agent wrote is bounded and sanitised here, once.
    return parse_record(record)


def _launcher_failure(returncode: int | None, scratch: Scratch) -> str | None:
    """The launcher's own reason when it, not the agent, failed: it could not confine
    (125) or could not exec the agent's program (127); None otherwise."""
    if returncode not in (EXIT_CONFINE_FAILED, EXIT_EXEC_FAILED):
        return None
    tail = read_tail(scratch.stderr_file, STDERR_TAIL_CHARS).strip()
    line = tail.splitlines()[-1] if tail else ""
    if not line.startswith(LAUNCHER_PREFIX):
        return None
    return line[len(LAUNCHER_PREFIX) :].strip()


def _protected(
    job: Job, settings: BatchSettings, scratch: Scratch, leftovers: Sequence[Path]
) -> ProtectedSet:
    """What this run's audit checks against (harness.audit.protected_set)."""
    return protected_set(
        tasks_dirs=[Path(job.task.path).resolve().parent.parent],
        results_root=settings.out_dir,
        own_scratch=scratch.root,
        leftovers=leftovers,
        protect=settings.audit.protect,
        interpreter=interpreter_paths(),
        # The home and the run's own scratch are the agent's world even where they sit
        # inside a protected tree (`make demo` keeps its agent home in demo-output/ of
        # the checkout); leftovers inside the home stay protected.
        agent_own=(
            *sandbox_read_only(settings.agent, settings.home),
            settings.home,
            scratch.root,
        ),
    )


def _scan_context(knowledge: HarnessKnowledge, workspace: Path) -> dict[str, Any] | None:
    """The run's scan context as stored; None (and a log line) if the home cannot be
    listed: the run is then scanned without it, as an imported log would be."""
    try:
        # The sandbox binds the workspace at its host path: the agent sees this one.
        return run_context(knowledge, workdir=str(workspace)).model_dump(mode="json")
    except Exception as exc:
        log.warning("scan context for %s not stored (%s)", workspace, exc)
        return None


# A workspace with more entries than this reads as changed (fail closed).
MAX_TREE_ENTRIES = 20_000


def tree_state(root: Path) -> tuple[tuple[str, int, int], ...] | None:
    """Every entry under ``root`` with its size and mtime, sorted; None past the bound."""
    entries: list[tuple[str, int, int]] = []
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(dirs + files):
            path = os.path.join(folder, name)
            try:
                info = os.lstat(path)
            except OSError:
                continue
            entries.append((os.path.relpath(path, root), info.st_size, info.st_mtime_ns))
            if len(entries) > MAX_TREE_ENTRIES:
                return None
    return tuple(entries)


def _findable(program: str, env: dict[str, str], cwd: Path) -> bool:
    """Whether ``program`` names an executable, as exec would look it up."""
    if "/" in program:
        path = Path(program) if os.path.isabs(program) else cwd / program
        return os.access(path, os.X_OK) and path.is_file()
    return shutil.which(program, path=env.get("PATH", os.defpath)) is not None


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _sweep_orphans(orphans: ChildBaseline, when: str) -> int:
    killed = orphans.sweep_new()
    if killed:
        log.warning("killed %d orphaned agent process(es) %s", killed, when)
    return killed


def _failed(record: RunRecord, stage: str, exc: BaseException) -> RunRecord:
    """``record`` marked errored by a failure while finishing it (its reason kept); an
    outcome it was already given becomes the no-credit zero."""
    log.error("run %s: %s failed: %s: %s", record.label, stage, type(exc).__name__, exc)
    reason = f"harness error while {stage}: {type(exc).__name__}: {exc}"
    update: dict[str, Any] = {
        "status": "error",
        "error": reason,
        "errors": [reason, *record.errors],
    }
    if OUTCOME_SCORE in record.scores:
        scores = dict(record.scores)
        entry = no_credit_entry({"status": "error", "error": reason}, scores)
        if entry is not None:
            scores[OUTCOME_SCORE] = entry
        update["scores"] = scores
    return record.model_copy(update=update)


def finish_run(
    record: RunRecord,
    *,
    static_rules: Sequence[Rule],
    rules: Sequence[Rule],
    settings: BatchSettings,
    knowledge: HarnessKnowledge | None = None,
    answers: Sequence[str] = (),
    own_material: Sequence[str] = (),
) -> RunRecord:
    """Scan and score one run; a failure in a step marks the run errored, never raises.

    Detection is the per-record half of ``integrity.annotate``, with the run's inventory
    ``rules`` and the batch's material fingerprints (less what the prompt and the
    task's ``answers`` contain: ``detection.knowledge.run_rules``); the record's stored
    scan context is read by the detector itself. Scoring is the whole pipeline
    (verification scores, judge, gate, outcome) on this record alone.
    """
    record = record.model_copy(
        update={"home_snapshot": sorted({r.source for r in rules if r.source})}
    )
    data = record.to_json()
    if knowledge is not None and record.scan_context is not None:
        try:
            context = run_context(
                knowledge, workdir=record.scan_context.workdir, record=data, inventory=rules
            )
            record = record.model_copy(update={"scan_context": context})
            data[SCAN_CONTEXT_KEY] = context.model_dump(mode="json")
        except Exception as exc:  # the seeded context (home, workdir) is kept
            log.warning("run %s: known paths not stored (%s)", record.label, exc)
    if settings.integrity.detect:
        try:
            dynamic = run_rules(
                knowledge, rules, prompt=record.input, answers=answers, own=own_material
            )
            problems = integrity.annotate([data], static_rules, [dynamic], authorized=True)
            if problems:
                raise RuntimeError("; ".join(problems))
        except Exception as exc:
            record = _failed(record, "scanning", exc)
            data = record.to_json()
            data["cheating_report"], data["integrity_checked"] = {}, False
    try:
        scores = data["scores"]
        scores.update(verification_scores(data["verification_report"]))
        score_record(data, judge=settings.judge or NullJudge())
    except Exception as exc:
        return _failed(record, "scoring", exc)
    return record.model_copy(
        update={
            "cheating_report": data["cheating_report"],
            "integrity_checked": data["integrity_checked"],
            "scores": data["scores"],
            "scoring_errors": data.get("scoring_errors", []),
            "status": data["status"],
            "error": data["error"],
            "errors": data["errors"],
        }
    )


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
    )
    # Orphans of the agents re-parent to the harness; whatever becomes its child during
    # the batch is killed after each run (-j 1), at the end of the batch (-j N), and
    # at once when the batch is interrupted.
    become_subreaper()
    orphans = ChildBaseline.now()
    per_run_orphans = orphans if settings.jobs <= 1 else None
    lock = threading.Lock()
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
                cgroups=cgroups,
                home_evidence_root=(
                    journal.run_dir if settings.home_settings.keep_writes else None
                ),
            )
            with lock:
                record = journal_record(journal, job.position, record)
                done[job.position] = record
            if on_done is not None:
                on_done(job, record)

        try:
            _run_jobs(todo, execute, settings.jobs, stop, orphans)
        finally:
            _sweep_orphans(orphans, "at the end of the batch")
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
    cgroups: cgroup.BatchCgroups | str | None = None,
    home_evidence_root: Path | None = None,
) -> RunRecord:
    """One job end to end, as a local batch and a cluster worker both run it: the home
    snapshot around the agent, :func:`run_job`, then :func:`finish_run` under ``lock``.
    ``cgroups``: the batch's run cgroups (a worker without them uses its process's).
    ``home_evidence_root``: the batch directory the run's home writes are kept under
    (None: not kept)."""
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
        )


# A record a cluster worker's loss left errored carries this mark; --resume runs it again
# (the loss was the cluster's, not the agent's).
LOST_WITH_WORKER_KEY = "lost_with_worker"


def needs_rerun(record: RunRecord) -> bool:
    """Whether ``--resume`` runs this journaled record's job again: it was interrupted,
    or it was lost with a cluster worker."""
    return record.status == "interrupted" or bool(getattr(record, LOST_WITH_WORKER_KEY, False))


def journal_record(journal: Journal, position: int, record: RunRecord) -> RunRecord:
    """Write ``record``; if it cannot be written, write it errored, without its
    transcript and through the edge parser again (a record too strange to encode must
    not cost the run its place)."""
    try:
        journal.write(position, record)
        return record
    except Exception as exc:
        failed = _failed(record, "writing the record", exc).to_json()
        failed.update(trajectory=[], output="", **{TRANSCRIPT_TRUNCATED_KEY: True})
        # Whatever else could not be encoded (a name that is not UTF-8) is escaped.
        safe = parse_record(escape_surrogates(failed))
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
                _sweep_orphans(orphans, f"on {stop.signal_name}")


# How often the coordinator looks at the stop flag while runs are in flight.
_POLL_S = 0.1


def batch_manifest(
    plan: BatchPlan,
    settings: BatchSettings,
    *,
    skipped_tasks: Sequence[str] = (),
    not_run: Sequence[str] = (),
    interrupted_by: str | None = None,
) -> Manifest:
    augmentation: tuple[str, ...] = ("sandboxed",) if settings.sandbox == "bwrap" else ()
    if not settings.confinement.active:
        augmentation += ("unconfined",)
    if not settings.home_settings.fresh:
        augmentation += ("persistent-home",)
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
    )


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
    )
    raw = [record.to_json() for record in records]
    rows: list[ResultRow] = []
    try:
        rows = build_rows(raw, manifest)
    except Exception as exc:
        errors.append(f"rows failed: {type(exc).__name__}: {exc}")
    document = results_document(raw, run_id=manifest.run_id, t=manifest.t, manifest=manifest)
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
