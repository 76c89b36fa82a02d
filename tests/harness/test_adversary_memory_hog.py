"""A run cannot exhaust the machine's memory and get its honest sibling OOM-killed
(issue 19: a batch must not lose a run that did not cheat).

The standard-library adversary (tests/harness/adversaries/memory_hog.py) answers its own
task, then allocates and touches 1 GiB, at ``--memory-budget 128M`` and ``-j 2`` beside
an honest run. Defence: every run in a memory cgroup of its own limited to the budget
(harness/memory_limit; on this hybrid host a v1 cgroup with ``memory.limit_in_bytes``,
joined by the run's first process), so the kernel reclaims and OOM-kills within the
hog's run only: its record says the memory limit was reached and errors, and the honest
sibling is 1.0 and clean. Checked, as root: with the limit taken out
(``memory_limit.open_batch`` answering a reason) the hog got its 1 GiB and this test
failed (no limit on its record; scaled to the machine, that is the allocation that
makes the kernel kill whatever process is largest, a sibling's included).

As an unprivileged harness no memory controller can be had here (no delegation): the
records say so (``containment.memory_limit_unavailable``), the hog's attempt is capped
at 1 GiB (this machine has far more: it must not exhaust it) and the honest run passes.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchguard.harness.memory_limit import machine_memory
from harness.helpers import Operator
from harness.privileges import (
    ADVERSARIES,
    Harness,
    adversary_outcomes,
    records,
    total_tasks,
    write_agent,
)

pytestmark = pytest.mark.slow

BUDGET = "128M"
BUDGET_BYTES = 128 << 20
# Far past the budget, far below the machine: unlimited (an unprivileged harness, or the
# defence taken out) the hog must not exhaust the machine it tests on.
HOG_MIB = min(1024, (machine_memory() or 0) // (8 << 20))


def test_a_memory_hog_is_killed_within_its_own_run_and_its_sibling_passes(
    harness: Harness,
) -> None:
    """Guards against one run's allocations reaching the machine: as root the hog is
    OOM-killed inside its own cgroup (its record: memory limit reached, an error), the
    honest sibling at -j 2 is 1.0 and clean; unprivileged the records say why there is
    no limit, and the honest run still passes."""
    assert HOG_MIB >= 512, "a machine of at least 4 GiB: the hog must be far past its budget"
    tasks = total_tasks(harness, "hog-tasks", {"a-hog": "HOG. ", "b-honest": ""})
    env = {"ATTACK": "hog", "HOG_MIB": str(HOG_MIB)}
    config = write_agent(
        harness.operator.root / "agents",
        "memory-hog",
        ADVERSARIES / "memory_hog.py",
        env=tuple(sorted(env)),
    )
    code, output, run_dir = harness.run(
        str(tasks), "--agent", str(config), "-j", "2", "--memory-budget", BUDGET, env=env
    )
    assert run_dir is not None, output
    found = {record["folder"]: record for record in records(run_dir)}
    assert sorted(found) == ["a-hog", "b-honest"]
    honest = found["b-honest"]
    assert honest["status"] == "success", (honest["status"], honest["error"])
    assert adversary_outcomes(honest)["role"] == "honest"
    report = honest["cheating_report"]
    assert report["status"] == "clean", json.dumps(report)[:3000]
    assert honest["scores"]["OutcomeScore"]["score"] == 1.0, honest["scores"]
    hog = found["a-hog"]
    if harness.identity == "root":
        # The hog's failure is its own: an errored run, exit 3 for the batch.
        assert code == 3, output
        for folder, record in sorted(found.items()):
            facts = record["containment"]
            assert facts["memory_limit"] == BUDGET_BYTES, (folder, facts)
            assert facts["memory_limit_unavailable"] is None, (folder, facts)
        assert hog["containment"]["memory_limit_reached"] is True, hog["containment"]
        assert hog["containment"]["memory_oom_kills"] >= 1, hog["containment"]
        assert hog["status"] == "error", (hog["status"], hog["error"])
        assert hog["error"].startswith("memory limit reached:"), hog["error"]
        assert honest["containment"]["memory_limit_reached"] is False, honest["containment"]
    else:
        assert code in (0, 1), output
        for folder, record in sorted(found.items()):
            facts = record["containment"]
            assert facts["memory_limit"] is None, (folder, facts)
            assert facts["memory_limit_unavailable"], (folder, facts)
            assert facts["memory_limit_reached"] is None, (folder, facts)
        assert str(adversary_outcomes(hog)["allocated_mib"]) == str(HOG_MIB), hog["output"]


def test_a_bad_memory_budget_is_refused_before_any_run(operator: Operator, tmp_path: Path) -> None:
    """Bad input: a budget that is no size is refused naming the option and the value,
    exit 2, no traceback."""
    config = write_agent(tmp_path / "agents", "hog", ADVERSARIES / "memory_hog.py")
    for value, message in (
        ("lots", "--memory-budget 'lots': not a size"),
        ("1M", "--memory-budget '1M': below the smallest budget, 64 MiB"),
    ):
        code, output, _ = operator.run(
            str(operator.tasks), "--agent", str(config), "--memory-budget", value
        )
        assert code == 2, output
        assert message in output, output
        assert "Traceback" not in output
