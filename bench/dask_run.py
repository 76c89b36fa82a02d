"""``benchguard run --engine dask``: what a cluster costs and what it buys, in one run.

Starts a real ``dask scheduler`` and ``dask worker`` processes (single-slot, no nanny) on
127.0.0.1, the path a remote cluster takes, and runs the real ``benchguard run`` command:

1. **speed**: a 12-run batch of quick agents on 2 single-slot workers, pre-flight
   included (the issue's bound: well under 45 s);
2. **scaling**: the same batch of sleep-bound agents (each sleeps ``--sleep`` seconds)
   on 1 worker and on 2 workers; prints the ratio (goal: at least 1.8x);
3. **per-job overhead**: the quick batch on 1 worker against a local ``-j 1`` batch
   of the same runs; prints the cluster's extra seconds per job.

    .venv/bin/python bench/dask_run.py                 # about 2 minutes on 2 cores
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
        "--sleep", type=float, default=3.0, help="seconds a sleep-bound agent sleeps"
    )
    args = parser.parse_args()
    print(
        f"{platform.machine()}, {os.cpu_count()} CPU(s), Python {platform.python_version()}; "
        f"{args.runs} runs per batch, audit off (the same in every row)"
    )
    with tempfile.TemporaryDirectory(prefix="benchguard-dask-run-") as folder:
        root = Path(folder)
        quick = make_tree(root / "quick", tasks=args.runs, sleep_s=0)
        sleepy = make_tree(root / "sleepy", tasks=args.runs, sleep_s=args.sleep)
        local_s = timed_run(quick, "-j", "1")
        with running_cluster(root / "one", workers=1) as one:
            one_quick_s = timed_run(quick, "--engine", "dask", "--scheduler", one.address)
            one_sleepy_s = timed_run(sleepy, "--engine", "dask", "--scheduler", one.address)
        with running_cluster(root / "two", workers=2) as two:
            two_quick_s = timed_run(quick, "--engine", "dask", "--scheduler", two.address)
            two_sleepy_s = timed_run(sleepy, "--engine", "dask", "--scheduler", two.address)
    print(
        f"quick batch, 2 single-slot workers, pre-flight included: {two_quick_s:.1f} s "
        "(bound: well under 45 s)"
    )
    print(
        f"sleep-bound batch ({args.sleep:g} s agents): 1 worker {one_sleepy_s:.1f} s, "
        f"2 workers {two_sleepy_s:.1f} s: scaling {one_sleepy_s / two_sleepy_s:.2f}x (goal >= 1.8x)"
    )
    per_job = (one_quick_s - local_s) / args.runs
    print(
        f"quick batch, local -j 1 {local_s:.1f} s vs 1 cluster worker {one_quick_s:.1f} s: "
        f"{one_quick_s / local_s:.2f}x, {per_job:+.2f} s per job (connect and worker "
        "pre-flight included)"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
