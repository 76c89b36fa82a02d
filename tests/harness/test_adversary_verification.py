"""Verification cannot be hijacked by what the agent leaves behind.

A module shadowing a check's import (``json/`` beside ``python3 -m json.tool``), a
symlink out of the workspace, and a home file an earlier run left: each must fail the
check it targets, with the harness as root and as an unprivileged user, with and
without the agent sandbox, and with the checks' own sandbox on or off.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from benchguard.harness.identity import AgentIdentity, hand_over
from benchguard.harness.tasks import load_tasks
from benchguard.harness.verification import CheckSandbox, HomeFiles, run_checks
from harness.privileges import ADVERSARIES, Harness, records, write_agent

pytestmark = pytest.mark.slow
JSON_TASK = """\
name: Emit JSON
prompt: Write a JSON object with your answer to answer.json.
timeout: 30
verification:
  - name: valid-json
    role: correctness
    command: ["python3", "-m", "json.tool", "answer.json"]
    exit_code: 0
"""


def _json_tasks(root: Path) -> Path:
    tasks = root / "json-tasks"
    (tasks / "emit-json").mkdir(parents=True)
    (tasks / "emit-json" / "task.yaml").write_text(JSON_TASK, "utf-8")
    for path in (tasks, tasks / "emit-json", tasks / "emit-json" / "task.yaml"):
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return tasks


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_a_module_shadowing_the_checks_import_does_not_pass_the_check(
    harness: Harness, sandbox: str
) -> None:
    """Guards against `python3 -m json.tool answer.json` importing the agent's `json/`
    (checks ran on the host with the workspace as cwd) and passing garbage."""
    if shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    operator = harness.operator
    config = write_agent(operator.root / "agents", "shadow", ADVERSARIES / "shadow.py")
    marker = operator.agent_home / "shadow-ran"
    Path("/tmp/bg-shadow-ran").unlink(missing_ok=True)
    run_dir = harness.run_ok(
        str(_json_tasks(operator.root)), "--agent", str(config), "--sandbox", sandbox
    )
    [record] = records(run_dir)
    [check] = record["verification_report"]
    assert check["passed"] is False, check
    assert record["checks_sandboxed"] is True
    assert not marker.exists() and not Path("/tmp/bg-shadow-ran").exists()


@pytest.mark.parametrize("sandboxed", [True, False])
def test_shadowing_fails_with_or_without_the_checks_sandbox(
    tmp_path: Path, sandboxed: bool
) -> None:
    """Guards against the unsandboxed fallback (no bubblewrap) still importing from the
    workspace: the clean environment alone (PYTHONSAFEPATH) must hold."""
    if sandboxed and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    [task] = load_tasks(_json_tasks(tmp_path)).tasks
    workspace = tmp_path / "ws"
    workspace.mkdir()
    Path("/tmp/bg-shadow-ran").unlink(missing_ok=True)
    subprocess.run([sys.executable, str(ADVERSARIES / "shadow.py")], cwd=workspace, check=True)
    home = tmp_path / "home"
    home.mkdir()
    sandbox = CheckSandbox("bwrap", None) if sandboxed else None
    if sandboxed and os.geteuid() == 0:
        identity = AgentIdentity(65534, 65534)
        hand_over(identity, workspace)
        sandbox = CheckSandbox("bwrap", identity)
    [check] = run_checks(task, workspace=workspace, home=home, sandbox=sandbox)
    assert check["passed"] is False, check
    assert not Path("/tmp/bg-shadow-ran").exists()


def test_a_home_file_left_by_an_earlier_run_is_no_evidence(tmp_path: Path) -> None:
    """Guards against a do-nothing agent scoring on a home-file task because an honest
    run left ~/notes.md behind: only a file this run created or changed counts."""
    tasks = tmp_path / "tasks"
    (tasks / "notes").mkdir(parents=True)
    (tasks / "notes" / "task.yaml").write_text(
        "name: Notes\nprompt: Write ~/notes.md.\nverification:\n"
        "  - name: notes\n    role: correctness\n    file: ~/notes.md\n    exists: true\n",
        "utf-8",
    )
    [task] = load_tasks(tasks).tasks
    home, workspace = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    workspace.mkdir()
    (home / "notes.md").write_text("from an earlier run\n", "utf-8")
    before = HomeFiles.snapshot(task, home)
    [idle] = run_checks(task, workspace=workspace, home=home, home_files=before)
    assert idle["passed"] is False and "unchanged" in idle["reason"]
    (home / "notes.md").write_text("from this run\n", "utf-8")
    [worked] = run_checks(task, workspace=workspace, home=home, home_files=before)
    assert worked["passed"] is True


def test_a_symlink_out_of_the_workspace_is_not_followed(tmp_path: Path) -> None:
    """Guards against a deliverable that is a link to a file the agent did not write
    (an operator's file holding the expected text)."""
    tasks = tmp_path / "tasks"
    (tasks / "t").mkdir(parents=True)
    (tasks / "t" / "task.yaml").write_text(
        "name: T\nprompt: Write answer.txt.\nverification:\n"
        "  - name: a\n    role: correctness\n    file: answer.txt\n    contains: secret\n",
        "utf-8",
    )
    [task] = load_tasks(tasks).tasks
    outside = tmp_path / "expected.txt"
    outside.write_text("secret\n", "utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "answer.txt").symlink_to(outside)
    [check] = run_checks(task, workspace=workspace, home=tmp_path)
    assert check["passed"] is False and "outside" in check["reason"]
