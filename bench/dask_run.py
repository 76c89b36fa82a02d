"""``benchguard run --engine dask``: what a cluster costs and what it buys, in one run.

Starts a real ``dask scheduler`` and ``dask worker`` processes (single-slot, no nanny) on
127.0.0.1, the path a remote cluster takes, and runs the real ``benchguard run`` command:

1. **speed**: a 12-run batch of quick agents on 2 single-slot workers, pre-flight
   included (the issue's bound: well under 45 s);
2. **scaling**: the same batch of sleep-bound agents (each sleeps ``--sleep`` seconds)
   on 1 worker and on 2 workers; prints the ratio (goal: at least 1.8x);
3. **per-job overhead**: quick batches of ``--runs`` runs and of one run, on 1 worker
   and locally with ``-j 1``; the difference between the two sizes is the cost per job,
   the one-run batch on the cluster less the local one the fixed cost of a cluster batch.

    .venv/bin/python bench/dask_run.py                 # about 4 minutes on 2 cores
    .venv/bin/python bench/dask_run.py --runs 8 --sleep 2
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from engines.cluster_helpers import Tree, make_tree, running_cluster


def timed_run(tree: Tree, *extra: str) -> float:
    """Seconds one ``benchguard run`` of ``tree`` takes; raises if it fails."""
    started = time.perf_counter()
    done = subprocess.run(
        [
            *(sys.executable, "-m", "benchguard", "run", str(tree.tasks)),
            *("--agent", str(tree.agent), "--home", str(tree.home), "--out", str(tree.results)),
            *("--quiet", "--audit", "none", *extra),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    took = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"benchguard run {' '.join(extra)} failed:\n{done.stdout}{done.stderr}")
    return took


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=12, help="runs per batch (one task each)")
    parser.add_argument(
        "--sleep", type=float, default=5.0, help="seconds a sleep-bound agent sleeps"
    )
    args = parser.parse_args()
    # The bench's own cluster: plain TCP on 127.0.0.1 with the bench's own agents; every
    # client it starts inherits the operator's acceptance of that (docs/distributed-runs.md).
    os.environ["BENCHGUARD_INSECURE_SCHEDULER"] = "1"
    print(
        f"{platform.machine()}, {os.cpu_count()} CPU(s), Python {platform.python_version()}; "
        f"{args.runs} runs per batch, audit off (the same in every row)"
    )
    with tempfile.TemporaryDirectory(prefix="benchguard-dask-run-") as folder:
        root = Path(folder)
        quick = make_tree(root / "quick", tasks=args.runs, sleep_s=0)
        single = make_tree(root / "single", tasks=1, sleep_s=0)
        sleepy = make_tree(root / "sleepy", tasks=args.runs, sleep_s=args.sleep)
        local_s = timed_run(quick, "-j", "1")
        local_one_s = timed_run(single, "-j", "1")
        with running_cluster(root / "one", workers=1) as one:
            on_one = ("--engine", "dask", "--scheduler", one.address)
            one_quick_s = timed_run(quick, *on_one)
            one_single_s = timed_run(single, *on_one)
            one_sleepy_s = timed_run(sleepy, *on_one)
        with running_cluster(root / "two", workers=2) as two:
            on_two = ("--engine", "dask", "--scheduler", two.address)
            two_quick_s = timed_run(quick, *on_two)
            two_sleepy_s = timed_run(sleepy, *on_two)
    print(
        f"quick batch, 2 single-slot workers, pre-flight included: {two_quick_s:.1f} s "
        "(bound: well under 45 s)"
    )
    # The batch's fixed cost (connect, plugin, pre-flight on each worker, publish): a
    # one-run batch on the cluster less the same run locally.
    fixed_s = one_single_s - local_one_s
    print(
        f"sleep-bound batch ({args.sleep:g} s agents): 1 worker {one_sleepy_s:.1f} s, "
        f"2 workers {two_sleepy_s:.1f} s: scaling {one_sleepy_s / two_sleepy_s:.2f}x "
        f"(goal >= 1.8x); less the fixed {fixed_s:.1f} s of a cluster batch: "
        f"{(one_sleepy_s - fixed_s) / (two_sleepy_s - fixed_s):.2f}x"
    )
    local_per_job = (local_s - local_one_s) / (args.runs - 1)
    cluster_per_job = (one_quick_s - one_single_s) / (args.runs - 1)
    print(
        f"per job, quick agents: local -j 1 {local_per_job:.2f} s, 1 cluster worker "
        f"{cluster_per_job:.2f} s: {cluster_per_job / local_per_job:.2f}x, "
        f"{cluster_per_job - local_per_job:+.2f} s per job; a cluster batch's fixed cost "
        f"{fixed_s:.1f} s (connect, worker pre-flight)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
