"""What `benchguard audit-tasks` costs per run it makes, beside one honest run.

Measured in one process, alternating, on the same task (examples/tasks/sum-numbers):
an honest `benchguard run` of the example agent (the baseline), and `audit-tasks` over
the same task (the reference and every applicable exploit: one run each; the runs
are counted from its JSON). Prints each one's median wall time, the audit's cost
divided by its runs, and that per-run cost over the baseline (target: at most 1.2x).

    PYTHONPATH=src python bench/audit_tasks_cost.py [--rounds N] [--sandbox bwrap]
        [--set [--jobs N ...]]

``--set``: the same over the 21 small tasks of ``bench/audit_tasks_cost_set.py``
(file, pytest and command checks, hackable and sound): one honest batch over all of
them (the baseline, one run per task) beside the audit of the set at each ``--jobs``
(default 1, the audit's and run's default, and 2), with the CPU time each used, the
runs it made (harness runs, light probes, probes sharing another's grading) and
whether its verdicts match the set's expectations.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

from typer.testing import CliRunner

from benchguard.cli import app
from benchguard.taskaudit.exploits.library import BUILTIN

sys.path.insert(0, str(Path(__file__).resolve().parent))
from audit_tasks_cost_set import EXPECTED, write_set

REPO = Path(__file__).resolve().parents[1]
RUN_REFUSES = ("cmd-workspace-script", "pytest-workspace-tests")


def _cpu() -> float:
    """CPU seconds of this process and its waited-for children."""
    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


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


def _kinds(document: str) -> tuple[int, int, int]:
    """(harness runs, light probes, light probes sharing another's grading)."""
    harness = light = shared = 0
    for task in json.loads(document)["tasks"]:
        harness += task.get("reference") is not None
        for entry in task["exploits"]:
            if entry["status"] == "not-applicable":
                continue
            if entry.get("light"):
                light += 1
                shared += entry.get("gradedWith") is not None
            else:
                harness += 1
    return harness, light, shared


def _set(options: argparse.Namespace, root: Path) -> None:
    tasks = write_set(root / "set")
    # run refuses a task whose check runs a workspace program; audit-tasks lists it.
    accepted = sorted(n for n in EXPECTED if n not in RUN_REFUSES)
    honest_tasks = write_set(root / "honest", accepted)
    common = ["--sandbox", options.sandbox]
    print(
        f"audit-tasks over {len(EXPECTED)} small tasks (bench/audit_tasks_cost_set.py), "
        f"sandbox {options.sandbox}, {os.cpu_count()} cores"
    )
    cpu = _cpu()
    honest, _ = _timed(
        [
            "run", str(honest_tasks), "--agent", str(REPO / "examples/agents/honest.yaml"),
            "--out", str(root / "out"), "--quiet", "--audit", "none",
            "--home", str(root / "home-honest"), *common,
        ]
    )  # fmt: skip
    honest_cpu = _cpu() - cpu
    per = honest / len(accepted)
    print(
        f"  baseline: one honest run of each of {len(accepted)} tasks (-j 1, the {len(RUN_REFUSES)} "
        f"run refuses left out)  {honest:7.1f} s  "
        f"({per * 1000:.0f} ms a run, CPU {honest_cpu:.1f} s); load {os.getloadavg()[0]:.2f}"
    )
    for jobs in options.jobs:
        load = os.getloadavg()[0]
        cpu = _cpu()
        elapsed, document = _timed(
            ["audit-tasks", str(tasks), "--json", "-j", str(jobs),
             "--home", str(root / f"home-{jobs}"), *common]
        )  # fmt: skip
        used = _cpu() - cpu
        verdicts = {t["name"]: t["hackable"] for t in json.loads(document)["tasks"]}
        wrong = sorted(n for n, h in EXPECTED.items() if verdicts.get(n) != h)
        harness, light, shared = _kinds(document)
        runs = harness + light
        print(
            f"  audit-tasks -j {jobs}: {elapsed:7.1f} s (CPU {used:.1f} s; load "
            f"{load:.2f} -> {os.getloadavg()[0]:.2f}); {harness} harness runs, {light} light "
            f"probes ({shared} sharing a grading); {elapsed / runs * 1000:.0f} ms a run = "
            f"{elapsed / runs / per:.2f}x the baseline's; verdicts "
            + ("as expected" if not wrong else f"WRONG for {', '.join(wrong)}")
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--sandbox", default="none", choices=["none", "bwrap"])
    parser.add_argument("--set", action="store_true", help="audit the 21-task set")
    parser.add_argument("--jobs", type=int, action="append", help="-j for --set (repeat)")
    options = parser.parse_args()
    if options.set:
        options.jobs = options.jobs or [1, 2]
        root = Path(tempfile.mkdtemp(prefix="bg-bench-audit-set-"))
        try:
            _set(options, root)
        finally:
            shutil.rmtree(root, ignore_errors=True)
        return
    root = Path(tempfile.mkdtemp(prefix="bg-bench-audit-"))
    try:
        tasks = root / "tasks"
        shutil.copytree(REPO / "examples/tasks/sum-numbers", tasks / "sum-numbers")
        honest, audit, runs = [], [], 0
        kinds = (0, 0, 0)
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
            kinds = _kinds(document)
        base, whole = statistics.median(honest), statistics.median(audit)
        print(
            f"audit-tasks cost: 1 task, {runs} runs made ({kinds[0]} harness, {kinds[1]} light; "
            f"{len(BUILTIN)} exploits, the rest not applicable), {options.rounds} rounds, sandbox {options.sandbox}; load "
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
