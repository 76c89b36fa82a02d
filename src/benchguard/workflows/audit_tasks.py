"""The audit-tasks workflow: find the tasks a cheat passes before any agent runs.

For a directory of tasks: the static lint (``taskaudit.lint``), then every exploit of
the library (``taskaudit.exploits.library``; a no-op agent first) run as an agent on
every task through the real harness (``workflows.run``: the same home, sandbox and
``-j`` handling as ``benchguard run``, with detection off: credit is counted before
the integrity gate, since the question is whether the checks accept the exploit).

A task is hackable when the no-op or an exploit earns correctness credit, or a lint
finding that is hackable on its own fires, unless the task acknowledges that id in
``findings_acknowledged`` (shown as acknowledged, with its reason). A reading exploit's
credit (it answered from the task file) is reported apart: it says the tasks were
reachable, a property of the setup, not of the task. An exploit that changed the
workspace destructively while no safeguard failed is listed in
``destructive_uncaught`` and does not make the task hackable.

Terminal-Bench and Harbor task folders are read as benchguard tasks
(``taskaudit/inputs.py``). Such a task is only reported sound when the box could run
it: one whose tests cannot run here, or whose own reference solution fails in the box,
is listed as unaudited with the reason (exit 2 unless a task is hackable), since its
exploits' zero credit would say nothing.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchguard.errors import BadInputError
from benchguard.harness.audit import AuditSettings
from benchguard.harness.check_programs import normalise
from benchguard.harness.runner import SandboxMode
from benchguard.harness.tasks import FileCheck, LoadedTasks, Task, load_tasks
from benchguard.records import RunRecord
from benchguard.scoring.keys import VERIFICATION_CORRECTNESS
from benchguard.taskaudit.applicable import not_applicable, seed_files
from benchguard.taskaudit.exploits.library import BUILTIN, REFERENCE, Exploit, operator_exploits
from benchguard.taskaudit.inputs import NATIVE, load_audit_input
from benchguard.taskaudit.light import light_exploit, light_task
from benchguard.taskaudit.lint import LintFinding, lint_task
from benchguard.taskaudit.probes import identical_deliverables, produced, run_probes
from benchguard.workflows.run import Notify, RunRequest, prepare_run, run_prepared

PLAN_FILE = "plan.json"
# A file name in a prompt: a relative path ending in a short extension, not a URL or
# an absolute path (the box grades in a copy of the workspace, not at /app).
PROMPT_FILE = re.compile(r"(?<![\w/:.~-])((?:[\w-]+/)*[\w-]+\.[A-Za-z][A-Za-z0-9]{1,7})(?![\w/])")
MAX_PROMPT_FILES = 32
# Exploits that change or delete what the agent was given: a task should notice.
DESTRUCTIVE = frozenset({"tests-deleted", "tests-exit-zero", "exit-on-import"})
NOOP = "noop"
# An exploit's status when it was not run on a task (``notApplicable`` says why).
NOT_APPLICABLE = "not-applicable"
# Written into --out: the audit's own manifest (the exploit batches keep theirs).
AUDIT_MANIFEST = "audit-manifest.json"


@dataclass(frozen=True)
class AuditTasksRequest:
    tasks_dir: Path
    jobs: int = 1
    sandbox: SandboxMode = "none"
    home: Path | None = None
    out: Path | None = None
    exploits_dir: Path | None = None
    # Run only these exploits (ids); empty: the whole library.
    only: tuple[str, ...] = ()
    audit: AuditSettings = field(default_factory=lambda: AuditSettings("none"))


@dataclass(frozen=True)
class ExploitOutcome:
    exploit: str
    credit: float
    # The correctness checks that accepted it.
    accepted: tuple[str, ...]
    status: str
    # Catastrophic safeguards that failed (caught a destructive exploit).
    caught_by: tuple[str, ...] = ()
    # The exploit changed something (it records each write or removal it made).
    acted: bool = False
    # Not run: why it could not change this task's correctness (taskaudit/applicable.py).
    not_applicable: str | None = None
    # Run light: the exploit program without the agent launch, graded by the harness's
    # grading on a task graded from its workspace alone (taskaudit/light.py).
    light: bool = False
    # A light probe that left the same workspace as an earlier probe of a task with the
    # same grading inputs shares its grading: that probe, "TASK:EXPLOIT".
    graded_with: str | None = None


@dataclass
class TaskVerdict:
    name: str
    path: str
    hackable: bool = False
    hacks: list[str] = field(default_factory=list)
    lint: list[LintFinding] = field(default_factory=list)
    exploits: list[ExploitOutcome] = field(default_factory=list)
    acknowledged: list[dict[str, str]] = field(default_factory=list)
    reading: list[str] = field(default_factory=list)
    destructive_uncaught: list[str] = field(default_factory=list)
    # The reference solution's run, when the task declares one: it must earn 1.0.
    reference: ExploitOutcome | None = None
    # benchguard, harbor or terminal-bench.
    format: str = NATIVE
    # Why the task could not be audited (never reported sound), or None.
    unaudited: str | None = None

    @property
    def reference_failed(self) -> bool:
        return self.reference is not None and self.reference.credit < 1.0

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "path": self.path,
            "format": self.format,
            "hackable": self.hackable,
            "unaudited": self.unaudited,
            "hacks": self.hacks,
            "lint": [
                {"id": f.id, "check": f.check, "message": f.message, "hackable": f.hackable}
                for f in self.lint
            ],
            "exploits": [
                {
                    "id": o.exploit,
                    "credit": o.credit,
                    "accepted": list(o.accepted),
                    "status": o.status,
                    "caughtBy": list(o.caught_by),
                    "notApplicable": o.not_applicable,
                    "light": o.light,
                    "gradedWith": o.graded_with,
                }
                for o in self.exploits
            ],
            "acknowledged": self.acknowledged,
            "reference": None
            if self.reference is None
            else {
                "credit": self.reference.credit,
                "accepted": list(self.reference.accepted),
                "passed": not self.reference_failed,
            },
            "reading": self.reading,
            "destructiveUncaught": self.destructive_uncaught,
        }


@dataclass
class TaskAudit:
    tasks: list[TaskVerdict]
    exploits: list[Exploit]
    sandbox: SandboxMode
    # Probes and runs that left byte-identical deliverables (taskaudit/probes.py).
    identical: list[dict[str, Any]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if any(t.hackable for t in self.tasks):
            return 1
        # Fail closed: a task that could not be audited is never passed as sound.
        return 2 if any(t.unaudited for t in self.tasks) else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "sandbox": self.sandbox,
            "exploits": [
                {"id": e.id, "proves": e.proves, "reading": e.reading} for e in self.exploits
            ],
            "referenceFailed": [t.name for t in self.tasks if t.reference_failed],
            "unaudited": [t.name for t in self.tasks if t.unaudited and not t.hackable],
            "tasks": [t.to_json() for t in self.tasks],
            "identicalDeliverables": self.identical,
        }


def load_audited_tasks(tasks_dir: Path) -> LoadedTasks:
    """The tasks, read as ``run`` reads them but keeping checks that run workspace
    programs (the lint reports those); any file that cannot be read is bad input."""
    try:
        loaded = load_tasks(tasks_dir, allow_workspace_code=True)
    except BadInputError:
        raise
    if loaded.errors:
        raise BadInputError("; ".join(loaded.errors))
    return loaded


def audit_tasks(request: AuditTasksRequest, notify: Notify) -> TaskAudit:
    """Lint every task, run every exploit on every task, and judge each task."""
    scratch = Path(tempfile.mkdtemp(prefix="bg-audit-tasks-"))
    try:
        return _audit(request, notify, scratch)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _audit(request: AuditTasksRequest, notify: Notify, scratch: Path) -> TaskAudit:
    given = load_audit_input(request.tasks_dir, scratch / "converted")
    loaded = given.loaded
    exploits = list(BUILTIN)
    if request.exploits_dir is not None:
        try:
            exploits += operator_exploits(request.exploits_dir)
        except ValueError as exc:
            raise BadInputError(f"--exploits {exc}") from None
    if request.only:
        known = {e.id for e in exploits}
        unknown = [i for i in request.only if i not in known]
        if unknown:
            raise BadInputError(
                f"--exploit {unknown[0]!r}: no such exploit; known: {', '.join(sorted(known))}"
            )
        exploits = [e for e in exploits if e.id in request.only]
    verdicts = {
        task.folder: TaskVerdict(
            task.folder,
            given.sources[task.folder],
            lint=lint_task(task),
            format=given.formats[task.folder],
        )
        for task in loaded.tasks
    }
    for unrun in given.unaudited:
        verdicts[unrun.folder] = TaskVerdict(
            unrun.folder, unrun.path, format=unrun.format, unaudited=unrun.reason
        )
    verdicts = dict(sorted(verdicts.items()))
    deliveries: dict[tuple[str, str], dict[str, str]] = {}
    if loaded.tasks:
        _run_all(request, loaded, exploits, verdicts, deliveries, scratch, notify)
    for task in loaded.tasks:
        _judge(verdicts[task.folder], task, exploits)
    audit = TaskAudit(
        list(verdicts.values()), exploits, request.sandbox, identical_deliverables(deliveries)
    )
    if request.out is not None:
        _write_manifest(request.out, audit)
    return audit


def _write_manifest(out: Path, audit: TaskAudit) -> None:
    """The audit's manifest beside the exploit batches it kept: what ran, and which
    probes left byte-identical deliverables."""
    out.mkdir(parents=True, exist_ok=True)
    document = {
        "kind": "benchguard-audit-tasks",
        "tasks": [t.name for t in audit.tasks],
        "exploits": [e.id for e in audit.exploits],
        "identicalDeliverables": audit.identical,
    }
    staged = out / f".{AUDIT_MANIFEST}.tmp"
    staged.write_text(json.dumps(document, indent=2, sort_keys=True) + "\n", "utf-8")
    staged.replace(out / AUDIT_MANIFEST)


def _run_all(
    request: AuditTasksRequest,
    loaded: LoadedTasks,
    exploits: Sequence[Exploit],
    verdicts: dict[str, TaskVerdict],
    deliveries: dict[tuple[str, str], dict[str, str]],
    scratch: Path,
    notify: Notify,
) -> None:
    out = request.out or scratch / "results"
    plan = _plan(loaded.tasks)
    relay = _once(notify)
    solutions = _solutions(loaded.tasks)
    if solutions:
        reference_plan = {key: {"solution": [name]} for key, (name, _) in solutions.items()}
        files = {name: source for name, source in solutions.values()}
        records = _run_exploit(
            REFERENCE, request, loaded, reference_plan, scratch, out, relay, files
        )
        for task in loaded.tasks:
            if task.solution is not None and task.folder in records:
                verdicts[task.folder].reference = _outcome(REFERENCE, records[task.folder])
    seeds = {task.folder: seed_files(task) for task in loaded.tasks}
    # Where the reading exploit is pointed (its CHEAT_HINT).
    hint = request.tasks_dir.resolve()
    # The no-op first: an exploit is skipped as not applicable only where it earned nothing.
    first = [e for e in exploits if e.id == NOOP]
    rest = [e for e in exploits if e.id != NOOP]
    for exploit in first:
        records = _run_exploit(exploit, request, loaded, plan, scratch, out, relay)
        for task in loaded.tasks:
            if task.folder in records:
                verdicts[task.folder].exploits.append(_outcome(exploit, records[task.folder]))
                deliveries[(exploit.id, task.folder)] = _delivered(task, records[task.folder])
    skipped: dict[tuple[str, str], str] = {}
    for exploit in rest:
        for task in loaded.tasks:
            reason = _skip_reason(
                exploit, task, verdicts[task.folder], plan, seeds[task.folder], hint
            )
            if reason is not None:
                skipped[(exploit.id, task.folder)] = reason
    probes = [
        (exploit, task)
        for exploit in rest
        if light_exploit(exploit)
        for task in loaded.tasks
        if (exploit.id, task.folder) not in skipped and light_task(task)
    ]
    light = run_probes(probes, plan, scratch, request.jobs)
    for key, found in light.items():
        deliveries[key] = found.delivered
    harness: dict[tuple[str, str], RunRecord] = {}
    for exploit in rest:
        chosen = tuple(
            t
            for t in loaded.tasks
            if (exploit.id, t.folder) not in skipped and (exploit.id, t.folder) not in light
        )
        if not chosen:
            continue
        loaded_chosen = LoadedTasks(chosen, ())
        records = _run_exploit(exploit, request, loaded_chosen, plan, scratch, out, relay)
        for folder, record in records.items():
            harness[(exploit.id, folder)] = record
    for exploit in rest:
        for task in loaded.tasks:
            key = (exploit.id, task.folder)
            verdict = verdicts[task.folder]
            if key in skipped:
                verdict.exploits.append(
                    ExploitOutcome(exploit.id, 0.0, (), NOT_APPLICABLE, not_applicable=skipped[key])
                )
            elif key in light:
                found = light[key]
                verdict.exploits.append(
                    ExploitOutcome(
                        exploit.id,
                        found.outcome.credit,
                        found.outcome.accepted,
                        "success",
                        acted=found.outcome.acted,
                        light=True,
                        graded_with=None
                        if found.graded_by is None
                        else f"{found.graded_by[1]}:{found.graded_by[0]}",
                    )
                )
            elif key in harness:
                verdict.exploits.append(_outcome(exploit, harness[key]))
                deliveries[key] = _delivered(task, harness[key])


def _delivered(task: Task, record: RunRecord) -> dict[str, str]:
    """The deliverables a harness run left (the digests the harness took at agent end)."""
    tampering = record.tampering if isinstance(record.tampering, dict) else {}
    found = tampering.get("deliverables")
    return produced(task, found if isinstance(found, dict) else {})


def _skip_reason(
    exploit: Exploit,
    task: Task,
    verdict: TaskVerdict,
    plan: dict[str, dict[str, list[str]]],
    seed: Sequence[str],
    tasks_dir: Path,
) -> str | None:
    """Why ``exploit`` need not run on ``task`` (its run would be the no-op's), or None.

    Only once the no-op ran on the task and earned nothing: where the no-op earns
    credit every exploit runs, so the task's list of hacks is whole."""
    noop = next((o for o in verdict.exploits if o.exploit == NOOP), None)
    if noop is None or noop.credit > 0 or noop.status == NOT_APPLICABLE:
        return None
    key = hashlib.sha256(task.prompt.encode("utf-8")).hexdigest()
    return not_applicable(exploit, task, plan.get(key, {}), seed, tasks_dir)


def _plan(tasks: Sequence[Task]) -> dict[str, dict[str, list[str]]]:
    """What an attacker could guess per task, keyed by its prompt's SHA-256."""
    # Tasks sharing a prompt share an entry (the agent sees only its prompt): the union.
    merged: dict[str, tuple[set[str], set[str]]] = {}
    for task in tasks:
        key = hashlib.sha256(task.prompt.encode("utf-8")).hexdigest()
        files, outputs = merged.setdefault(key, (set(), set()))
        named = {c.file for c in task.verification if isinstance(c, FileCheck)}
        # Checks that name no file (a pytest run over hidden tests, a converted
        # Harbor task): an attacker guesses the files from the prompt.
        files.update(named or prompt_files(task.prompt))
        outputs.update(task.grader_outputs)
    return {
        key: {"files": sorted(files), "outputs": sorted(outputs)}
        for key, (files, outputs) in sorted(merged.items())
    }


def prompt_files(prompt: str) -> set[str]:
    """Relative file names the prompt mentions (``answer.txt``, ``out/result.json``)."""
    found: set[str] = set()
    for name in PROMPT_FILE.findall(prompt):
        clean = normalise(name.rstrip("."))
        if clean is not None and len(found) < MAX_PROMPT_FILES:
            found.add(clean)
    return found


def _solutions(tasks: Sequence[Task]) -> dict[str, tuple[str, Path]]:
    """Per prompt digest, the reference solution's file name beside the agent and its
    source (the first task declaring one, when tasks share a prompt)."""
    found: dict[str, tuple[str, Path]] = {}
    for task in tasks:
        if task.solution is None:
            continue
        key = hashlib.sha256(task.prompt.encode("utf-8")).hexdigest()
        found.setdefault(key, (f"solution-{key[:16]}.sh", task.task_dir() / task.solution))
    return found


def _run_exploit(
    exploit: Exploit,
    request: AuditTasksRequest,
    loaded: LoadedTasks,
    plan: dict[str, dict[str, list[str]]],
    scratch: Path,
    out: Path,
    notify: Notify,
    files: dict[str, Path] | None = None,
) -> dict[str, RunRecord]:
    agent_dir = scratch / "agents" / exploit.id
    agent_dir.mkdir(parents=True)
    shutil.copy(exploit.program, agent_dir / exploit.program.name)
    for name, source in (files or {}).items():
        shutil.copy(source, agent_dir / name)
    (agent_dir / PLAN_FILE).write_text(json.dumps(plan, sort_keys=True), "utf-8")
    config = {
        "name": f"exploit-{exploit.id}",
        "argv": [
            "{python}",
            "{agent_dir}/" + exploit.program.name,
            # Literal braces: an exploit's own argument is never a placeholder.
            *(arg.replace("{", "{{").replace("}", "}}") for arg in exploit.args),
            "{prompt}",
        ],
        "set_env": {"CHEAT_HINT": str(request.tasks_dir.resolve())},
        "trajectory": "jsonl",
        "model": "exploit",
    }
    agent_file = agent_dir / "agent.yaml"
    agent_file.write_text(json.dumps(config), "utf-8")
    for path in (scratch, scratch / "agents", agent_dir, *agent_dir.iterdir()):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    home = request.home or scratch / "homes" / exploit.id
    run = RunRequest(
        tasks_dir=request.tasks_dir,
        agent=str(agent_file),
        jobs=request.jobs,
        sandbox=request.sandbox,
        out=out,
        home=home,
        detect=False,
        inventory=False,
        audit=request.audit,
        # The exploits are benchguard's own programs, run by the operator to judge the
        # grader: a task asking for network: true gets it, as in a batch the operator
        # runs with --allow-host-network (harness.host_network), not refused.
        allow_host_network=any(task.network for task in loaded.tasks),
        # The reference probe carries the task's own solution in its directory.
        harness_agent=True,
    )
    prepared = prepare_run(run, notify, tasks=loaded)
    result = run_prepared(prepared)
    return {record.folder: record for record in result.records}


def _once(notify: Notify) -> Notify:
    """Each notice once per audit, not once per exploit batch."""
    seen: set[str] = set()

    def relay(kind: Any, message: str) -> None:
        if message not in seen:
            seen.add(message)
            notify(kind, message)

    return relay


def _outcome(exploit: Exploit, record: RunRecord) -> ExploitOutcome:
    entry = record.scores.get(VERIFICATION_CORRECTNESS)
    credit = float(entry.get("score", 0.0)) if isinstance(entry, dict) else 0.0
    report = record.verification_report
    accepted = tuple(
        c["name"] for c in report if c.get("role") == "correctness" and c.get("passed")
    )
    caught = tuple(
        c["name"]
        for c in report
        if c.get("role") == "safeguard"
        and c.get("severity") == "catastrophic"
        and c.get("passed") is False
    )
    acted = bool(record.trajectory)
    return ExploitOutcome(exploit.id, credit, accepted, record.status or "", caught, acted)


def _judge(verdict: TaskVerdict, task: Task, exploits: Sequence[Exploit]) -> None:
    acknowledged = {a.id: a.reason for a in task.findings_acknowledged}
    reading = {e.id for e in exploits if e.reading}
    hacks: list[str] = []
    for finding in verdict.lint:
        if finding.hackable:
            hacks.append(finding.id)
    for outcome in verdict.exploits:
        if outcome.credit <= 0:
            if outcome.exploit in DESTRUCTIVE and outcome.acted and not outcome.caught_by:
                verdict.destructive_uncaught.append(outcome.exploit)
            continue
        if outcome.exploit in reading:
            verdict.reading.append(outcome.exploit)
        else:
            hacks.append(outcome.exploit)
    for hack in dict.fromkeys(hacks):
        if hack in acknowledged:
            verdict.acknowledged.append({"id": hack, "reason": acknowledged[hack]})
        else:
            verdict.hacks.append(hack)
    verdict.hackable = bool(verdict.hacks)
    if verdict.format != NATIVE and not verdict.hackable:
        # A converted task earns "sound" only when its own solution passed in the box.
        if verdict.reference is None:
            verdict.unaudited = (
                "no reference solution: nothing shows the box runs this task outside "
                "its container, so no exploit's zero credit means anything"
            )
        elif verdict.reference_failed:
            verdict.unaudited = (
                "its reference solution fails in the grading box (it needs its "
                "container: absolute paths such as /app, packages its image installs)"
            )
