"""``benchguard check-run RUN_DIR...``: harness integrity, re-checked on finished runs.

Two checks over the records of one or more run directories (a batch directory
holding ``results.json``, or an ``--out`` directory holding batches):

- **prompt delivery**: every record's ``prompt_delivery`` (harness.prompt_delivery) is
  re-verified against the task files: the task prompt's SHA-256 is computed again from
  the task (``--tasks``, else the batch's ``command.json`` ``tasks_dir``) and compared
  with the digest the record says the task had and with every digest of what the agent
  was handed (argv, the first model request's user message). A difference, a
  delivery the harness itself marked ``altered``, a record with no delivery, or a task
  that can no longer be found is a finding: exit 1 (fail closed: nothing unread passes).
- **identical deliverables**: runs of the same task by different setups (the
  manifest's ``setupId``, else the record's agent) whose deliverables (the digests the
  harness took at agent end, ``tampering.deliverables``: the files the task's file
  checks name) are byte-identical, leaving out files absent at the end and files
  identical to the task's workspace seed (an input the checks also read). Listed as
  groups; a report, never an exit code: a task with one right answer (a number) gives
  every honest solver the same file.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchguard.errors import BadInputError
from benchguard.harness.check_programs import normalise
from benchguard.harness.prompt_delivery import ALTERED, NONE, PROMPT_DELIVERY_KEY, STATUSES, digest
from benchguard.harness.tampering import TAMPERING_KEY, file_digest
from benchguard.harness.tasks import Task, TaskDirError, load_tasks
from benchguard.record.codec import read_json, read_results
from benchguard.record.run import record_iteration, record_task_folder

RESULTS = "results.json"
COMMAND = "command.json"


@dataclass(frozen=True)
class CheckRunRequest:
    run_dirs: tuple[Path, ...]
    # The task directory to verify against; None: each batch's command.json says.
    tasks_dir: Path | None = None


@dataclass(frozen=True)
class RunRef:
    batch: str
    setup: str
    label: str

    def to_json(self) -> dict[str, str]:
        return {"batch": self.batch, "setup": self.setup, "run": self.label}


@dataclass(frozen=True)
class PromptFinding:
    run: RunRef
    problems: tuple[str, ...]

    def to_json(self) -> dict[str, Any]:
        return {**self.run.to_json(), "problems": list(self.problems)}


@dataclass(frozen=True)
class DeliverableGroup:
    task: str
    digest: str
    files: tuple[str, ...]
    runs: tuple[RunRef, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "task": self.task,
            "digest": self.digest,
            "files": list(self.files),
            "setups": sorted({r.setup for r in self.runs}),
            "runs": [r.to_json() for r in self.runs],
        }


@dataclass
class CheckRunResult:
    batches: list[str] = field(default_factory=list)
    runs: int = 0
    intact: int = 0
    prompt_findings: list[PromptFinding] = field(default_factory=list)
    # Runs whose agent was handed no prompt (its argv names no {prompt}): nothing added.
    not_handed: list[RunRef] = field(default_factory=list)
    identical: list[DeliverableGroup] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return 1 if self.prompt_findings else 0

    def to_json(self) -> dict[str, Any]:
        return {
            "batches": self.batches,
            "runs": self.runs,
            "promptIntact": self.intact,
            "promptFindings": [f.to_json() for f in self.prompt_findings],
            "promptNotHanded": [r.to_json() for r in self.not_handed],
            "identicalDeliverables": [g.to_json() for g in self.identical],
        }


def check_runs(request: CheckRunRequest) -> CheckRunResult:
    """Re-verify every record's prompt delivery and group identical deliverables."""
    if not request.run_dirs:
        raise BadInputError("check-run: give at least one run directory")
    batches = sorted({b for d in request.run_dirs for b in _batches(d)})
    result = CheckRunResult(batches=[str(b) for b in batches])
    tasks_cache: dict[Path, dict[str, Task]] = {}
    # (task, deliverables digest) -> runs, with the files they cover.
    seen: dict[tuple[str, str], list[RunRef]] = defaultdict(list)
    covered: dict[tuple[str, str], tuple[str, ...]] = {}
    for batch in batches:
        tasks = _tasks_for(batch, request.tasks_dir, tasks_cache)
        document = read_results(batch / RESULTS)
        setup = _setup(document.manifest, batch)
        for record in document.records:
            if not isinstance(record, Mapping):
                raise BadInputError(f"{batch / RESULTS}: a record is not an object")
            folder = record_task_folder(record)
            ref = RunRef(
                str(batch),
                setup or str(record.get("agent") or "?"),
                f"{folder}#{record_iteration(record)}",
            )
            result.runs += 1
            task = tasks.get(folder)
            problems = _prompt_problems(record, task)
            if problems:
                result.prompt_findings.append(PromptFinding(ref, tuple(problems)))
            elif _status(record) == NONE:
                result.not_handed.append(ref)
            else:
                result.intact += 1
            if task is not None:
                produced = _produced(record, task)
                if produced:
                    key = (folder, _combined(produced))
                    seen[key].append(ref)
                    covered[key] = tuple(sorted(produced))
    for (folder, combined), runs in sorted(seen.items()):
        if len({r.setup for r in runs}) > 1:
            result.identical.append(
                DeliverableGroup(folder, combined, covered[(folder, combined)], tuple(runs))
            )
    return result


