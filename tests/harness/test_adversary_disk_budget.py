"""A run cannot fill the host's disk and so cost another run its record (issue 19: "no
batch loses a run that did not cheat").

The standard-library adversary (tests/harness/adversaries/disk_fill.py) writes the
answer, then 256 MiB into each of its tmp, home and workspace under a 32 MiB
``--disk-budget``, beside an honest run at ``-j 2``; as root and as an unprivileged
harness, sandboxed and not. Defence (harness/disk_budget.py): as root the run's scratch
is a tmpfs of the budget's size (ENOSPC from the kernel), everywhere RLIMIT_FSIZE at the
budget from the launcher and a watchdog that stops the run when its scratch is over
budget; a run that reached it errors with the numbers and is not graded. Checked: with
the budget taken out of the run (no mount, no limit, no watch) the filler scores 1.0 as
a success (the status check fails).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

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

SANDBOXES = ("none", "bwrap")
BUDGET = 32 << 20
PLACES = ("home", "tmp", "workspace")


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_filler_is_stopped_at_its_budget_and_the_honest_run_beside_it_scores(
    harness: Harness, sandbox: str
) -> None:
    """Guards against a run's writable space having no bound: the filler is stopped at
    the budget and its row says why, and the honest run beside it is clean at 1.0."""
    if sandbox == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap is not installed")
    tasks = total_tasks(harness, "fill-tasks", {"a-fill": "FILL. ", "b-work": ""})
    args = ["-j", "2", "--disk-budget", "32MiB"]
    if sandbox == "bwrap":
        args += ["--sandbox", "bwrap"]
    config = write_agent(
        harness.operator.root / "agents", "disk-fill", ADVERSARIES / "disk_fill.py"
    )
    code, output, run_dir = harness.run(str(tasks), "--agent", str(config), *args)
    # 3: a run errored (docs/exit-codes.md); the batch itself finished and published.
    assert code == 3 and run_dir is not None, output
    found = {record["folder"]: record for record in records(run_dir)}
    assert sorted(found) == ["a-fill", "b-work"]
    filler, honest = found["a-fill"], found["b-work"]
    assert filler["status"] == "error", (filler["status"], filler["error"])
    assert filler["error"].startswith("disk budget exceeded: "), filler["error"]
    # The watchdog, not the deadline or the agent's own exit, ended it.
    assert filler["error"].endswith("; the run was stopped"), filler["error"]
    # The watchdog may stop the filler before it prints what it got (how far it came
    # between two looks depends on the machine's speed): then only the record speaks.
    got = adversary_outcomes(filler) if filler["output"].strip() else None
    budget = filler["disk_budget"]
    assert budget["bytes"] == BUDGET and budget["exceeded"], budget
    assert filler["scores"].get("OutcomeScore", {}).get("score") != 1.0, filler["scores"]
    if harness.identity == "root":
        # The kernel's own bound: the scratch never held more than the budget.
        assert "tmpfs" in budget["enforced_by"], budget
        assert budget["peak_bytes"] <= BUDGET, budget
        if got is not None:
            assert all(got[place].endswith(("ENOSPC", "EFBIG")) for place in PLACES), got
            assert sum(int(got[place].split()[0]) for place in PLACES) <= 32, got
    else:
        # The per-file limit: each file stops at the budget (SIGXFSZ ignored: EFBIG).
        if got is not None:
            assert [got[place] for place in PLACES] == ["32 MiB EFBIG"] * 3, got
        assert budget["enforced_by"] == ["rlimit-fsize", "watchdog"], budget
        assert budget["mount_unavailable"], budget
    assert honest["status"] == "success", honest["error"]
    assert adversary_outcomes(honest)["role"] == "honest"
    assert honest["disk_budget"]["exceeded"] is None, honest["disk_budget"]
    assert honest["cheating_report"]["status"] == "clean", json.dumps(honest["cheating_report"])
    assert honest["scores"]["OutcomeScore"]["score"] == 1.0, honest["scores"]


def test_a_bad_budget_is_refused_before_any_run(operator: Operator, tmp_path: Path) -> None:
    """Bad input: a budget that is no size is refused with the value, exit 2."""
    config = write_agent(tmp_path / "agents", "fill", ADVERSARIES / "disk_fill.py")
    code, output, _ = operator.run(
        str(operator.tasks), "--agent", str(config), "--disk-budget", "lots"
    )
    assert code == 2, output
    assert "--disk-budget 'lots': not a size" in output, output
    assert "Traceback" not in output


def test_pre_flight_refuses_a_budget_the_disk_cannot_hold(
    operator: Operator, tmp_path: Path
) -> None:
    """Pre-flight refuses budgets x parallel runs the disk cannot hold, with numbers."""
    config = write_agent(tmp_path / "agents", "fill", ADVERSARIES / "disk_fill.py")
    code, output, _ = operator.run(
        str(operator.tasks), "--agent", str(config), "--disk-budget", "512TiB", "-j", "2"
    )
    assert code == 2, output
    assert "pre-flight refused the batch" in output and "need 1024 TiB" in output, output


def test_pre_flight_refuses_a_home_that_takes_most_of_the_budget(
    operator: Operator, tmp_path: Path
) -> None:
    """A run's copy of the home counts against its budget: a home of more than half of
    it is refused before any run, with both sizes."""
    config = write_agent(tmp_path / "agents", "fill", ADVERSARIES / "disk_fill.py")
    operator.agent_home.mkdir(parents=True, exist_ok=True)
    (operator.agent_home / "big.bin").write_bytes(b"h" * (3 << 20))
    code, output, _ = operator.run(
        str(operator.tasks), "--agent", str(config), "--disk-budget", "4MiB"
    )
    assert code == 2, output
    assert "holds 3 MiB, more than half the disk budget of 4 MiB" in output, output
