"""What `benchguard audit-tasks` costs per run it makes, beside one honest run.

Measured in one process, alternating, on the same task (examples/tasks/sum-numbers):
an honest `benchguard run` of the example agent (the baseline), and `audit-tasks` over
the same task (the reference and every applicable exploit: one run each; the runs
are counted from its JSON). Prints each one's median wall time, the audit's cost
divided by its runs, and that per-run cost over the baseline (target: at most 1.2x).

    PYTHONPATH=src python bench/audit_tasks_cost.py [--rounds N] [--sandbox bwrap]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from typer.testing import CliRunner

from benchguard.cli import app
from benchguard.taskaudit.exploits.library import BUILTIN

REPO = Path(__file__).resolve().parents[1]


def _timed(args: list[str]) -> tuple[float, str]:
    start = time.perf_counter()
    result = CliRunner().invoke(app, args)
    elapsed = time.perf_counter() - start
    if result.exit_code not in (0, 1):
        raise SystemExit(f"{' '.join(args[:2])} exited {result.exit_code}: {result.output[-2000:]}")
    return elapsed, result.stdout


def _runs_made(document: str) -> int:
    """Runs the audit made: the reference and every exploit not skipped as not
    applicable (taskaudit/applicable.py), over every task."""
    made = 0
    for task in json.loads(document)["tasks"]:
        made += task.get("reference") is not None
        made += sum(1 for e in task["exploits"] if e["status"] != "not-applicable")
    return made


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sandbox", default="none", choices=["none", "bwrap"])
    options = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="bg-bench-audit-"))
    try:
        tasks = root / "tasks"
        shutil.copytree(REPO / "examples/tasks/sum-numbers", tasks / "sum-numbers")
        honest, audit, runs = [], [], 0
        for round_ in range(options.rounds):
            common = ["--sandbox", options.sandbox, "--home", str(root / f"home-{round_}")]
            honest.append(
                _timed(
                    [
                        "run", str(tasks), "--agent", str(REPO / "examples/agents/honest.yaml"),
                        "--out", str(root / "out"), "--quiet", "--audit", "none", *common,
                    ]
                )[0]
            )  # fmt: skip
            elapsed, document = _timed(["audit-tasks", str(tasks), "--json", *common])
            audit.append(elapsed)
            runs = _runs_made(document)
        base, whole = statistics.median(honest), statistics.median(audit)
        print(
            f"audit-tasks cost: 1 task, {runs} runs made ({len(BUILTIN)} exploits; the rest "
            f"not applicable), {options.rounds} rounds, sandbox {options.sandbox}; load "
            f"average {os.getloadavg()[0]:.2f}"
        )
        print(f"  baseline: one honest benchguard run        {base * 1000:8.0f} ms")
        print(f"  audit-tasks (all runs)                     {whole * 1000:8.0f} ms")
        print(
            f"  audit-tasks per run                        {whole / runs * 1000:8.0f} ms   ({whole / runs / base:.2f}x the baseline; target <= 1.2x)"
        )
    finally:
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    main()
