"""The harness's own time per task, beside the bare cost of spawning the agent.

A batch of no-op runs against an agent home holding 1,000 prior-run entries (small
text files, so each gets a path rule and a content fingerprint). The agent is a shell
one-liner that appends two trajectory lines and exits, so the detector has something
to scan. Phases are timed on the runner's own functions:

- inventory: the per-task re-inventory of the home (listing + rules);
- run: one ``run_job`` (fresh workspace, agent process, transcript, checks) minus
  the bare spawn of the same agent command, measured separately in the same process;
- scan: annotating every record with static + its snapshot's rules;
- score+write: verification scores, gate, finalizer, results/rows/manifest.

Target: harness overhead (everything but the agent) under 50 ms per task.
Usage: python bench/harness_overhead.py [--tasks N] [--entries N]
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from benchguard.harness import integrity
from benchguard.harness.agents.config import AgentConfig
from benchguard.harness.runner import (
    BatchSettings,
    batch_manifest,
    new_run_dir,
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


def build_tree(root: Path, tasks: int, entries: int) -> tuple[Path, Path]:
    home = root / "agent-home"
    home.mkdir()
    for i in range(entries):
        if i % 10 == 0:
            (home / f"dir-{i:04d}").mkdir()
        else:
            (home / f"leftover-{i:04d}.md").write_text(
                f"report {i}: the previous run concluded that item {i} needs no further action\n"
            )
    tasks_dir = root / "tasks"
    for i in range(tasks):
        folder = tasks_dir / f"t{i:03d}"
        folder.mkdir(parents=True)
        (folder / "task.yaml").write_text(
            f"name: t{i}\nprompt: write 42 to answer.txt\ntimeout: 30\nverification:\n"
            "  - {name: answer, role: correctness, file: answer.txt, contains: '42'}\n"
        )
    return home, tasks_dir


def bare_spawn_ms(home: Path, runs: int) -> float:
    times = []
    for _ in range(runs):
        scratch = Path(tempfile.mkdtemp())
        env = {
            "PATH": "/usr/bin:/bin",
            "HOME": str(home),
            "BENCHGUARD_TRAJECTORY": str(scratch / "t"),
        }
        start = time.perf_counter()
        subprocess.run(["/bin/sh", "-c", SCRIPT], cwd=scratch, env=env, check=True)
        times.append(time.perf_counter() - start)
        shutil.rmtree(scratch)
    return statistics.median(times) * 1000


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tasks", type=int, default=20)
    parser.add_argument("--entries", type=int, default=1000)
    options = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bg-bench-"))
    try:
        home, tasks_dir = build_tree(root, options.tasks, options.entries)
        tasks = load_tasks(tasks_dir).tasks
        template = SCRIPT.replace("{", "{{").replace("}", "}}")
        agent = AgentConfig(name="noop", argv=("/bin/sh", "-c", template), trajectory="jsonl")
        settings = BatchSettings(agent=agent, home=home, out_dir=root / "results")
        static = integrity.load_static_rules(integrity.IntegritySettings())
        jobs = plan(tasks, 1)
        n = len(jobs)

        t0 = time.perf_counter()
        snapshots = integrity.HomeSnapshots(home, (), enabled=True)
        snapshots.before_batch()
        t_batch_snapshot = time.perf_counter() - t0

        inventory_s = 0.0
        run_s = 0.0
        inventories = []
        records = []
        for job in jobs:
            t = time.perf_counter()
            inventories.append(snapshots.before_task(job.task.name))
            inventory_s += time.perf_counter() - t
            t = time.perf_counter()
            records.append(run_job(job, settings))
            run_s += time.perf_counter() - t
        agent_s = sum(r["duration_s"] for r in records)

        scan_times = []
        errors = []
        for record, rules in zip(records, inventories, strict=True):
            t = time.perf_counter()
            errors += integrity.annotate([record], static, [rules])
            scan_times.append(time.perf_counter() - t)
        scan_s = sum(scan_times)
        # The detector compiles a ruleset once and reuses it while the rules stay the
        # same objects; the first record pays that, later ones the marginal scan.
        first_scan_ms = scan_times[0] * 1000
        marginal_scan_ms = statistics.median(scan_times[1:]) * 1000 if n > 1 else first_scan_ms

        t = time.perf_counter()
        now = datetime.now(UTC)
        run_dir = new_run_dir(settings.out_dir, now)
        errors += publish(records, settings, run_dir, batch_manifest(settings, run_dir, now), 0.0)
        publish_s = time.perf_counter() - t
        assert not errors, errors
        assert all(r["cheating_report"]["status"] == "clean" for r in records)

        spawn_ms = bare_spawn_ms(home, n)
        rules = len(inventories[0])
        run_overhead_ms = (run_s - agent_s) / n * 1000
        per_task = {
            "batch snapshot (once, amortized)": t_batch_snapshot / n * 1000,
            "inventory before task": inventory_s / n * 1000,
            "run_job minus agent process": run_overhead_ms,
            "scan (static + inventory rules)": scan_s / n * 1000,
            "score + write results/rows/manifest": publish_s / n * 1000,
        }
        total = sum(per_task.values())
        print(
            f"harness overhead: {n} tasks, home of {options.entries} entries "
            f"({rules} inventory rules per task, {len(static)} static rules)"
        )
        for name, ms in per_task.items():
            print(f"  {name:<38} {ms:8.2f} ms/task")
        print(f"  {'harness total':<38} {total:8.2f} ms/task   (target < 50)")
        print(f"  {'agent process in run_job (measured)':<38} {agent_s / n * 1000:8.2f} ms/task")
        print(f"  {'baseline: bare spawn of the agent':<38} {spawn_ms:8.2f} ms/task")
        print(f"  ratio harness/bare spawn: {total / spawn_ms:.2f}x")
        print(
            f"  scan: first record {first_scan_ms:.2f} ms (builds the compiled ruleset), "
            f"later records median {marginal_scan_ms:.2f} ms"
        )
        steady = (
            per_task["inventory before task"]
            + run_overhead_ms
            + marginal_scan_ms
            + per_task["score + write results/rows/manifest"]
        )
        print(
            f"  steady state per task (ruleset already compiled): {steady:.2f} ms "
            f"= {steady / spawn_ms:.2f}x the bare spawn"
        )
        size_kb = (run_dir / "results.json").stat().st_size / 1024
        print(
            f"  results.json: {size_kb:.0f} KiB ({size_kb / n:.0f} KiB per record; each report "
            "persists its dynamic rules)"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
