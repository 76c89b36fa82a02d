"""One run captured: a fresh workspace and home, the agent under its launcher (Landlock,
a fresh home, every capability dropped; in bubblewrap with ``--sandbox bwrap``), the
audit and containment around it, then the verification checks in the clean grading box.

:func:`run_job` never raises for an agent failure: a crashed or timed-out agent keeps
its partial transcript and the record says why. Finishing the record (scan, then
score) is :mod:`benchguard.harness.finish`; the batch around it is
:mod:`benchguard.harness.batch`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import os
import shutil
import sys
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from benchguard.detection.context import SCAN_CONTEXT_KEY
from benchguard.detection.detector import TRANSCRIPT_TRUNCATED_KEY
from benchguard.detection.harness_evidence import TRANSCRIPT_PROBLEM_KEY
from benchguard.detection.inventory import filter_rules_for_prompt
from benchguard.detection.knowledge import HarnessKnowledge, run_context
from benchguard.detection.models import Rule
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
    launcher_files,
)
from benchguard.harness.containment import RunContainment, separate_script, separation_works
from benchguard.harness.delivered_code import DELIVERED_CODE_KEY, delivered_code
from benchguard.harness.disk_budget import DEFAULT_DISK_BUDGET, size_text, xfsz_exit
from benchguard.harness.grading_turns import GradingTurns
from benchguard.harness.granted import changed, digest, granted_inputs
from benchguard.harness.harness_namespaces import SandboxGate
from benchguard.harness.home import (
    HomeSettings,
    RunHome,
    home_view,
    keep_writes,
    make_run_home,
)
from benchguard.harness.identity import AgentIdentity, hand_over
from benchguard.harness.memory_limit import default_memory_budget
from benchguard.harness.model_proxy import ModelProxy, bridge_script, model_endpoint
from benchguard.harness.process import ChildBaseline, Exit, run_process
from benchguard.harness.prompt_delivery import (
    PROMPT_DELIVERY_KEY,
    add_model_request,
    argv_delivery,
)
from benchguard.harness.sandbox import (
    SandboxSpec,
    bwrap_argv,
    interpreter_paths,
)
from benchguard.harness.seccomp import record as seccomp_record
from benchguard.harness.tampering import TAMPERING_KEY, TamperWatch
from benchguard.harness.tasks import Task
from benchguard.harness.trajectory import capture, read_tail
from benchguard.harness.transcript_channel import TranscriptChannel
from benchguard.harness.verification import (
    HOME_PASSED_BEFORE_KEY,
    CheckSandbox,
    Grading,
    HomeFiles,
    grade,
)
from benchguard.harness.workspace import Scratch, granted_paths, make_scratch
from benchguard.record.filenames import FileName
from benchguard.record.infrastructure import mark_infrastructure
from benchguard.records import RunRecord, parse_record
from benchguard.scoring.judge import Judge

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
    # The operator's --allow-host-network: a task or agent asking for network: true
    # gets the host's network (harness.host_network); pre-flight refuses it otherwise.
    allow_host_network: bool = False
    # What each run's writable space may hold, in bytes (harness.disk_budget).
    disk_budget: int = DEFAULT_DISK_BUDGET
    # Each run's memory limit in bytes (harness.memory_limit); None: the default for
    # this batch's -j (a fraction of the machine's memory over the runs at once).
    memory_budget: int | None = None

    @property
    def run_memory(self) -> int:
        """The memory limit each run of this batch gets, in bytes."""
        if self.memory_budget is not None:
            return self.memory_budget
        return default_memory_budget(self.jobs)

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
        # The code files the run added or changed, read at the agent's end.
        "delivered_code": None,
        "confined": settings.confinement.active,
        # What network the agent had (run_network): "host" only by the operator's
        # --allow-host-network (harness.host_network).
        "network": run_network(job, settings),
        "landlock_abi": settings.confinement.abi or None,
        # The launcher's seccomp filter (harness/seccomp.py): it exits 125 when it cannot
        # install it, so a run whose agent started ran under it.
        "seccomp": seccomp_record(),
        "home_mode": settings.home_settings.mode,
        "home_writes": None,
        # The run's disk budget and how it was enforced (harness.disk_budget): replaced
        # by what was measured once its scratch exists.
        "disk_budget": {"bytes": settings.disk_budget},
        # What the agent was handed as its prompt beside the task's (prompt_delivery.py);
        # None: the agent never started.
        PROMPT_DELIVERY_KEY: None,
    }


def _command(
    job: Job,
    settings: BatchSettings,
    scratch_paths: Scratch,
    granted: Sequence[Path] = (),
    run_home: RunHome | None = None,
    record: dict[str, Any] | None = None,
    gate: SandboxGate | None = None,
    own_cgroup: Path | None = None,
) -> tuple[list[str], dict[str, str], dict[str, Path], ModelProxy | None]:
    agent = settings.agent
    argv = render_argv(
        agent, prompt=job.task.prompt, workspace=scratch_paths.workspace, home=settings.home
    )
    if record is not None:
        # Digested as handed to exec, before any wrapper (bridge, launcher, bwrap).
        record[PROMPT_DELIVERY_KEY] = argv_delivery(job.task.prompt, agent.argv, argv)
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
    if agent.network == "model" and not job.task.network and _own_network(settings):
        # Model-only network: a network namespace of its own (the sandbox's, or the
        # separation's) and a bridge from the endpoint's loopback port there to a socket
        # the harness serves (model_proxy), which reaches the endpoint and nothing else.
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

    def confined(argv: list[str], tmp: Path) -> list[str]:
        return _confined(
            argv,
            settings,
            scratch_paths,
            state_dirs,
            sockets,
            tmp=tmp,
            home=run_home,
            own_cgroup=own_cgroup,
        )

    if settings.sandbox == "bwrap":
        read_only = sandbox_read_only(agent, settings.home)
        # Confined, the sandbox's tmp is the run's own directory, as unsandboxed, never
        # the sandbox's /tmp: host paths under /tmp (a checkout and its venv, an
        # operator's tree) are bound beneath it, and a grant on /tmp would let the agent
        # list the directories bwrap makes for them (the checkout's src/ and .venv).
        tmp = scratch_paths.root / "tmp"
        run_tmp: tuple[Path, ...] = ()
        if settings.confinement.active:
            tmp.mkdir(mode=0o700)
            env.setdefault("TMPDIR", str(tmp))
            run_tmp = (tmp,)
        argv = confined(argv, tmp)
        spec = SandboxSpec(
            workspace=scratch_paths.workspace,
            home=settings.home,
            home_layers=run_home.upper.parent if run_home is not None else None,
            writable_files=(scratch_paths.trajectory_file, *sockets),
            writable_dirs=(*state_dirs.values(), *run_tmp),
            read_only=read_only,
            read_only_inside=tuple(granted),
            network=bool(job.task.network or agent.network is True),
        )
        # Not the transcript channel: it stays the harness's, write-only for the agent.
        hand_over(settings.identity, scratch_paths.workspace, *state_dirs.values(), *run_tmp)
        if run_home is not None:
            hand_over(settings.identity, run_home.upper.parent)
        argv = bwrap_argv(spec, argv, bwrap=settings.bwrap, identity=settings.identity, gate=gate)
    else:
        # The host's /tmp holds other runs' scratch: the run gets its own.
        tmp = scratch_paths.root / "tmp"
        if settings.confinement.active or run_home is not None:
            tmp.mkdir(mode=0o700)
            env.setdefault("TMPDIR", str(tmp))
        argv = confined(argv, tmp)
    return argv, env, state_dirs, proxy


def _own_network(settings: BatchSettings) -> bool:
    """Whether a run without host network gets a network namespace of its own: always
    in the sandbox, and unsandboxed when the batch is confined and the separation works
    here (it makes the namespace, harness/containment; --unconfined promises nothing)."""
    if settings.sandbox == "bwrap":
        return True
    return settings.confinement.active and separation_works() is None


def host_network(job: Job, settings: BatchSettings) -> bool:
    """Whether the run keeps the host's network: its task or its agent asks for it
    (``network: true``; ``network: model`` reaches its endpoint through the bridge)."""
    return bool(job.task.network or settings.agent.network is True)


def run_network(job: Job, settings: BatchSettings) -> str:
    """The network the run's agent had, for its record and row: ``host`` (its task or
    agent asked for network: true and the operator allowed it), ``shared`` (no network
    namespace could be made: unsandboxed and unconfined or unseparated, so it is the
    host's), ``model`` (its own namespace, the endpoint through the model bridge) or
    ``none`` (its own namespace, loopback only)."""
    if host_network(job, settings):
        return "host"
    if not _own_network(settings):
        return "shared"
    return "model" if settings.agent.network == "model" else "none"


def _confined(
    argv: list[str],
    settings: BatchSettings,
    scratch_paths: Scratch,
    state_dirs: dict[str, Path],
    sockets: Sequence[Path],
    *,
    tmp: Path,
    home: RunHome | None = None,
    own_cgroup: Path | None = None,
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
        own_cgroup=own_cgroup,
        # Per file, by the kernel, for the agent and all it starts (harness.disk_budget).
        fsize=settings.disk_budget,
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
    # The Landlock launcher runs the agent (inside the sandbox too): its file, and the
    # seccomp filter it loads from beside it.
    paths.extend(launcher_files())
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
    turns: GradingTurns | None = None,
) -> RunRecord:
    """Run one agent on one task and verify it; never raises for an agent failure.

    ``turns``: the batch's :class:`GradingTurns`; the agent runs in an agent turn and
    the grading box in a box turn, so no box runs while another run's agent does.

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
    containment: RunContainment | None = None
    gate: SandboxGate | None = None
    # The agent's turn (GradingTurns): taken just before it starts, given back once
    # its last process is dead, or by the finally below on a harness fault.
    agent_turn = contextlib.ExitStack()
    try:
        scratch = make_scratch(job.task, settings.disk_budget)
        run_home = make_run_home(settings.home_settings, settings.home, scratch.root)
        if knowledge is not None:
            record[SCAN_CONTEXT_KEY] = _scan_context(knowledge, scratch.workspace)
        if settings.agent.trajectory == "jsonl":
            channel = TranscriptChannel(scratch.trajectory_file, limit=settings.disk_budget)
        granted = granted_inputs(job.task, settings.home)
        record["granted_inputs"] = [str(path) for path in granted]
        if settings.sandbox == "bwrap" and settings.audit.mode == "fanotify":
            # The sandbox's namespace is registered before the agent runs in it, so
            # every observer names its mounts however briefly it lives.
            gate = SandboxGate.make(scratch.root)
        # Made before the command: the run's cgroup is the one part of /sys/fs/cgroup
        # its allow-list grants (confine.sysfs_read).
        containment = RunContainment.start(
            cgroups if cgroups is not None else cgroup.process_batch(),
            f"{job.position}",
            # Confined and unsandboxed: no other run's scratch in its namespace
            # (the sandbox makes its own /tmp; --unconfined promises nothing).
            separate=scratch.root
            if settings.sandbox != "bwrap" and settings.confinement.active
            else None,
            host_network=host_network(job, settings),
            memory=settings.run_memory,
        )
        own_cgroup = containment.cgroup.directory if containment.cgroup is not None else None
        argv, env, state_dirs, proxy = _command(
            job, settings, scratch, granted, run_home, record, gate=gate, own_cgroup=own_cgroup
        )
        if _findable(argv[0], env, scratch.workspace):
            # Nothing to contain or trace when the program does not exist (the tracer
            # would report that as the agent's own failure): its start error stays.
            session = RunSession(
                settings.audit,
                containment,
                scratch.root,
                protected=_protected(job, settings, scratch, leftovers)
                if settings.audit.active
                else None,
                sandbox_gate=gate,
            )
            argv = session.command(argv)
        timeout = min(job.task.timeout, settings.agent.timeout or job.task.timeout)
        home_files = HomeFiles.snapshot(job.task, settings.home)
        if home_files.passing_before:
            # Shown on the row and the manifest: such a check counts only changed bytes.
            record[HOME_PASSED_BEFORE_KEY] = list(home_files.passing_before)
        workspace_before = tree_state(scratch.workspace)
        watch = TamperWatch.before_agent(
            job.task, scratch.workspace, session.protected if session is not None else None
        )
        granted_before = digest(granted)
        if turns is not None:
            agent_turn.enter_context(turns.agent(stop))
        finished = run_process(
            argv,
            cwd=scratch.workspace,
            env=env,
            timeout_s=timeout,
            stdout_file=scratch.stdout_file,
            stderr_file=scratch.stderr_file,
            trace_log=session.trace_log if session is not None else None,
            watch=scratch.disk.watch if scratch.disk is not None else None,
        )
        # The moment the agent ended: what it delivered is fixed from here on.
        watch.agent_ended()
        if watch.end is not None:
            # What the box will import, read by the harness: a forged transcript cannot
            # hide it from the deliverable rules (harness.delivered_code).
            record[DELIVERED_CODE_KEY] = delivered_code(scratch.workspace, watch.start, watch.end)
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
        watch.tree_gone(session is not None and session.containment.kills_whole_tree)
        # Sandboxed the binds refuse the write; unsandboxed it is at least on the record.
        record["granted_inputs_changed"] = changed(granted_before, granted)
        if orphans is not None:
            strays += sweep_orphans(orphans, f"after {job.task.folder}#{job.iteration}")
        agent_turn.close()
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
        over_budget = _over_budget(finished, scratch, settings.disk_budget)
        if over_budget is None:
            over_budget = _over_memory(record.get("containment"))
        if over_budget is None and channel is not None and channel.overflowed:
            over_budget = (
                "disk budget exceeded: the transcript passed the disk budget of "
                f"{size_text(settings.disk_budget)} (the rest was dropped)"
            )
        if scratch.disk is not None:
            record["disk_budget"] = scratch.disk.facts()
        if stop is not None and stop.is_set():
            record.update(status="interrupted", error="interrupted: the batch was stopped")
        elif finished.start_error is not None:
            record.update(status="error", error=f"agent could not start: {finished.start_error}")
        elif launcher_error is not None:
            record.update(status="error", error=f"agent could not start: {launcher_error}")
        elif over_budget is not None:
            # Never clean, never graded: what it delivered was cut off by the budget.
            record.update(status="error", error=over_budget)
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
        if record["status"] not in ("interrupted",) and started and over_budget is None:
            box_turn = turns.box(stop) if turns is not None else contextlib.nullcontext()
            with box_turn:
                graded = _grade(job, settings, scratch, run_home, home_files, watch)
            record.update(verification_report=graded.report, hook_files=graded.hook_files)
            if graded.infrastructure_error is not None:
                mark_infrastructure(record, graded.infrastructure_error)
            watch.graded(graded.tampering, graded.foreign)
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
        agent_turn.close()
        if session is None and containment is not None and containment.cgroup is not None:
            containment.cgroup.remove()  # no session took the run's cgroup over
        if channel is not None:
            channel.close()
            channel.remove()
        if proxy is not None:
            proxy.close()
            _model_request(record, job.task.prompt, proxy)
        if session is not None:
            session.remove()
        if gate is not None:
            gate.close()
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


def _grade(
    job: Job,
    settings: BatchSettings,
    scratch: Scratch,
    run_home: RunHome | None,
    home_files: HomeFiles,
    watch: TamperWatch,
) -> Grading:
    """The run's checks in its grading box."""
    return grade(
        job.task,
        workspace=scratch.workspace,
        home=(
            settings.home
            if run_home is None
            else home_view(run_home, job.task, scratch.root / "home-view")
        ),
        sandbox=settings.check_sandbox,
        home_files=home_files,
        # A deliverable that is a protected file (a hard link) is not graded.
        exclude=watch.linked,
        # What the run held when its processes were all dead: a file another process
        # changed since is not graded.
        delivered=watch.delivered(),
        # What the run could fill: its scratch, and a persistent home.
        own_trees=(scratch.root,) if run_home is not None else (scratch.root, settings.home),
        # What each check may write beyond its copy: the run's own budget.
        disk_budget=settings.disk_budget,
    )


def _model_request(record: dict[str, Any], prompt: str, proxy: ModelProxy) -> None:
    """Fold what the proxy read of the first model request into the delivery."""
    delivery = record.get(PROMPT_DELIVERY_KEY)
    if not isinstance(delivery, dict):
        return
    proxy.tap.finish()
    add_model_request(delivery, prompt, proxy.tap.user_message)
    if proxy.tap.user_message is None:
        delivery["model_request_note"] = proxy.tap.note or "no model request passed the proxy"


def _over_budget(finished: Exit, scratch: Scratch, budget: int) -> str | None:
    """The record's error when the run reached its disk budget: the watchdog stopped it,
    a file passed the per-file limit (SIGXFSZ), or its scratch is full as it ended
    (an agent that met ENOSPC and exited 0 anyway); None otherwise."""
    prefix = "disk budget exceeded: "
    if finished.stopped is not None:
        return f"{prefix}{finished.stopped}; the run was stopped"
    if xfsz_exit(finished.returncode):
        return (
            f"{prefix}a file passed the per-file limit of {size_text(budget)} "
            "(the agent was killed by SIGXFSZ)"
        )
    if scratch.disk is not None:
        reason = scratch.disk.look()
        if reason is not None:
            return f"{prefix}{reason} as the agent ended"
    return None


def _over_memory(containment: Any) -> str | None:
    """The record's error when the kernel OOM-killed a process of the run at its own
    memory limit (harness.memory_limit): that run's failure, never a sibling's; None
    otherwise."""
    if not isinstance(containment, dict):
        return None
    kills, limit = containment.get("memory_oom_kills"), containment.get("memory_limit")
    if not isinstance(kills, int) or kills <= 0 or not isinstance(limit, int):
        return None
    return (
        f"memory limit reached: the kernel killed {kills} process"
        f"{'es' if kills != 1 else ''} of this run at its memory limit of "
        f"{size_text(limit)} (--memory-budget)"
    )


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
            # Run by the run's first process, before the init (harness.separate_exec).
            separate_script(),
            settings.home,
            scratch.root,
        ),
        own_trees=(settings.home, scratch.root),
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


def sweep_orphans(orphans: ChildBaseline, when: str) -> int:
    killed = orphans.sweep_new()
    if killed:
        log.warning("killed %d orphaned agent process(es) %s", killed, when)
    return killed
