"""Every light probe of an audit at once: up to ``-j`` at a time, one grading per group.

A probe is one built-in exploit on one task that runs light (``taskaudit/light.py``).
All of an audit's probes go through one pool of ``jobs`` workers (the audit's ``-j``,
as the harness runs its runs), each acting in its own fresh workspace. A probe's
verdict is a function of the workspace it left and of its task's grading inputs, so
probes with the same workspace digest and grading key are graded once and share the
verdict: tasks checked by the same command over the same seed (or two exploits that
leave the same files) cost one grading, not one each. The first probe of a group, in
the audit's fixed order, grades it; the others wait for it. Nothing here depends on
timing: the verdicts, and which probes share one, are the same at any ``-j``.

Each probe also records its deliverables (the files its task's file checks name, or,
for a task with none, the files the plan guessed from the prompt) that it left and
that differ from the seed, by SHA-256: ``identical_deliverables`` groups probes and
runs that left byte-identical ones.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import threading
from collections import defaultdict
from collections.abc import Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchguard.harness.check_programs import normalise
from benchguard.harness.tampering import file_digest
from benchguard.harness.tasks import FileCheck, Task
from benchguard.taskaudit.exploits.library import PROGRAM, Exploit
from benchguard.taskaudit.light import (
    DRIVER,
    Acted,
    LightOutcome,
    act_many,
    check_sandbox,
    discard,
    grade_acted,
    grading_key,
    light_task,
)

PLAN_FILE = "plan.json"
ProbeKey = tuple[str, str]  # (exploit id, task folder)


@dataclass(frozen=True)
class ProbeResult:
    outcome: LightOutcome
    # The deliverables it left, not the seed's: {path: sha256}.
    delivered: dict[str, str]
    # The probe whose grading this one shares (None: it graded its own workspace).
    graded_by: ProbeKey | None = None


def run_probes(
    probes: Sequence[tuple[Exploit, Task]],
    plan: Mapping[str, Mapping[str, Sequence[str]]],
    scratch: Path,
    jobs: int,
) -> dict[ProbeKey, ProbeResult]:
    """Run every probe; a probe missing from the result (its exploit did not exit 0 in
    time) runs through the harness instead."""
    probes = [(e, t) for e, t in probes if light_task(t)]
    if not probes:
        return {}
    agent_dir = _agent_dir(plan, scratch / "light")
    sandbox = check_sandbox() if any(_has_command(t) for _, t in probes) else None
    keys = {t.folder: grading_key(t) for _, t in probes}
    lock = threading.Lock()
    # (workspace digest, grading key) -> the first probe's key and its outcome.
    graded: dict[tuple[str, str], tuple[ProbeKey, Future[LightOutcome]]] = {}
    # One interpreter per task's probes (exploits/driver.py), in the audit's order.
    chunks: dict[str, list[tuple[Exploit, Task]]] = defaultdict(list)
    for exploit, task in probes:
        chunks[task.folder].append((exploit, task))

    def grade_one(exploit: Exploit, task: Task, acted: Acted) -> ProbeResult:
        key = (exploit.id, task.folder)
        group = (acted.digest, keys[task.folder])
        with lock:
            entry = graded.get(group)
            owner = entry is None
            if entry is None:
                entry = (key, Future())
                graded[group] = entry
        first, future = entry
        if owner:
            try:
                future.set_result(grade_acted(task, acted, sandbox))
            except BaseException as exc:  # the waiters must not hang on a fault
                future.set_exception(exc)
                raise
        shared = future.result()
        outcome = LightOutcome(shared.credit, shared.accepted, acted.acted)
        delivered = _produced_files(task, acted, plan)
        return ProbeResult(outcome, delivered, None if owner else first)

    def one(chunk: list[tuple[Exploit, Task]]) -> list[tuple[ProbeKey, ProbeResult | None]]:
        done: list[tuple[ProbeKey, ProbeResult | None]] = []
        acted_all = act_many(chunk, agent_dir, scratch)
        try:
            for (exploit, task), acted in zip(chunk, acted_all, strict=True):
                key = (exploit.id, task.folder)
                done.append((key, None if acted is None else grade_one(exploit, task, acted)))
        finally:
            for acted in acted_all:
                if acted is not None:
                    discard(acted)
        return done

    with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
        done = [item for part in pool.map(one, chunks.values()) for item in part]
    results = {key: found for key, found in done if found is not None}
    return _deterministic_sharing(probes, results)


def _deterministic_sharing(
    probes: Sequence[tuple[Exploit, Task]], results: dict[ProbeKey, ProbeResult]
) -> dict[ProbeKey, ProbeResult]:
    """Which probe a shared grading is credited to depends on which worker got there
    first; report it as the first probe of the group in the audit's order instead."""
    order = {(e.id, t.folder): i for i, (e, t) in enumerate(probes)}
    members: dict[ProbeKey, list[ProbeKey]] = defaultdict(list)
    for key, found in results.items():
        members[found.graded_by or key].append(key)
    fixed: dict[ProbeKey, ProbeResult] = {}
    for group in members.values():
        group.sort(key=order.__getitem__)
        head = group[0]
        for key in group:
            found = results[key]
            fixed[key] = ProbeResult(found.outcome, found.delivered, None if key == head else head)
    return dict(sorted(fixed.items(), key=lambda item: order[item[0]]))


