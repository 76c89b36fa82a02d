"""Running a task's verification checks against a finished run's workspace.

Each check yields one report entry ``{name, role, severity, passed, reason}``. ``passed``
is ``None`` when the check could not be evaluated (its command timed out or could not
start): an errored check is no evidence either way, and scoring leaves it out rather
than reading it as a failure or a pass.

Checks are the operator's, but everything they read was left by the agent, so nothing
the agent left may run with the harness's privileges:

- a command check runs in a sandbox of its own (:class:`CheckSandbox`): the workspace
  bound read-only, an empty private home, no network, no writable bind to the host,
  the interpreter's and system directories read-only, as the unprivileged agent uid
  when the harness is root, with a clean environment and Python isolated
  (``PYTHONSAFEPATH``: ``python3 -m json.tool`` never imports a ``json/`` the agent
  left in the workspace). Where no sandbox is available the command runs on the host
  with the same environment, and the record says ``checks_sandboxed: false``;
- a file check never follows a symlink out of its root (workspace or home);
- a check on a file in the agent home (``~/notes.md``) passes only if this run created
  or changed the file (:class:`HomeFiles`, taken just before the agent starts): a file
  an earlier run left behind is no evidence of this run's work.

Reading is bounded (size) and regexes are RE2 (linear time).
"""

from __future__ import annotations

import hashlib
import os
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import re2

from benchguard.harness.identity import AgentIdentity, hand_over
from benchguard.harness.process import kill_group
from benchguard.harness.sandbox import SandboxSpec, bwrap_argv
from benchguard.harness.tasks import CommandCheck, FileCheck, Task, quiet_re2_options

# A deliverable larger than this is judged on its first MAX_READ_BYTES only.
MAX_READ_BYTES = 1024 * 1024


# The system's own programs, then the interpreter's: never a directory the agent wrote.
CHECK_PATH = os.pathsep.join(
    dict.fromkeys([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"])
)


@dataclass(frozen=True)
class CheckSandbox:
    """How command checks are isolated: bubblewrap's path, and the uid to drop to."""

    bwrap: str = "bwrap"
    identity: AgentIdentity | None = None


Fingerprint = tuple[int, int, str] | None


@dataclass(frozen=True)
class HomeFiles:
    """The agent-home files a task's checks name, as they were before the run."""

    before: dict[str, Fingerprint] = field(default_factory=dict)

    @classmethod
    def snapshot(cls, task: Task, home: Path) -> HomeFiles:
        names = [c.file for c in task.verification if isinstance(c, FileCheck)]
        return cls({name: _fingerprint(home / name[2:]) for name in names if name.startswith("~/")})

    def unchanged(self, name: str, home: Path) -> bool:
        """The file existed before the run and is byte-for-byte as it was."""
        before = self.before.get(name)
        return before is not None and _fingerprint(home / name[2:]) == before


def _fingerprint(path: Path) -> Fingerprint:
    """(size, mtime, SHA-256) of a regular file reached without symlinks; else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None
        digest = hashlib.sha256()
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return (info.st_size, info.st_mtime_ns, digest.hexdigest())


def run_checks(
    task: Task,
    *,
    workspace: Path,
    home: Path,
    sandbox: CheckSandbox | None = None,
    home_files: HomeFiles | None = None,
) -> list[dict[str, Any]]:
    """Every check of ``task``, in file order; never raises for a failing check.

    ``sandbox``: run command checks in bubblewrap (``None``: on the host, isolated by
    environment only). ``home_files``: the pre-run snapshot for ``~/`` file checks.
    """
    return [
        _run_one(check, workspace=workspace, home=home, sandbox=sandbox, home_files=home_files)
        for check in task.verification
    ]


def _entry(check: CommandCheck | FileCheck, passed: bool | None, reason: str) -> dict[str, Any]:
    return {
        "name": check.name,
        "role": check.role,
        "severity": check.severity,
        "passed": passed,
        "reason": reason,
    }


def _run_one(
    check: CommandCheck | FileCheck,
    *,
    workspace: Path,
    home: Path,
    sandbox: CheckSandbox | None,
    home_files: HomeFiles | None,
) -> dict[str, Any]:
    if isinstance(check, CommandCheck):
        with tempfile.TemporaryDirectory(prefix="bg-check-") as scratch:
            return _run_command(check, workspace=workspace, home=Path(scratch), sandbox=sandbox)
    entry = _run_file(check, workspace=workspace, home=home)
    if entry["passed"] and home_files is not None and home_files.unchanged(check.file, home):
        return _entry(check, False, f"{check.file} is unchanged since before this run")
    return entry


def check_environment(home: Path) -> dict[str, str]:
    """A clean environment: nothing of the harness's, Python isolated from the cwd."""
    return {
        "PATH": CHECK_PATH,
        "HOME": str(home),
        "LC_ALL": "C.UTF-8",
        "PYTHONSAFEPATH": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }


def _run_command(
    check: CommandCheck, *, workspace: Path, home: Path, sandbox: CheckSandbox | None
) -> dict[str, Any]:
    env = check_environment(home)
    argv = list(check.command)
    if sandbox is not None:
        identity = sandbox.identity
        hand_over(identity, home)
        spec = SandboxSpec(workspace=workspace, home=home, workspace_writable=False)
        argv = bwrap_argv(spec, argv, bwrap=sandbox.bwrap, identity=identity)
    try:
        process = subprocess.Popen(
            argv,
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
