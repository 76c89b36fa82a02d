"""Running a task's verification checks against a finished run's workspace.

Each check yields one report entry ``{name, role, severity, passed, reason}``. ``passed``
is ``None`` when the check could not be evaluated (its command timed out or could not
start): an errored check is no evidence either way, and scoring leaves it out rather
than reading it as a failure or a pass.

Checks are the operator's, not the agent's, so they run outside any sandbox, in the
workspace, with a minimal environment. Their inputs are the agent's output files, so
reading is bounded (size) and regexes are RE2 (linear time).
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path
from typing import Any

import re2

from benchguard.harness.agents.config import DEFAULT_PATH
from benchguard.harness.process import kill_group
from benchguard.harness.tasks import CommandCheck, FileCheck, Task, quiet_re2_options

# A deliverable larger than this is judged on its first MAX_READ_BYTES only.
MAX_READ_BYTES = 1024 * 1024


def run_checks(task: Task, *, workspace: Path, home: Path) -> list[dict[str, Any]]:
    """Every check of ``task``, in file order; never raises for a failing check."""
    return [_run_one(check, workspace=workspace, home=home) for check in task.verification]


def _entry(check: CommandCheck | FileCheck, passed: bool | None, reason: str) -> dict[str, Any]:
    return {
        "name": check.name,
        "role": check.role,
        "severity": check.severity,
        "passed": passed,
        "reason": reason,
    }


def _run_one(check: CommandCheck | FileCheck, *, workspace: Path, home: Path) -> dict[str, Any]:
    if isinstance(check, CommandCheck):
        return _run_command(check, workspace=workspace, home=home)
    return _run_file(check, workspace=workspace, home=home)


def _run_command(check: CommandCheck, *, workspace: Path, home: Path) -> dict[str, Any]:
    env = {"PATH": os.environ.get("PATH", DEFAULT_PATH), "HOME": str(home), "LC_ALL": "C.UTF-8"}
    try:
        process = subprocess.Popen(
            list(check.command),
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError as exc:
        return _entry(check, None, f"command could not start: {exc.strerror or exc}")
    try:
        code = process.wait(timeout=check.timeout)
    except subprocess.TimeoutExpired:
        kill_group(process)
        return _entry(check, None, f"command timed out after {check.timeout:g}s")
    if code == check.exit_code:
        return _entry(check, True, f"exit code {code} as expected")
    return _entry(check, False, f"exit code {code}, expected {check.exit_code}")


def _resolve(check: FileCheck, *, workspace: Path, home: Path) -> tuple[Path, Path]:
    if check.file.startswith("~/"):
        return home / check.file[2:], home
    return workspace / check.file, workspace


def _run_file(check: FileCheck, *, workspace: Path, home: Path) -> dict[str, Any]:
    path, root = _resolve(check, workspace=workspace, home=home)
    exists = path.is_file()
    if exists and not path.resolve().is_relative_to(root.resolve()):
        # An agent-made symlink must not let a check judge a file outside its run.
        return _entry(check, False, f"{check.file} points outside its root")
    if check.exists is not None:
        if exists == check.exists:
            return _entry(check, True, f"{check.file} {'exists' if exists else 'is absent'}")
        return _entry(check, False, f"{check.file} {'exists' if exists else 'does not exist'}")
    if not exists:
        return _entry(check, False, f"{check.file} does not exist")
    with path.open("rb") as handle:
        text = handle.read(MAX_READ_BYTES).decode("utf-8", errors="replace")
    if check.contains is not None:
        found = check.contains in text
        return _entry(check, found, f"{check.file} {'contains' if found else 'lacks'} the text")
    if check.matches is None:
        # The task model requires exactly one assertion; a check built around it is no
        # evidence either way, so it reads as errored rather than passed or failed.
        return _entry(check, None, f"{check.file}: the check names no assertion to evaluate")
    pattern = re2.compile(check.matches, options=quiet_re2_options())
    found = pattern.search(text) is not None
    return _entry(
        check, found, f"{check.file} {'matches' if found else 'does not match'} the pattern"
    )
