"""A run cannot starve its honest sibling of CPU past its deadline (red team 27's
cpu-starve, an interference attack: a batch lost a run that did not cheat).

The standard-library adversary (tests/harness/adversaries/cpu_starve.py) answers its own
task, then forks 32 busy children, each ``os.setsid()``'d into a session of its own. The
scheduler shared CPU per session (autogroup), so at ``-j 2`` the honest CPU-bound
sibling got about 1/33 of the CPU and timed out (score 0, no verdict). Defence: every
run in a cpu cgroup of its own with the same weight (harness/cpu_share; on this hybrid
host a v1 cgroup with equal ``cpu.shares``, joined by the run's first process), so the
honest run keeps about half the CPU whatever its sibling forks. Checked, as root: with
the share taken out (``cpu_share.open_batch`` answering a reason) the honest run timed
out and this test failed.

As an unprivileged harness no cpu controller can be had here (no delegation): nothing
changes, and the records say so (``containment.cpu_share_unavailable``).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from harness.privileges import (
    TOTAL_TASK,
    UNPRIVILEGED,
    Harness,
    adversary_outcomes,
    records,
    run_adversary,
)

pytestmark = pytest.mark.slow

# The victim needs a few seconds of one core; starved (about 1/33 of the CPU) it needs
# far more than this, with its share (about half) far less.
VICTIM_TIMEOUT_S = 20
# The starver spins past the victim's deadline, under a timeout of its own above it.
SPIN_S = 24
STARVER_TIMEOUT_S = 60


def starve_tasks(harness: Harness) -> Path:
    tasks = harness.operator.root / "starve-tasks"
    for folder, lead, timeout in (
        ("a-starver", "STARVE. ", STARVER_TIMEOUT_S),
        ("b-honest", "", VICTIM_TIMEOUT_S),
    ):
        (tasks / folder / "workspace").mkdir(parents=True)
        text = TOTAL_TASK.format(lead=lead).replace("timeout: 150", f"timeout: {timeout}")
        (tasks / folder / "task.yaml").write_text(text, "utf-8")
        (tasks / folder / "workspace" / "numbers.txt").write_text("4000\n700\n11\n", "utf-8")
        (tasks / folder / "expected").mkdir()
        (tasks / folder / "expected" / "total.txt").write_text("4711\n", "utf-8")
    for path in [tasks, *tasks.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
        if harness.identity == "user":
            os.chown(path, UNPRIVILEGED, UNPRIVILEGED, follow_symlinks=False)
    return tasks


def test_a_starver_forking_busy_sessions_leaves_its_honest_sibling_its_share(
    harness: Harness,
) -> None:
    """Guards against a run that forks busy ``setsid()`` children at ``-j 2``: as root
    the honest CPU-bound sibling still finishes inside its timeout, 1.0 and clean, and
    both records say the kernel shared CPU per run. Unprivileged (no cpu controller:
    the attack is not run, the victim would time out) the records say why there is no
    share, and the batch still runs."""
    spinners = "32" if harness.identity == "root" else "0"
    run_dir = run_adversary(
        harness,
        "cpu_starve.py",
        starve_tasks(harness),
        "-j",
        "2",
        env={"ATTACK": "starve", "SPINNERS": spinners, "SPIN_S": str(SPIN_S)},
    )
    found = {record["folder"]: record for record in records(run_dir)}
    assert sorted(found) == ["a-starver", "b-honest"]
    honest = found["b-honest"]
    assert honest["status"] == "success", (honest["status"], honest["error"])
    assert adversary_outcomes(honest)["role"] == "honest"
    report = honest["cheating_report"]
    assert report["status"] == "clean", json.dumps(report)[:3000]
    assert honest["scores"]["OutcomeScore"]["score"] == 1.0, honest["scores"]
    for folder, record in sorted(found.items()):
        facts = record["containment"]
        if harness.identity == "root":
            assert facts["cpu_share"] in ("cgroup1", "cgroup2"), (folder, facts)
            assert facts["cpu_share_unavailable"] is None, (folder, facts)
        else:
            assert facts["cpu_share"] is None, (folder, facts)
            assert facts["cpu_share_unavailable"], (folder, facts)
    if harness.identity == "root":
        starver = adversary_outcomes(found["a-starver"])
        assert starver["role"] == "starver" and str(starver["spinners"]) == "32", starver
