"""``benchguard scan`` of a 1 GB corpus: serial versus a 2-worker dask cluster.

Generates the same deterministic corpus as ``bench/scan_scale.py`` (results.json files
of realistic trajectories, some cheats) into a temporary directory, then scans every
file with the serial engine and with a ``distributed`` ``LocalCluster`` of two worker
processes (one thread each) reached over TCP on 127.0.0.1, the same path a remote
cluster takes (``--scheduler tcp://HOST:PORT``). Prints MB/s side by side, the cluster's
start-up separately, and checks the reports are identical.

    .venv/bin/python bench/dask_cluster_scan.py              # 1 GB: a few minutes on 2 cores
    .venv/bin/python bench/dask_cluster_scan.py --mb 50      # quick look
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

from distributed import LocalCluster

from benchguard.detection.rules import load_ruleset
from benchguard.engines import FileScan, scan_files
from scan_scale import generate  # bench/ is the script's own directory, first on sys.path

WORKERS = 2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=1024.0, help="corpus size in MB")
    args = parser.parse_args()
    rules = load_ruleset()
    with tempfile.TemporaryDirectory(prefix="benchguard-cluster-bench-") as folder:
        started = time.perf_counter()
        paths, size, records = generate(Path(folder), args.mb)
        print(
            f"corpus: {len(paths)} files, {records} records, {size / 1e6:.1f} MB "
            f"(generated in {time.perf_counter() - started:.1f} s); "
            f"{platform.machine()}, {os.cpu_count()} CPU(s), Python {platform.python_version()}"
        )
        serial, serial_s = _timed(lambda: scan_files(paths, rules, engine="serial"))
        started = time.perf_counter()
        with LocalCluster(  # type: ignore[no-untyped-call, unused-ignore]
            n_workers=WORKERS,
            threads_per_worker=1,
            processes=True,
            host="127.0.0.1",
            protocol="tcp",
            dashboard_address=None,
        ) as cluster:
            startup_s = time.perf_counter() - started
            address = str(cluster.scheduler_address)
            clustered, cluster_s = _timed(
                lambda: scan_files(paths, rules, engine="dask", scheduler=address)
            )
    if clustered != serial:
        print("FAIL: the cluster's reports differ from the serial engine's", file=sys.stderr)
        return 1
    flagged = sum(r.report.status == "flagged" for f in serial for r in f.records)
    print(f"{'engine':<34}{'seconds':>9}{'MB/s':>9}{'vs serial':>11}")
    print(
        f"{'serial (baseline, same run)':<34}{serial_s:>9.1f}{size / 1e6 / serial_s:>9.1f}{'1.00x':>11}"
    )
    print(
        f"{f'dask cluster, {WORKERS} workers over TCP':<34}{cluster_s:>9.1f}"
        f"{size / 1e6 / cluster_s:>9.1f}{serial_s / cluster_s:>10.2f}x"
    )
    print(
        f"cluster start-up (not in the figure above): {startup_s:.1f} s; with it "
        f"{serial_s / (cluster_s + startup_s):.2f}x. Reports identical ({flagged} flagged)."
    )
    return 0


def _timed(run: object) -> tuple[list[FileScan], float]:
    assert callable(run)
    started = time.perf_counter()
    result: list[FileScan] = run()
    return result, time.perf_counter() - started


if __name__ == "__main__":
    sys.exit(main())