def _has_command(task: Task) -> bool:
    return any(not isinstance(c, FileCheck) for c in task.verification)


def _agent_dir(plan: Mapping[str, Mapping[str, Sequence[str]]], folder: Path) -> Path:
    """The built-in exploit program and its driver with ``plan.json`` beside them,
    shared by every probe (they only read it)."""
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(PROGRAM, folder / PROGRAM.name)
    shutil.copy(DRIVER, folder / DRIVER.name)
    (folder / PLAN_FILE).write_text(json.dumps(plan, sort_keys=True), "utf-8")
    return folder


def deliverable_names(task: Task, plan: Mapping[str, Mapping[str, Sequence[str]]]) -> list[str]:
    """The workspace files that are the task's deliverables: what its file checks
    name, else (a task checked only by commands) what the plan guessed from its prompt."""
    named = sorted(
        {
            c.file
            for c in task.verification
            if isinstance(c, FileCheck) and not c.file.startswith("~")
        }
    )
    if named:
        return named
    key = hashlib.sha256(task.prompt.encode("utf-8")).hexdigest()
    return sorted(f for f in plan.get(key, {}).get("files", ()) if not f.startswith("~"))


def _produced_files(
    task: Task, acted: Acted, plan: Mapping[str, Mapping[str, Sequence[str]]]
) -> dict[str, str]:
    digests: dict[str, str | None] = {}
    for name in deliverable_names(task, plan):
        clean = normalise(name)
        digests[name] = None if clean is None else file_digest(acted.workspace / clean)
    return produced(task, digests)


def produced(task: Task, digests: Mapping[str, Any]) -> dict[str, str]:
    """The deliverables left and not identical to the task's workspace seed."""
    seed = task.seed_dir()
    found: dict[str, str] = {}
    for name, value in sorted(digests.items()):
        if not isinstance(name, str) or not isinstance(value, str):
            continue
        clean = normalise(name)
        if clean is None:
            continue
        if seed is not None and file_digest(seed / clean) == value:
            continue
        found[name] = value
    return found


def identical_deliverables(
    deliveries: Mapping[ProbeKey, Mapping[str, str]],
) -> list[dict[str, Any]]:
    """Groups of two or more probes or runs (exploit, task) that left byte-identical
    deliverables: the same files with the same bytes. Sorted; each group names its
    files with their SHA-256, the probes, the tasks, and a digest over the files."""
    groups: dict[str, list[ProbeKey]] = defaultdict(list)
    files: dict[str, list[dict[str, str]]] = {}
    for key, found in deliveries.items():
        if not found:
            continue
        listing = [{"path": p, "sha256": d} for p, d in sorted(found.items())]
        combined = hashlib.sha256(json.dumps(listing, sort_keys=True).encode("utf-8")).hexdigest()
        groups[combined].append(key)
        files[combined] = listing
    return [
        {
            "sha256": combined,
            "files": files[combined],
            "tasks": sorted({folder for _, folder in members}),
            "probes": [
                {"task": f, "exploit": e} for e, f in sorted(members, key=lambda k: (k[1], k[0]))
            ],
        }
        for combined, members in sorted(groups.items())
        if len(members) > 1
    ]
