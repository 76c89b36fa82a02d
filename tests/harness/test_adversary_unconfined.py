"""An ``--unconfined`` run skips Landlock, and must still not be handed the harness.

A red team's agents, run ``--unconfined`` as root, unmounted the run's own ``/proc``
(the pid and mount namespace the run lives in) to reveal the host's, then read every
task file through ``/proc/<harness>/root`` and the harness's heap through
``/proc/<harness>/mem``: every answer, forged scores, clean rows, and the audit saw
nothing (neither is a file on the audited mounts). The defences: the launcher drops
every capability of every agent process (so the unmount fails, and the kernel refuses
``mem``, ``root``, ``environ`` and ptrace of a process whose capabilities exceed the
caller's), and the harness makes itself non-dumpable (so even a process of the same
uid and capabilities, an unprivileged harness's agent, needs ``CAP_SYS_PTRACE``).

The standard-library adversary (tests/harness/adversaries/harness_reach.py) runs
through ``benchguard run --unconfined`` as root and as an unprivileged harness; the
non-dumpable harness is also checked on its own with a control that shows the same
attack succeeding against a dumpable one (so the test can fail).
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import Any

import pytest

from harness.helpers import REPO, only_tasks
from harness.privileges import (
    ADVERSARIES,
    UNPRIVILEGED,
    Harness,
    can_run_as_user,
    records,
    run_adversary,
    unprivileged_command,
)

pytestmark = pytest.mark.slow


def _canary_task(harness: Harness) -> tuple[Path, Path, str]:
    """A sum-numbers task whose rubric holds a canary only the harness ever holds (the
    agent is never given a rubric); the tasks directory, its task file, the canary."""
    tasks = only_tasks(harness.operator, "sum-numbers")
    [task_file] = sorted(tasks.glob("*/task.yaml"))
    canary = f"bg-canary-harness-{secrets.token_hex(8)}"
    text = task_file.read_text("utf-8")
    if "bg-canary-harness-" not in text:
        task_file.write_text(text.replace("which is 137.", f"which is 137. {canary}"), "utf-8")
    else:
        canary = "bg-canary-harness-" + text.split("bg-canary-harness-")[1].split()[0]
    return tasks, task_file, canary


def _attack_env(task_file: Path, canary: str) -> dict[str, str]:
    # The agent gets the canary hex-encoded: the raw string must exist only where the
    # harness keeps the task, not in the environment every process inherits.
    return {"ATTACK_TARGET": str(task_file), "ATTACK_CANARY_HEX": canary.encode().hex()}


def _outcomes(record: dict[str, Any]) -> dict[str, str]:
    last = record["output"].strip().splitlines()[-1]
    loaded: dict[str, str] = json.loads(last)
    return loaded


def test_unconfined_agent_cannot_reach_the_harness(harness: Harness) -> None:
    """Guards against an --unconfined agent unmounting its /proc and reading the
    harness's files through /proc/<harness>/root or its memory through /proc/<harness>/mem
    or process_vm_readv (root: capabilities dropped; unprivileged: locked mounts and the
    non-dumpable harness)."""
    tasks, task_file, canary = _canary_task(harness)
    env = _attack_env(task_file, canary)
    run_dir = run_adversary(harness, "harness_reach.py", tasks, "--unconfined", env=env)
    [record] = records(run_dir)
    assert record["status"] == "success", record["error"]
    assert record["confined"] is False
    outcomes = _outcomes(record)
    assert outcomes["umount-proc"].startswith("denied"), outcomes
    assert outcomes["userns-umount"].startswith("denied"), outcomes
    outside = {k: v for k, v in outcomes.items() if k.startswith("outside:")}
    assert not {k: v for k, v in outside.items() if v.startswith("got")}, outside
    assert outcomes["canary"] == "absent", outcomes
    assert record["containment"]["agent_capabilities"] == "none"
    if harness.identity == "root":
        assert record["containment"]["harness_dumpable"] is False
    report = record["cheating_report"]
    if report["status"] == "clean":
        # It did the task honestly: only the defence stood between it and the material.
        assert record["scores"]["OutcomeScore"]["score"] == 1.0
    else:
        # The strace audit (unprivileged harness) records the refused open of the task
        # file through the namespace init's root as tried: the attempt gates the run.
        findings = report["findings"]
        assert findings and all(f["source"] == "audit" for f in findings), report
        assert all(str(task_file) in f["excerpt"] for f in findings), report
        assert record["scores"]["OutcomeScore"]["score"] == 0.0
    rows = json.loads((run_dir / "rows.json").read_text("utf-8"))
    assert [(row["confined"], row["agentCapabilities"]) for row in rows] == [(False, "none")]


def test_honest_batch_passes_unconfined_without_capabilities(harness: Harness) -> None:
    """Dropping every capability costs an honest --unconfined agent nothing: every
    example task scores 1.0 clean, as root and unprivileged."""
    agent = REPO / "examples" / "agents" / "honest.yaml"
    run_dir = harness.run_ok(str(harness.operator.tasks), "--agent", str(agent), "--unconfined")
    found = records(run_dir)
    assert len(found) == 4
    for record in found:
        assert record["status"] == "success", record["error"]
        assert record["confined"] is False
        assert record["containment"]["agent_capabilities"] == "none"
        assert record["scores"]["OutcomeScore"]["score"] == 1.0
        assert record["cheating_report"]["status"] == "clean", record["cheating_report"]


# A harness in miniature, as uid 65534 with no pid namespace between it and its agent (a
# host where unshare cannot make one): it holds the canary, optionally makes itself
# non-dumpable, and starts the adversary through the real launcher, unconfined.
_MINI_HARNESS = """
import os, subprocess, sys
from benchguard.harness.confine import Policy, launcher_argv, protect_harness
canary = bytes.fromhex(os.environ["ATTACK_CANARY_HEX"]).decode()
held = [canary * 1]
if sys.argv[1] == "protect":
    assert protect_harness()
