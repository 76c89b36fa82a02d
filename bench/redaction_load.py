"""Rewards do not depend on machine load: the same replies, idle and beside busy processes.

Each reply is the oracle plus one harmless slow rule (it never matches, but tries hard:
about a third of the CPU budget per episode). Every reply is scored through the
taskset's path (a :class:`ScoringPool` worker) twice: on an otherwise idle machine, then
with ``--busy`` processes spinning beside it. Printed: how many rewards are identical,
timeouts in each phase, CPU and wall seconds per episode, and, as the baseline from the
same run, how many episodes a wall-clock budget of the same size would have failed.

    .venv/bin/python bench/redaction_load.py [--limit 32] [--busy 2]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import dataclass

from redaction_pressure.corpus import GeneratedTask, generate_task
from redaction_pressure.policies import oracle
from redaction_pressure.scanner import EPISODE_CPU_BUDGET_S
from redaction_pressure.scoring_pool import ScoringPool
from redaction_pressure.splits import DEV_SIZE, public_task_seed

SLOW_RULE = {"pattern": r"(?:\S|\S\S){1,8}[\t\v]{2}", "replacement": ""}
"""Never matches corpus text (no tab or vertical-tab pairs) and backtracks a lot first."""


@dataclass(frozen=True)
class Episode:
    reward: float
    timed_out: bool
    cpu_s: float
    wall_s: float


def _reply(task: GeneratedTask) -> str:
    rules = json.loads(oracle(task))["rules"]
    return json.dumps({"rules": [*rules, SLOW_RULE]})


def _phase(pool: ScoringPool, tasks: list[GeneratedTask]) -> list[Episode]:
    episodes = []
    for task in tasks:
        started = time.perf_counter()
        result = pool.score(_reply(task), task.evaluation)
        wall = time.perf_counter() - started
        timed_out = any("budget" in error or "backstop" in error for error in result.errors)
        episodes.append(Episode(result.reward, timed_out, result.budget_used_s, wall))
    return episodes


def _spinners(count: int) -> list[subprocess.Popen[bytes]]:
    return [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(count)]


def _summary(name: str, episodes: list[Episode]) -> str:
    cpu = [e.cpu_s for e in episodes]
    wall = [e.wall_s for e in episodes]
    over = sum(1 for w in wall if w > EPISODE_CPU_BUDGET_S)
    return (
        f"{name:<8} mean reward {statistics.fmean(e.reward for e in episodes):.3f}  "
        f"timeouts {sum(e.timed_out for e in episodes):>2}  "
        f"CPU s/episode median {statistics.median(cpu):.3f} max {max(cpu):.3f}  "
        f"wall s/episode median {statistics.median(wall):.3f} max {max(wall):.3f}  "
        f"| a {EPISODE_CPU_BUDGET_S:g} s wall-clock budget would fail {over:>2}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limit", type=int, default=32)
    parser.add_argument("--busy", type=int, default=2)
    args = parser.parse_args()
    count = max(1, min(args.limit, DEV_SIZE))
    tasks = [generate_task(public_task_seed("dev", index)) for index in range(count)]
    print(f"redaction-pressure load bench, split=dev, tasks={count}, busy processes={args.busy}")
    print(
        f"{platform.platform()} | {os.cpu_count()} CPUs | Python {platform.python_version()} | "
        f"CPU budget {EPISODE_CPU_BUDGET_S:g} s | slow rule {SLOW_RULE['pattern']}"
    )
    pool = ScoringPool(1)
    try:
        pool.warm()
        idle = _phase(pool, tasks)
        spinners = _spinners(args.busy)
        try:
            time.sleep(0.5)
            loaded = _phase(pool, tasks)
        finally:
            for spinner in spinners:
                spinner.kill()
                spinner.wait()
    finally:
        pool.close()
    same = sum(1 for a, b in zip(idle, loaded, strict=True) if a.reward == b.reward)
    print(_summary("idle", idle))
    print(_summary("loaded", loaded))
    print(f"identical rewards idle vs loaded: {same}/{count}")


if __name__ == "__main__":
    main()
