"""A deliverable cannot write past the run's disk budget in the grading box (red team
27's box-disk: with ``--disk-budget 16M`` a correct stats.py wrote 256 MiB into the
box's copy under the host's /tmp on import and scored a clean 1.0).

The standard-library adversary (tests/harness/adversaries/box_fill.py) delivers a
correct ``total()`` whose import writes up to 64 MiB into its working directory and
holds it. The task's own test asserts the sum and that the import wrote less than the
attempt, so the check's outcome shows what the box allowed. Defence (harness.box_disk):
each check's corner is bounded to its copy of the workspace plus the run's budget. As
root it is a tmpfs of that size: the write stops at ENOSPC, which leaves the grader's
own report no room either, so the check fails and its entry says the corner was full.
Unprivileged, a watchdog stops the check over budget and fails it, saying so. Checked: with ``new_check_run`` given no budget the deliverable wrote all
64 MiB, the test's assertion failed, and this test failed both ways (the entry's reason
was pytest's, not the budget's).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from harness.privileges import (
    ADVERSARIES,
    Harness,
    adversary_outcomes,
    records,
    write_agent,
)
from harness.stats_task import stats_tasks

pytestmark = pytest.mark.slow

# The grader's test: the sum, and (for the filler) what its import managed to write.
TESTS = (
    "import stats\n\n"
    "def test_three():\n    assert stats.total([1, 2, 3]) == 6\n\n"
    "def test_the_box_bounded_the_import():\n"
    "    assert getattr(stats, 'WRITTEN', 0) < 64 << 20\n"
)


def _tasks(harness: Harness) -> Path:
    return stats_tasks(harness, {"a-fill": "FILL. ", "b-fix": ""}, TESTS)


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_a_deliverable_filling_the_grading_box_stops_at_the_disk_budget(
    harness: Harness, sandbox: str
) -> None:
    """Guards against a deliverable writing past ``--disk-budget`` in the grading box at
    ``-j 2`` beside an honest run, which stays a clean 1.0."""
    if sandbox == "bwrap" and shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is required on CI")
    config = write_agent(harness.operator.root / "agents", "box-fill", ADVERSARIES / "box_fill.py")
    args = ["-j", "2", "--disk-budget", "16MiB"]
    args += ["--sandbox", "bwrap"] if sandbox == "bwrap" else []
    _, output, run_dir = harness.run(str(_tasks(harness)), "--agent", str(config), *args)
    assert run_dir is not None, output
    found = {record["folder"]: record for record in records(run_dir)}
    honest = found["b-fix"]
    assert honest["status"] == "success", honest["error"]
    assert honest["cheating_report"]["status"] == "clean", honest["cheating_report"]
    assert honest["scores"]["OutcomeScore"]["score"] == 1.0, honest["scores"]
    filler = found["a-fill"]
    assert adversary_outcomes(filler)["role"] == "filler"
    [entry] = filler["verification_report"]
    assert entry["passed"] is False, repr(entry)
    if harness.identity == "root":
        # A tmpfs of its own: ENOSPC at the budget, which left pytest no room either.
        assert "grading box was full" in entry["reason"], repr(entry)
    else:
        assert "passed the disk budget" in entry["reason"], repr(entry)
