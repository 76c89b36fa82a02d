"""What the separation of one unsandboxed run costs, step by step, beside a baseline.

Each variant is one run's namespace chain, started as a confined run's is (the
``unshare`` of harness/containment, as this harness's identity), with ``true`` as the
agent; the figure is the wall time of the whole chain, per run:

- baseline: ``unshare ... -- sh -c true`` (the namespaces, no separation);
- separation: ``separate_exec.py PARENT OWN -- true`` (the private /tmp, /dev with its
  nodes and devpts, /dev/shm, read-only /sys: every step but the network);
- separation + network: the same with ``--net`` (a run whose agent and task ask for no
  host network: a network namespace of its own, loopback up);
- native: the same steps by the native launcher (``confine-exec --separate --net``),
  where it is built and ports this script (harness/launcher_build);
- ``--compare FILE``: another ``separate_exec.py`` with the same command line and no
  ``--net`` (e.g. the script before these steps: ``git show REV:src/...``), for the
  cost the new steps add.

The variants alternate round by round (so a load change hits each alike), and each
line prints its median per run and its ratio to the baseline's.

Usage: python bench/separation_overhead.py [--rounds 30] [--compare OLD_SCRIPT]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchguard.harness import containment
from benchguard.harness.launcher_build import native_separation


def _chain(script: Path | None, parent: str, own: str, *, net: bool) -> list[str]:
    prefix = list(containment.pid_namespace_prefix(keep_caps=True))
    if script is None:
        return [*prefix, "--", "/bin/sh", "-c", "true"]
    if script.suffix != ".py":  # the native launcher
        return [*prefix, "--", str(script), "--separate", "--net", parent, own, "--", "true"]
    flags = ["--net"] if net else []
    return [
        *prefix,
        "--",
        sys.executable,
        "-I",
        "-S",
        str(script),
        *flags,
        parent,
        own,
        "--",
        "true",
    ]


def _once(argv: list[str], cwd: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(argv, capture_output=True, check=False, cwd=cwd)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{argv[-6:]} exited {done.returncode}: {done.stderr.decode()[-300:]}")
    return elapsed


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--compare", type=Path, default=None)
    args = parser.parse_args()
    if not containment.pid_namespace_prefix(keep_caps=True):
        raise SystemExit("no mount namespace here: nothing to measure")
    parent = os.path.realpath(tempfile.gettempdir())
    script = containment.separate_script()
    variants: dict[str, tuple[Path | None, bool]] = {
        "baseline (namespaces, no separation)": (None, False),
        "separation (/tmp, /dev, devpts, /sys)": (script, False),
        "separation + own network": (script, True),
    }
    native = native_separation()
    if native is not None:
        variants["native separation + own network"] = (native, True)
    if args.compare is not None:
        variants[f"compare: {args.compare.name}"] = (args.compare.resolve(), False)
    times: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(args.rounds):
        for name, (program, net) in variants.items():
            with tempfile.TemporaryDirectory(prefix="bg-sep-bench-", dir=parent) as own:
                times[name].append(_once(_chain(program, parent, own, net=net), own))
    load = os.getloadavg()[0]
    print(
        f"separation overhead: {args.rounds} rounds per variant, alternating, "
        f"{'root' if os.geteuid() == 0 else 'unprivileged'} harness, load {load:.1f}"
    )
    base = statistics.median(times["baseline (namespaces, no separation)"])
    for name, values in times.items():
        median = statistics.median(values)
        print(f"  {name:<42} {median * 1000:8.2f} ms/run   {median / base:5.2f}x baseline")
    return 0


if __name__ == "__main__":
    sys.exit(main())