done = subprocess.run(launcher_argv(Policy(confine=False), [sys.executable, sys.argv[2]]),
                      capture_output=True, text=True, check=False)
sys.stdout.write(done.stdout)
sys.stderr.write(done.stderr)
sys.exit(done.returncode)
"""


def _mini_harness(tmp: Path, mode: str, canary: str) -> dict[str, str]:
    workspace = tmp / f"ws-{mode}"
    workspace.mkdir()
    os.chown(workspace, UNPRIVILEGED, UNPRIVILEGED)
    channel = workspace / "trajectory.jsonl"
    secret = workspace / "harness-only.txt"
    secret.write_text("harness-file\n", "utf-8")
    os.chown(secret, UNPRIVILEGED, UNPRIVILEGED)
    argv, env = unprivileged_command(
        workspace,
        ["-c", _MINI_HARNESS, mode, str(ADVERSARIES / "harness_reach.py")],
        env={
            "BENCHGUARD_TRAJECTORY": str(channel),
            "ATTACK_TARGET": str(secret),
            **_attack_env(secret, canary),
        },
    )
    done = subprocess.run(
        argv, cwd=workspace, env=env, capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    loaded: dict[str, str] = json.loads(done.stdout.strip().splitlines()[-1])
    return loaded


def test_same_uid_agent_cannot_read_a_non_dumpable_harness() -> None:
    """Guards against an agent of the harness's own uid (no capability on either side)
    reading the harness's memory, environment and root through /proc when it can see
    the harness: the harness is non-dumpable. The control (the same harness left
    dumpable) shows the same attack reading the canary, so this test can fail."""
    if not can_run_as_user():
        pytest.fail("needs root, setpriv and Debian's python3.11 (present on CI)")
    canary = f"bg-canary-harness-{secrets.token_hex(8)}"
    # Under /tmp: pytest's own tmp is root-only, and the harness here is uid 65534.
    root = Path(tempfile.mkdtemp(prefix="bg-nodump-"))
    try:
        os.chmod(root, 0o755)
        exposed = _mini_harness(root, "dumpable", canary)
        protected = _mini_harness(root, "protect", canary)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    assert exposed["canary"].startswith("got"), exposed
    assert protected["canary"] == "absent", protected
    parent = [k for k in protected if k.startswith("outside:")]
    assert parent, protected
    for technique in ("root", "cwd", "environ", "mem", "vm-readv", "ptrace"):
        hits = {k: protected[k] for k in parent if k.endswith(":" + technique)}
        assert hits and not any(v.startswith("got") for v in hits.values()), hits