def _batches(path: Path) -> list[Path]:
    if not path.is_dir():
        raise BadInputError(f"{path}: no such run directory")
    if (path / RESULTS).is_file():
        return [path.resolve()]
    found = sorted(p.parent.resolve() for p in path.glob(f"*/{RESULTS}"))
    if not found:
        raise BadInputError(
            f"{path}: holds no {RESULTS} (give a batch directory or the --out directory "
            "holding batches)"
        )
    return found


def _tasks_for(
    batch: Path, override: Path | None, cache: dict[Path, dict[str, Task]]
) -> dict[str, Task]:
    if override is not None:
        tasks_dir = override
    else:
        command = read_json(batch / COMMAND) if (batch / COMMAND).is_file() else None
        named = command.get("tasks_dir") if isinstance(command, dict) else None
        if not isinstance(named, str) or not named:
            raise BadInputError(
                f"{batch / COMMAND}: names no tasks_dir; give the tasks with --tasks"
            )
        tasks_dir = Path(named)
    key = tasks_dir.resolve()
    if key not in cache:
        try:
            loaded = load_tasks(tasks_dir, allow_workspace_code=True)
        except TaskDirError as exc:
            raise BadInputError(f"--tasks {exc}") from None
        if loaded.errors:
            raise BadInputError("; ".join(loaded.errors))
        cache[key] = {task.folder: task for task in loaded.tasks}
    return cache[key]


def _setup(manifest: Mapping[str, Any] | None, batch: Path) -> str:
    for source in (manifest, _read_manifest(batch)):
        if isinstance(source, Mapping) and isinstance(source.get("setupId"), str):
            return str(source["setupId"])
    return ""


def _read_manifest(batch: Path) -> Any:
    path = batch / "manifest.json"
    return read_json(path) if path.is_file() else None


def _prompt_problems(record: Mapping[str, Any], task: Task | None) -> list[str]:
    entry = record.get(PROMPT_DELIVERY_KEY)
    if task is None:
        return [
            f"no task {record_task_folder(record)!r} in the task directory: nothing to verify against"
        ]
    if not isinstance(entry, Mapping):
        if record.get("exit_code") is None and record.get("status") == "error":
            return []  # the agent never started: it was handed nothing
        return ["the record holds no prompt_delivery: what the agent was handed is unknown"]
    expected = digest(task.prompt)
    problems: list[str] = []
    status = entry.get("status")
    if status not in STATUSES:
        problems.append(f"prompt_delivery.status is {status!r}, not one of {', '.join(STATUSES)}")
    elif status == ALTERED:
        problems.extend(str(p) for p in entry.get("problems") or ["the harness marked it altered"])
    recorded = entry.get("task")
    if not isinstance(recorded, Mapping) or recorded.get("sha256") != expected["sha256"]:
        problems.append(
            "the task's prompt is not the one the run recorded (the task file changed, or the record did)"
        )
    delivered = entry.get("delivered")
    if not isinstance(delivered, list) or (not delivered and status != NONE):
        problems.append("nothing recorded as handed to the agent")
    elif delivered and status == NONE:
        problems.append("marked as handed no prompt, yet argv entries are recorded")
    else:
        for item in delivered:
            if not isinstance(item, Mapping) or item.get("sha256") != expected["sha256"]:
                where = item.get("index") if isinstance(item, Mapping) else "?"
                problems.append(f"argv[{where}] handed to the agent is not the task's prompt")
    model = entry.get("model_request")
    if isinstance(model, Mapping) and model.get("sha256") != expected["sha256"]:
        problems.append("the first model request's user message is not the task's prompt")
    return list(dict.fromkeys(problems))


def _status(record: Mapping[str, Any]) -> Any:
    entry = record.get(PROMPT_DELIVERY_KEY)
    return entry.get("status") if isinstance(entry, Mapping) else None


def _produced(record: Mapping[str, Any], task: Task) -> dict[str, str]:
    """The deliverables the agent left, by digest: present at the end and not the seed's."""
    tampering = record.get(TAMPERING_KEY)
    deliverables = tampering.get("deliverables") if isinstance(tampering, Mapping) else None
    if not isinstance(deliverables, Mapping):
        return {}
    seed = task.seed_dir()
    produced: dict[str, str] = {}
    for name, value in deliverables.items():
        if not isinstance(value, str) or not isinstance(name, str) or normalise(name) is None:
            continue
        if seed is not None and file_digest(seed / name) == value:
            continue
        produced[name] = value
    return produced


def _combined(produced: Mapping[str, str]) -> str:
    text = json.dumps(sorted(produced.items()))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
