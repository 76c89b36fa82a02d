"""The sandbox is a boundary whoever starts it: remount write-through and planted trojans.

Each test runs a standard-library adversary (tests/harness/adversaries/) through
``benchguard run --sandbox bwrap``, once with the harness as root and once as an
unprivileged user, and checks the host afterwards: the attack must not have landed.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from benchguard.harness.identity import AgentIdentity, hand_over
from benchguard.harness.sandbox import SandboxSelfCheckFailed, SandboxSpec, self_check
from harness.helpers import only_tasks
from harness.privileges import Harness, records, run_adversary

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed"),
]


def _targets() -> list[Path]:
    """Where a trojan would run with the harness's privileges: the interpreter's
    scripts and site-packages, read-only binds inside the sandbox."""
    venv = Path(sys.prefix).resolve()
    site = venv / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
    return [venv / "bin", site, Path(sys.base_prefix).resolve() / "bin"]


def test_remount_and_trojans_never_reach_the_host(harness: Harness) -> None:
    """Guards against an agent remounting a read-only bind read-write (it held every
    capability in a namespace mapped to host root) and planting an executable on PATH
    or a .pth in site-packages that the harness would run later."""
    targets = _targets()
    planted = [t / name for t in targets for name in ("bg-trojan", "bg-trojan.pth")]
    for path in planted:
        path.unlink(missing_ok=True)
    tasks = only_tasks(harness.operator, "sum-numbers")
    try:
        run_dir = run_adversary(
            harness,
            "escape.py",
            tasks,
            "--sandbox",
            "bwrap",
            env={"ATTACK_TARGETS": os.pathsep.join(map(str, targets))},
        )
        landed = [str(p) for p in planted if p.exists()]
    finally:
        for path in planted:
            path.unlink(missing_ok=True)
    assert landed == []
    [record] = records(run_dir)
    tried = [s for s in record["trajectory"] if s["args"]["command"].startswith("cat >")]
    assert tried and all(s["result"].startswith("refused") for s in tried)
    assert record["sandboxed"] is True


@pytest.mark.skipif(os.geteuid() != 0, reason="the unsafe root sandbox needs root")
def test_self_check_refuses_a_sandbox_that_keeps_root_capabilities(tmp_path: Path) -> None:
    """Guards against the self-check passing a sandbox that leaks: the old way of
    starting bwrap as root (no identity) must be refused before any task runs."""
    workspace, home = tmp_path / "ws", tmp_path / "home"
    workspace.mkdir()
    home.mkdir()
    spec = SandboxSpec(workspace=workspace, home=home)
    with pytest.raises(SandboxSelfCheckFailed, match="capabilities") as refused:
        self_check(spec, None)
    assert "could remount" in str(refused.value) and "host root" in str(refused.value)
    identity = AgentIdentity(65534, 65534)
    hand_over(identity, workspace, home)
    self_check(spec, identity)


@pytest.mark.skipif(shutil.which("strace") is None, reason="strace not installed")
def test_without_the_sandbox_a_planted_trojan_is_flagged_by_the_audit(harness: Harness) -> None:
    """Guards against an unsandboxed agent writing an executable into a directory on
    the harness's PATH or a .pth into its site-packages unnoticed: nothing prevents it
    (as root the write lands; as a user it is denied), so the audit must flag it."""
    targets = _targets()
    planted = [t / name for t in targets for name in ("bg-trojan", "bg-trojan.pth")]
    tasks = only_tasks(harness.operator, "sum-numbers")
    try:
        run_dir = run_adversary(
            harness,
            "escape.py",
            tasks,
            "--audit",
            "strace",
            # The audit is on trial: Landlock (which refuses the write) is off.
            "--unconfined",
            env={"ATTACK_TARGETS": os.pathsep.join(map(str, targets))},
        )
    finally:
        for path in planted:
            path.unlink(missing_ok=True)
    [record] = records(run_dir)
    found = [f for f in record["cheating_report"]["findings"] if f.get("source") == "audit"]
    # The interpreter (root's venv) or the checkout around it (a user harness runs the
    # system Python, so the test's venv is just part of the checkout): flagged either way.
    assert found and {f["category"] for f in found} <= {"harness-install", "harness-repo"}, record[
        "system_audit"
    ]
    assert any("bg-trojan" in f["excerpt"] for f in found)
    assert record["scores"]["OutcomeScore"]["score"] == 0.0


def test_without_the_sandbox_landlock_refuses_the_trojan(harness: Harness) -> None:
    """Guards against an unsandboxed agent (root or not) planting an executable on the
    harness's PATH or a .pth in its site-packages: the interpreter's trees are read and
    execute only in the Landlock allow-list, so the write never lands."""
    targets = _targets()
    planted = [t / name for t in targets for name in ("bg-trojan", "bg-trojan.pth")]
    tasks = only_tasks(harness.operator, "sum-numbers")
    try:
        run_dir = run_adversary(
            harness,
            "escape.py",
            tasks,
            env={"ATTACK_TARGETS": os.pathsep.join(map(str, targets))},
        )
        landed = [str(p) for p in planted if p.exists()]
    finally:
        for path in planted:
            path.unlink(missing_ok=True)
    assert landed == []
    [record] = records(run_dir)
    assert record["confined"] is True
