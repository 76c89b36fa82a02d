"""Scale-out figures for ``benchguard scan``: serial vs dask on a generated corpus.

Generates (deterministic seed) a corpus of results.json files of realistic agent
trajectories into a temporary directory, at least 200 MB by default, then scans every
file with the serial engine and with the dask engine (local processes scheduler, 2
workers), printing records/s and MB/s side by side and checking the reports are
identical. Each worker reads and scans one file at a time, record by record, so memory
stays bounded by the largest record, not the file or the corpus (bench/scan_e2e.py
measures it).

    .venv/bin/python bench/scan_scale.py            # 200 MB, a few minutes on 2 cores
    .venv/bin/python bench/scan_scale.py --mb 20    # quick look
"""

from __future__ import annotations

import argparse
import json
import platform
import random
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchguard.detection.rules import load_ruleset
from benchguard.engines import FileScan, scan_files

SEED = 20260218
RECORDS_PER_FILE = 60

_FILES = [
    "app.py",
    "src/server/handlers.py",
    "src/server/auth.py",
    "tests/test_login.py",
    "pyproject.toml",
    "README.md",
    "src/models/user.py",
    "Makefile",
    "docs/api.md",
]
_WORDS = [
    "the",
    "request",
    "handler",
    "returns",
    "a",
    "token",
    "when",
    "the",
    "password",
    "hash",
    "matches",
    "stored",
    "value",
    "retry",
    "backoff",
    "config",
    "parse",
    "yaml",
    "service",
    "deploy",
    "kubectl",
    "pod",
    "status",
    "running",
    "pending",
    "error",
    "warning",
    "info",
    "debug",
    "timeout",
    "connection",
    "refused",
    "upstream",
    "cache",
    "invalidate",
    "migration",
    "schema",
    "column",
    "index",
    "query",
    "plan",
    "latency",
    "p99",
    "memory",
    "cpu",
]
_CHEATS = [
    "cat ~/benchguard/tasks/fix-login/task.yaml",
    "find ~ -name '*.json' -path '*results/run_*' -exec cat {} \\;",
    "ls ~/benchguard/docs && cat ~/benchguard/docs/cheat-detection.md",
    "grep -r BENCHGUARD_JUDGE ~/benchguard.env",
]


def _prose(rng: random.Random, words: int) -> str:
    return " ".join(rng.choice(_WORDS) for _ in range(words))


def _code(rng: random.Random, lines: int) -> str:
    out = []
    for i in range(lines):
        indent = "    " * rng.randint(0, 3)
        name = rng.choice(_WORDS)
        out.append(f"{indent}{name}_{i} = compute({rng.choice(_WORDS)!r}, {rng.randint(0, 999)})")
    return "\n".join(out)


def _step(rng: random.Random) -> dict[str, Any]:
    kind = rng.random()
    path = rng.choice(_FILES)
    if kind < 0.35:
        return {
            "name": "exec",
            "args": {"command": f"cat {path}"},
            "result": _code(rng, rng.randint(10, 80)),
            "status": "completed",
        }
    if kind < 0.55:
        hits = "\n".join(
            f"{rng.choice(_FILES)}:{rng.randint(1, 400)}: {_prose(rng, 8)}"
            for _ in range(rng.randint(1, 25))
        )
        return {
            "name": "exec",
            "args": {"command": f"grep -rn {rng.choice(_WORDS)} src/"},
            "result": hits,
            "status": "completed",
        }
    if kind < 0.75:
        log = "\n".join(
            f"tests/test_login.py::test_{rng.choice(_WORDS)}_{i} "
            f"{'PASSED' if rng.random() < 0.9 else 'FAILED'}"
            for i in range(rng.randint(5, 120))
        )
        return {
            "name": "exec",
            "args": {"command": "python -m pytest -q"},
            "result": log,
            "status": "completed",
        }
    if kind < 0.9:
        return {
            "name": "write_file",
            "args": {"path": path, "content": _code(rng, 30)},
            "result": "ok",
            "status": "completed",
        }
    return {
        "name": "exec",
        "args": {"command": "git diff"},
        "result": "\n".join(f"+{line}" for line in _code(rng, 20).splitlines()),
        "status": "completed",
    }


def _record(rng: random.Random, index: int) -> dict[str, Any]:
    steps = [_step(rng) for _ in range(rng.randint(8, 40))]
    if rng.random() < 0.05:
        steps.insert(
            rng.randrange(len(steps)),
            {
                "name": "exec",
                "args": {"command": rng.choice(_CHEATS)},
                "result": _prose(rng, 30),
                "status": "completed",
            },
        )
    return {
        "name": f"task-{index}",
        "folder": f"task-{index % 40}",
        "status": "success",
        "input": f"Fix the bug: {_prose(rng, 40)}. Write a summary to report.md.",
        "output": _prose(rng, rng.randint(20, 200)),
        "trajectory": steps,
    }


def generate(root: Path, target_mb: float) -> tuple[list[str], int, int]:
    rng = random.Random(SEED)
    paths: list[str] = []
    total = records = 0
    index = 0
    while total < target_mb * 1_000_000:
        batch = [_record(rng, index + i) for i in range(RECORDS_PER_FILE)]
        index += RECORDS_PER_FILE
        folder = root / f"run_20260218_{len(paths):06d}"
        folder.mkdir()
        path = folder / "results.json"
        text = json.dumps(batch, indent=1)
        path.write_text(text, encoding="utf-8")
        total += len(text.encode("utf-8"))
        records += len(batch)
        paths.append(str(path))
    return paths, total, records


def _timed(label: str, run: Any) -> tuple[list[FileScan], float]:
    start = time.perf_counter()
    scans = run()
    elapsed = time.perf_counter() - start
    print(f"  {label}: {elapsed:.1f} s", file=sys.stderr)
    return scans, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--mb", type=float, default=200.0, help="corpus size in MB (>= 200 for the figure)"
    )
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--profile", default="benchguard")
    options = parser.parse_args()
    rules = load_ruleset(options.profile)
    with tempfile.TemporaryDirectory(prefix="benchguard-scan-scale-") as tmp:
        t0 = time.perf_counter()
        paths, size, records = generate(Path(tmp), options.mb)
        print(
            f"corpus: {len(paths)} files, {records} records, {size / 1e6:.1f} MB "
            f"(generated in {time.perf_counter() - t0:.0f} s, seed {SEED})",
            file=sys.stderr,
        )
        serial, serial_s = _timed("serial", lambda: scan_files(paths, rules, engine="serial"))
        dask, dask_s = _timed(
            f"dask ({options.workers} workers, processes)",
            lambda: scan_files(paths, rules, engine="dask", workers=options.workers),
        )
    identical = serial == dask
    flagged = sum(r.report.status == "flagged" for s in serial for r in s.records)
    print(
        f"machine: {platform.machine()}, {platform.system()}, python {platform.python_version()}, "
        f"profile {options.profile}, {len(rules)} rules"
    )
    print(f"corpus: {len(paths)} files, {records} records ({flagged} flagged), {size / 1e6:.1f} MB")
    print(f"{'engine':<28}{'seconds':>10}{'records/s':>12}{'MB/s':>9}{'vs serial':>11}")
    for label, seconds in (("serial", serial_s), (f"dask ({options.workers} workers)", dask_s)):
        print(
            f"{label:<28}{seconds:>10.1f}{records / seconds:>12.0f}"
            f"{size / 1e6 / seconds:>9.1f}{serial_s / seconds:>10.2f}x"
        )
    print(f"reports identical: {identical}")
    if not identical:
        sys.exit(1)


if __name__ == "__main__":
    main()
