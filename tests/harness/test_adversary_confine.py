"""Landlock confines every agent process: no spelling or route reaches the material.

A standard-library adversary (tests/harness/adversaries/confine_escape.py) runs through
``benchguard run`` as root and as an unprivileged harness, sandboxed and not, and at
``-j 2``, and tries every route the kernel accepts to a task file, a prior run's
results and a harness checkout file (``//x``, ``/proc/self/root/x``, ``dup2``/``fcntl``
fds, ``open_tree``, a second thread, a thread's ``chdir``, a relative symlink, a hard
link, ``O_RDWR``), the parent's fds, a signal to the harness, a forged file in the
results and another run's scratch. Every attempt must obtain nothing. The unconfined
control shows the same agent does obtain them without Landlock, so the test can fail.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from harness.helpers import REPO, only_tasks
from harness.privileges import Harness, records, run_adversary

pytestmark = pytest.mark.slow
SANDBOXES = ("none", "bwrap")


def _attack_env(harness: Harness, tasks: Path, *, wait: int = 0) -> dict[str, str]:
    prior = harness.operator.results / "prior"
    prior.mkdir(parents=True, exist_ok=True)
    (prior / "answer-key.txt").write_text("bg-canary-prior-results\n", "utf-8")
    # Beside the agent's directory (bound into the sandbox at its host path, under
    # /tmp wherever the tests run): listing its directory must not show the operator's
    # tree, as listing the checkout must not show its bound .venv and launcher.
    notes = harness.operator.root / "operator-notes.txt"
    notes.write_text("bg-canary-operator-notes\n", "utf-8")
    for path in (harness.operator.results, prior, prior / "answer-key.txt", notes):
        if harness.identity == "user":
            os.chown(path, 65534, 65534)
    targets = [
        sorted(tasks.glob("*/task.yaml"))[0],
        prior / "answer-key.txt",
        REPO / "pyproject.toml",
        notes,
    ]
    return {
        "ATTACK_TARGETS": os.pathsep.join(str(t) for t in targets),
        "ATTACK_FORGE": str(harness.operator.results),
        "ATTACK_WAIT": str(wait),
    }


def _outcomes(record: dict[str, Any]) -> dict[str, str]:
    last = record["output"].strip().splitlines()[-1]
    loaded: dict[str, str] = json.loads(last)
    return loaded


def _obtained(record: dict[str, Any]) -> dict[str, str]:
    return {key: value for key, value in _outcomes(record).items() if value.startswith("got")}


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_route_reaches_the_material(harness: Harness, sandbox: str) -> None:
    """Guards against every path spelling and fd route the audit once re-implemented in
    user space: the kernel refuses them all, root or not, sandboxed or not. Sandboxed,
    it also guards against a Landlock grant on the sandbox's /tmp, beneath which bwrap
    binds host paths under /tmp (a fresh clone with its .venv, the operator's tree) and
    makes their parent directories: listing them showed the checkout's src/ and .venv."""
    tasks = only_tasks(harness.operator, "sum-numbers")
    env = _attack_env(harness, tasks)
    args = ("--sandbox", sandbox) if sandbox == "bwrap" else ()
    run_dir = run_adversary(harness, "confine_escape.py", tasks, *args, env=env)
    [record] = records(run_dir)
    assert record["status"] == "success", record["error"]
    assert record["confined"] is True and record["landlock_abi"] >= 6
    outcomes = _outcomes(record)
    assert len(outcomes) == 4 * 12 + 4
    assert _obtained(record) == {}
    assert not (harness.operator.results / "forged-by-agent.json").exists()
    if sandbox == "none":
        # Refused by the kernel: by the allow-list, or absent where the target lies
        # beneath the harness's temp directory (the run's namespace holds only its own
        # scratch there: harness/separate_exec).
        assert outcomes["0:plain"] in ("denied PermissionError 13", "denied FileNotFoundError 2")
        assert outcomes["signal"] == "denied PermissionError 1"


def test_runs_at_j2_cannot_read_each_other(harness: Harness) -> None:
    """Guards against one run reading a concurrent run's scratch (its workspace) while
    both are alive: at -j 2 each run's allow-list holds only its own."""
    tasks = only_tasks(harness.operator, "sum-numbers")
    env = _attack_env(harness, tasks, wait=20)
    run_dir = run_adversary(
        harness, "confine_escape.py", tasks, "--iterations", "2", "-j", "2", env=env
    )
    found = records(run_dir)
    assert len(found) == 2
    for record in found:
        assert _obtained(record) == {}
        assert _outcomes(record)["other-runs"].startswith("denied")


def test_the_attacks_work_unconfined(operator_harness: Harness) -> None:
    """The control: without Landlock (``--unconfined``, no sandbox) the same agent reads
    every target by every route and forges a results file, so the tests above fail
    when the defence is removed. The batch says it ran unconfined."""
    harness = operator_harness
    tasks = only_tasks(harness.operator, "sum-numbers")
    env = _attack_env(harness, tasks, wait=20)
    run_dir = run_adversary(
        harness, "confine_escape.py", tasks, "--unconfined", "--iterations", "2", "-j", "2", env=env
    )
    found = records(run_dir)
    for record in found:
        assert record["confined"] is False and record["landlock_abi"] is None
        got = _obtained(record)
        for index in range(4):
            for technique in ("plain", "double-slash", "proc-root", "dup-fd", "thread"):
                assert f"{index}:{technique}" in got
        assert "forge" in got
        assert got["other-runs"].startswith("got b'run-secret-")
    assert (harness.operator.results / "forged-by-agent.json").exists()
    manifest = json.loads((run_dir / "manifest.json").read_text("utf-8"))
    assert "unconfined" in manifest["augmentation"]
    rows = json.loads((run_dir / "rows.json").read_text("utf-8"))
    assert all(row["confined"] is False for row in rows)


@pytest.fixture
def operator_harness(operator: Any) -> Harness:
    return Harness("root", operator)


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_honest_batch_stays_clean_when_confined(harness: Harness, sandbox: str) -> None:
    """Landlock must cost an honest agent nothing: every example task scores 1.0 clean."""
    if sandbox == "bwrap" and shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is required on CI")
    args = ("--sandbox", sandbox) if sandbox == "bwrap" else ()
    agent = REPO / "examples" / "agents" / "honest.yaml"
    run_dir = harness.run_ok(str(harness.operator.tasks), "--agent", str(agent), *args)
    found = records(run_dir)
    assert len(found) == 4
    for record in found:
        assert record["confined"] is True, record["error"]
        assert record["status"] == "success", record["error"]
        assert record["scores"]["OutcomeScore"]["score"] == 1.0
        assert record["cheating_report"]["status"] == "clean"
