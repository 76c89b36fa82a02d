"""The harness's own time per task, beside the bare cost of spawning the agent.

A batch of no-op runs against an agent home holding 1,000 prior-run entries (900 small
text files, 100 directories: a path rule each, and a content fingerprint per file).
The leftovers are older than the inventory's racy window, as a real home's prior-run
leftovers are (a file changed within it is read again every time). The agent is a
shell one-liner that appends two trajectory lines and exits, so the detector has
something to scan. One task in five names a leftover in its prompt, so those records
scan with a prompt-filtered ruleset. Phases are timed on the runner's own functions,
in the runner's order, as ``run_batch`` calls them at ``-j 1`` (the harness a subreaper,
``start_task``/``finish_task`` around each run, the orphan sweep after it):

- knowledge: the protected material's fingerprints and known paths, once per batch
  (``integrity.harness_knowledge``), amortized over the tasks;
- inventory: the home inventory before each task (listing + rules); a persistent home
  is listed again before every task, a fresh home under Landlock only before the first
  (no run can write the operator's home; the batch's one listing serves every run);
- run: one ``run_job`` (fresh workspace, the stored scan context with its home
  listing, agent process, per-run orphan sweep, transcript, checks) minus the agent
  process itself (its measured duration);
- finish: ``finish_run`` (scan with static + the record's snapshot and the material
  fingerprints, prompt-filtered, commands read through the stored scan context;
  verification scores, gate, finalizer); the first record pays the compiled ruleset,
  so it is timed apart;
- journal: the durable per-run write (fsync of the file and its directory);
- publish: results/rows/manifest built from the finished runs.

With ``--home-writes`` every agent also leaves a new file in the home, so each task's
snapshot differs from the last (a new rule per task, credited to the task before).

Each batch runs twice, in the same process: as before issue 19 (persistent home,
unconfined: the baseline) and as ``benchguard run`` now defaults (a fresh overlay home
per run and the Landlock launcher). The launcher runs inside the agent's process, so
its cost is the agent process's measured time minus the bare spawn; it is printed on
its own line and counted in the harness total. It is the native launcher
(``confine_exec.c``, with ``confine-exec --spawn`` creating the run's first process in
its cgroup) where a C compiler built it, the Python one otherwise (the header says which;
``BENCHGUARD_LAUNCHER=python`` forces it).

Target: harness overhead (everything but the agent) under 50 ms per task.
Usage: python bench/harness_overhead.py [--tasks 20 50] [--entries N] [--home-writes]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from benchguard.detection import inventory
from benchguard.detection.detector import Detector
from benchguard.harness import integrity
from benchguard.harness.agents.config import AgentConfig
from benchguard.harness.confine import Confinement, kernel_abi
from benchguard.harness.home import HomeSettings
from benchguard.harness.launcher_build import native_launcher
from benchguard.harness.process import ChildBaseline, become_subreaper
from benchguard.harness.runner import (
    BatchSettings,
    finish_run,
    open_journal,
    plan,
    publish,
    run_job,
)
from benchguard.harness.tasks import load_tasks

_LINES = [
    {"name": "shell", "args": {"command": "ls"}, "result": "answer.txt", "status": "completed"},
    {"name": "shell", "args": {"command": "cat answer.txt"}, "result": "42", "status": "completed"},
]
SCRIPT = "printf '%s\\n' " + " ".join(f"'{json.dumps(x)}'" for x in _LINES)
SCRIPT += ' >> "$BENCHGUARD_TRAJECTORY"; echo 42 > answer.txt'
# Leaves a uniquely named file in the home; the line is long enough to fingerprint.
HOME_WRITE = ' ; echo "notes of this run, kept for the next one: $$" > "$HOME/notes-$$.md"'


def build_home(root: Path, entries: int) -> Path:
    home = root / "agent-home"
    home.mkdir()
    for i in range(entries):
        if i % 10 == 0:
            (home / f"dir-{i:04d}").mkdir()
        else:
            (home / f"leftover-{i:04d}.md").write_text(
                f"report {i}: the previous run concluded that item {i} needs no further action\n"
            )
    return home


def build_tasks(root: Path, tasks: int) -> Path:
    tasks_dir = root / f"tasks-{tasks}"
    for i in range(tasks):
        folder = tasks_dir / f"t{i:03d}"
        folder.mkdir(parents=True)
        # One prompt in five names a leftover: that record's ruleset drops its path rule.
        named = f" and update leftover-{(i * 7) % 900 + 1:04d}.md" if i % 5 == 4 else ""
        (folder / "task.yaml").write_text(
            f"name: t{i}\nprompt: write 42 to answer.txt{named}\ntimeout: 30\nverification:\n"
            "  - {name: answer, role: correctness, file: answer.txt, contains: '42'}\n"
            # A rubric per task: material the runner fingerprints (one rule per task file).
            f"rubric: Credit only when answer.txt of task number {i:03d} holds exactly 42\n"
        )
    return tasks_dir


def bare_spawn_ms(home: Path, runs: int, script: str) -> float:
    times = []
    for _ in range(runs):
        scratch = Path(tempfile.mkdtemp())
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(home),
            "BENCHGUARD_TRAJECTORY": str(scratch / "t"),
        }
        start = time.perf_counter()
        subprocess.run(["/bin/sh", "-c", script], cwd=scratch, env=env, check=True)
        times.append(time.perf_counter() - start)
        shutil.rmtree(scratch)
    return statistics.median(times) * 1000


def run_batch_timed(
    root: Path, home: Path, tasks: int, home_writes: bool, *, fresh: bool
) -> dict[str, Any]:
    """One batch through the runner's functions, each phase timed; ``fresh``: a fresh
    overlay home per run and Landlock (the default now), else the persistent home."""
    task_list = load_tasks(build_tasks(root, tasks)).tasks
    script = SCRIPT + (HOME_WRITE if home_writes else "")
    template = script.replace("{", "{{").replace("}", "}}")
    agent = AgentConfig(name="noop", argv=("/bin/sh", "-c", template), trajectory="jsonl")
    settings = BatchSettings(
        agent=agent,
        home=home,
        out_dir=root / "results",
        confinement=Confinement(kernel_abi() if fresh else 0),
        home_settings=HomeSettings(mode="fresh" if fresh else "persistent"),
    )
    static = integrity.load_static_rules(integrity.IntegritySettings())
    jobs = plan(task_list, 1)
    n = len(jobs)

    t0 = time.perf_counter()
    once = integrity.inventory_once(settings.home_settings, settings.confinement)
    snapshots = integrity.HomeSnapshots(home, (), enabled=True, once=once)
    snapshots.before_batch()
    batch_snapshot_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    knowledge = integrity.harness_knowledge(task_list, home=home, results_root=settings.out_dir)
    knowledge_s = time.perf_counter() - t0
    assert knowledge is not None and knowledge.fingerprints

    # As run_batch does at -j 1: orphans re-parent to us and are swept after each run.
    become_subreaper()
    orphans = ChildBaseline.now()
    inventory_s = run_s = 0.0
    inventories = []
    records = []
    for job in jobs:
        t = time.perf_counter()
        inventories.append(snapshots.start_task(job.task.name))
        inventory_s += time.perf_counter() - t
        t = time.perf_counter()
        try:
            evidence = root / "results" / "home-writes" / str(job.position) if fresh else None
            records.append(
                run_job(job, settings, orphans=orphans, knowledge=knowledge, home_evidence=evidence)
            )
        finally:
            snapshots.finish_task(job.task.name)
        run_s += time.perf_counter() - t
    agent_s = sum(r.duration_s for r in records)

    t = time.perf_counter()
    # One detector for the batch, as run_batch holds one: its compiled plans serve
    # every record (a fresh detector per record would time the compiler, not the scan).
    detector = Detector()
    answers = [integrity.task_answers(job.task) for job in jobs]
    owns = [integrity.task_files(job.task) for job in jobs]
    finished = [
        finish_run(
            records[0],
            static_rules=static,
            rules=inventories[0],
            settings=settings,
            knowledge=knowledge,
            answers=answers[0],
            own_material=owns[0],
            detector=detector,
        )
    ]
    first_scan_s = time.perf_counter() - t
    t = time.perf_counter()
    finished += [
        finish_run(
            record,
            static_rules=static,
            rules=rules,
            settings=settings,
            knowledge=knowledge,
            answers=answer,
            own_material=own,
            detector=detector,
        )
        for record, rules, answer, own in zip(
            records[1:], inventories[1:], answers[1:], owns[1:], strict=True
        )
    ]
    later_scan_s = time.perf_counter() - t

    journal = open_journal(jobs, settings, None)
    t = time.perf_counter()
    for job, record in zip(jobs, finished, strict=True):
        journal.write(job.position, record)
    journal_s = time.perf_counter() - t
    t = time.perf_counter()
    result = publish(journal, jobs, dict(enumerate(finished)), settings)
    publish_s = time.perf_counter() - t
    run_dir = result.run_dir
    assert not result.errors, result.errors
    statuses = {r.cheating_report["status"] for r in finished}
    assert statuses == {"clean"}, statuses

    per_task = {
        "batch snapshot (once, amortized)": batch_snapshot_s / n * 1000,
        "material + known paths (once, amortized)": knowledge_s / n * 1000,
        "inventory before task": inventory_s / n * 1000,
        "run_job minus agent process": (run_s - agent_s) / n * 1000,
        "finish (scan + score)": (first_scan_s + later_scan_s) / n * 1000,
        "journal write (fsync)": journal_s / n * 1000,
        "publish results/rows/manifest": publish_s / n * 1000,
    }
    later_scan_ms = later_scan_s / max(n - 1, 1) * 1000
    steady = sum(per_task.values()) - per_task["finish (scan + score)"] + later_scan_ms
    return {
        "n": n,
        "rules": len(inventories[0]),
        "static": len(static),
        "per_task": per_task,
        "agent_ms": agent_s / n * 1000,
        "spawn_ms": bare_spawn_ms(home, n, script),
        "fresh": fresh,
        "first_scan_ms": first_scan_s * 1000,
        "later_scan_ms": later_scan_ms,
        "steady_ms": steady,
        "size_kib": (run_dir / "results.json").stat().st_size / 1024,
        "distinct_snapshots": len({tuple(map(id, rules)) for rules in inventories}),
    }


def report(figures: dict[str, Any], entries: int, home_writes: bool) -> float:
    """Print one batch's figures; its harness total per task (ms)."""
    n = figures["n"]
    label = ", agents write into the home" if home_writes else ""
    kind = "native" if native_launcher() is not None else "Python"
    mode = (
        f"fresh overlay home + Landlock (now, {kind} launcher)"
        if figures["fresh"]
        else "persistent home, unconfined (baseline: before issue 19)"
    )
    print(
        f"harness overhead [{mode}]: {n} tasks, home of {entries} entries{label} "
        f"({figures['rules']} inventory rules per task, {figures['static']} static rules, "
        f"{figures['distinct_snapshots']} distinct snapshots)"
    )
    for name, ms in figures["per_task"].items():
        print(f"  {name:<38} {ms:8.2f} ms/task")
    spawn = figures["spawn_ms"]
    launcher = max(figures["agent_ms"] - spawn, 0.0) if figures["fresh"] else 0.0
    if figures["fresh"]:
        print(f"  {'launcher (in the agent process)':<38} {launcher:8.2f} ms/task")
    total = sum(figures["per_task"].values()) + launcher
    print(f"  {'harness total (batch average)':<38} {total:8.2f} ms/task   (target < 50)")
    print(f"  {'agent process in run_job (measured)':<38} {figures['agent_ms']:8.2f} ms/task")
    print(f"  {'baseline: bare spawn of the agent':<38} {spawn:8.2f} ms/task")
    print(f"  ratio harness/bare spawn: {total / spawn:.2f}x")
    print(
        f"  scan: first record {figures['first_scan_ms']:.2f} ms (builds the compiled "
        f"ruleset), later records {figures['later_scan_ms']:.2f} ms each"
    )
    steady = figures["steady_ms"]
    print(
        f"  steady state per task (ruleset already compiled): {steady:.2f} ms "
        f"= {steady / spawn:.2f}x the bare spawn"
    )
    size = figures["size_kib"]
    print(f"  results.json: {size:.0f} KiB ({size / n:.1f} KiB per record)")
    return float(total)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, nargs="+", default=[20, 50])
    parser.add_argument("--entries", type=int, default=1000)
    parser.add_argument("--home-writes", action="store_true")
    options = parser.parse_args()
    for tasks in options.tasks:
        # A fresh process state per batch would be fairer still; a fresh home and a
        # fresh plan cache are what a new batch sees, so each batch gets its own home.
        totals = []
        for fresh in (False, True):
            root = Path(tempfile.mkdtemp(prefix="bg-bench-"))
            try:
                home = build_home(root, options.entries)
                settle = inventory.RACY_WINDOW_NS / 1e9 + 0.1
                time.sleep(settle)  # the leftovers are from an earlier run, not this second
                figures = run_batch_timed(root, home, tasks, options.home_writes, fresh=fresh)
            finally:
                shutil.rmtree(root, ignore_errors=True)
            totals.append(report(figures, options.entries, options.home_writes))
            print()
        print(
            f"{tasks} tasks: harness total {totals[1]:.2f} ms/task with a fresh home and "
            f"Landlock vs {totals[0]:.2f} ms/task before ({totals[1] / totals[0]:.2f}x)"
        )
        print()


if __name__ == "__main__":
    main()
