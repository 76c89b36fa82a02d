"""The cgroup tree is not a channel between runs: of /sys/fs/cgroup an agent reads only
its own cgroup (cgchan, red team 9: a sibling run's ``cgroup.procs`` lists its pids, so
an agent that forks a chosen number of processes writes a number the other reads).

A standard-library adversary (tests/harness/adversaries/cgroup_peek.py) runs through
``benchguard run`` unsandboxed (a bwrap sandbox shows no /sys at all), as root and as an
unprivileged harness. The control, ``--unconfined``, shows the batch's cgroup listed,
so the test fails when the allow-list grants the tree again.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from harness.helpers import Operator, only_tasks
from harness.privileges import Harness, records, run_adversary

pytestmark = pytest.mark.slow


def _outcomes(record: dict[str, Any]) -> dict[str, str]:
    loaded: dict[str, str] = json.loads(record["output"].strip().splitlines()[-1])
    return loaded


def test_an_agent_reads_only_its_own_cgroup(harness: Harness) -> None:
    """Guards against the allow-list's /sys grant reaching the cgroups of the batch and
    of other runs, while the rest of /sys stays readable."""
    tasks = only_tasks(harness.operator, "sum-numbers")
    run_dir = run_adversary(harness, "cgroup_peek.py", tasks, env={"ATTACK": "confined"})
    [record] = records(run_dir)
    assert record["status"] == "success", record["error"]
    outcomes = _outcomes(record)
    for name in ("root-list", "runs"):
        assert outcomes[name] == "PermissionError: Permission denied", outcomes
    assert not outcomes["root-procs"].startswith("got"), outcomes
    assert outcomes["sysfs"].startswith("got"), outcomes


def test_unconfined_the_batchs_cgroup_is_listed(operator: Operator) -> None:
    """The control: without Landlock the same agent walks the tree to the run cgroups
    (a root harness: each run has a cgroup of its own)."""
    harness = Harness("root", operator)
    tasks = only_tasks(harness.operator, "sum-numbers")
    run_dir = run_adversary(
        harness, "cgroup_peek.py", tasks, "--unconfined", env={"ATTACK": "unconfined"}
    )
    [record] = records(run_dir)
    outcomes = _outcomes(record)
    assert outcomes["root-list"].startswith("got"), outcomes
    assert outcomes["runs"].startswith("got"), outcomes
    assert outcomes["sysfs"].startswith("got"), outcomes
