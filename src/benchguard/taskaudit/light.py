"""Light runs: a built-in exploit on a task graded by its checks alone, without the
agent launch, in two steps: act, then grade (shared between identical probes).

A task whose checks are workspace file checks and command checks (no ``~/`` file
check; ``expected_output`` and ``rubric`` are read only by a judge, and the audit runs
none) is graded from the files the run leaves in its workspace and
nothing else: the grading box copies the workspace, command checks run in the box
with an empty private home and a clean environment. For such a task the audit runs a
built-in exploit (``exploits/exploit.py``, the audit's own program, never an agent's)
as a plain subprocess in a fresh copy of the task's workspace seed, with
``plan.json`` beside it, exactly as the harness would start it (same argv, working
directory and ``HOME``): :func:`act`. It then grades the workspace with the
harness's own grading (``harness.verification.grade``: the same grading box, grading
files and grader outputs, and command checks in the same check sandbox the harness
uses, :func:`check_sandbox`) and scores the report with
``scoring.verification.verification_scores``: :func:`grade_acted`.

Grading is a function of the workspace the exploit left and of the task's grading
inputs (its checks, grading files' bytes, grader outputs): :func:`grading_key`.
Probes with the same workspace digest and grading key (three tasks checked by the
same command over the same seed, or two exploits that leave the same files) are
graded once and share the verdict.

What it skips is what no check of such a task reads: the launcher, Landlock, the
sandbox, the fresh home, the transcript channel, tampering digests and the batch's
records. Not used for the no-op (the baseline runs through the harness), the reading
exploit (it tests the sandbox), the reference solution (any program) or operator
exploits. An exploit that does not exit 0 within the task's timeout is not judged
here (None): the audit runs it through the harness instead.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchguard.harness.identity import IdentityError, agent_identity
from benchguard.harness.sandbox import SandboxUnavailable, probe_bwrap
from benchguard.harness.tasks import CommandCheck, FileCheck, Task
from benchguard.harness.verification import CheckSandbox, grade
from benchguard.scoring.keys import VERIFICATION_CORRECTNESS
from benchguard.scoring.verification import verification_scores
from benchguard.taskaudit.exploits.library import PROGRAM, Exploit

# Never light: the baseline, and the exploit whose point is the sandbox.
_HARNESS_ONLY = frozenset({"noop", "read-task"})
LIGHT_PATH = "/usr/local/bin:/usr/bin:/bin"
_CHUNK = 1 << 16


@dataclass(frozen=True)
class LightOutcome:
    credit: float
    accepted: tuple[str, ...]
    acted: bool


@dataclass(frozen=True)
class Acted:
    """A workspace an exploit left (under ``root``, removed by :func:`discard`)."""

    root: Path
    workspace: Path
    home: Path
    # SHA-256 over the workspace tree (names, types, modes, bytes, link targets).
    digest: str
    # Each file's SHA-256 by its workspace path (regular files only).
    files: dict[str, str]
    acted: bool


def light_task(task: Task) -> bool:
    """Whether ``task`` is graded from its workspace alone: file checks of the
    workspace and command checks (which run in the box, with an empty home)."""
    # expected_output and rubric are read only by a judge, and the audit runs none.
    if not task.verification:
        return False
    return all(
        isinstance(c, CommandCheck) or (isinstance(c, FileCheck) and not c.file.startswith("~"))
        for c in task.verification
    )


def light_exploit(exploit: Exploit) -> bool:
    """Whether ``exploit`` is a built-in mode that may run light."""
    return (
        exploit.program == PROGRAM
        and not exploit.reference
        and not exploit.reading
        and exploit.id not in _HARNESS_ONLY
    )


def check_sandbox() -> CheckSandbox | None:
    """The command-check sandbox the harness uses (``workflows.run``): bubblewrap
    wherever it works, dropping to the agent identity when root; None: on the host."""
    try:
        return CheckSandbox(probe_bwrap(), agent_identity(os.environ))
    except (SandboxUnavailable, IdentityError):
        return None


def grading_key(task: Task) -> str:
    """What grading reads besides the workspace: the checks, the grader outputs, and
    the grading files' bytes (from the task folder). Equal keys and equal workspaces
    grade alike."""
    digest = hashlib.sha256()
    spec = {
        "verification": [c.model_dump(mode="json") for c in task.verification],
        "grading_files": list(task.grading_files),
        "grader_outputs": list(task.grader_outputs),
    }
    digest.update(json.dumps(spec, sort_keys=True).encode("utf-8"))
    for entry in task.grading_files:
        source = task.task_dir() / entry
        digest.update(b"\0grading\0" + entry.encode("utf-8") + b"\0")
        if source.is_dir() and not source.is_symlink():
            digest.update(tree_digest(source)[0].encode("ascii"))
        elif source.is_file():
            digest.update(_file_digest(source).encode("ascii"))
        else:
            digest.update(b"absent")
    return digest.hexdigest()


def tree_digest(root: Path) -> tuple[str, dict[str, str]]:
    """SHA-256 over every entry under ``root`` in sorted order (relative name, type,
    permission bits, content or link target), and each regular file's SHA-256."""
    digest = hashlib.sha256()
    files: dict[str, str] = {}
    for rel, info in _walk(root):
        path = root / rel
        kind = stat.S_IFMT(info.st_mode)
        head = f"{rel}\0{kind:o}\0{stat.S_IMODE(info.st_mode):o}\0"
        digest.update(head.encode("utf-8", "surrogateescape"))
        if stat.S_ISREG(info.st_mode):
            files[rel] = _file_digest(path)
            digest.update(files[rel].encode("ascii"))
        elif stat.S_ISLNK(info.st_mode):
            digest.update(os.fsencode(os.readlink(path)))
        digest.update(b"\n")
    return digest.hexdigest(), files


def _walk(root: Path) -> Iterator[tuple[str, os.stat_result]]:
    with os.scandir(root) as found:
        entries = sorted(found, key=lambda e: e.name)
    for entry in entries:
        info = entry.stat(follow_symlinks=False)
        yield entry.name, info
        if stat.S_ISDIR(info.st_mode):
            for rel, inner in _walk(Path(entry.path)):
                yield f"{entry.name}/{rel}", inner


def _file_digest(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


DRIVER = PROGRAM.with_name("driver.py")


def _fresh(task: Task, scratch: Path) -> tuple[Path, Path, Path, Path]:
    root = Path(tempfile.mkdtemp(prefix="light-", dir=scratch))
    workspace, home = root / "workspace", root / "home"
    seed = task.seed_dir()
    if seed is not None:
        shutil.copytree(seed, workspace, symlinks=True)
    else:
        workspace.mkdir()
    home.mkdir()
    trajectory = root / "trajectory.jsonl"
    trajectory.touch()
    return root, workspace, home, trajectory


def _acted(root: Path, workspace: Path, home: Path, trajectory: Path) -> Acted | None:
    try:
        digest, files = tree_digest(workspace)
    except OSError:
        shutil.rmtree(root, ignore_errors=True)
        return None
    return Acted(root, workspace, home, digest, files, trajectory.stat().st_size > 0)


def act(exploit: Exploit, task: Task, agent_dir: Path, scratch: Path) -> Acted | None:
    """Run ``exploit`` (copied with ``plan.json`` into ``agent_dir``) on a fresh copy of
    ``task``'s seed, as its own process; None when it did not exit 0 in time (then it
    runs through the harness). The caller grades the result and calls :func:`discard`."""
    root, workspace, home, trajectory = _fresh(task, scratch)
    env = {"HOME": str(home), "PATH": LIGHT_PATH, "BENCHGUARD_TRAJECTORY": str(trajectory)}
    argv = [sys.executable, str(agent_dir / PROGRAM.name), *exploit.args, task.prompt]
    try:
        done = subprocess.run(
            argv,
            cwd=workspace,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=task.timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        done = None
    if done is None or done.returncode != 0:
        shutil.rmtree(root, ignore_errors=True)
        return None
    return _acted(root, workspace, home, trajectory)


def act_many(
    items: Sequence[tuple[Exploit, Task]], agent_dir: Path, scratch: Path
) -> list[Acted | None]:
    """:func:`act` for several probes in one interpreter (``exploits/driver.py`` runs
    ``exploit.main()`` for each in turn, with its own working directory, ``HOME`` and
    argv): one interpreter start instead of one per probe. ``agent_dir`` holds
    ``exploit.py``, ``driver.py`` and ``plan.json``. When the driver fails or overruns
    the longest of the tasks' timeouts, every probe of the call is None (each then
    runs through the harness)."""
    if not items:
        return []
    made = [_fresh(task, scratch) for _, task in items]
    jobs = [
        {
            "cwd": str(workspace),
            "home": str(home),
            "trajectory": str(trajectory),
            "argv": [*exploit.args, task.prompt],
        }
        for (exploit, task), (_, workspace, home, trajectory) in zip(items, made, strict=True)
    ]
    control = Path(tempfile.mkdtemp(prefix="driver-", dir=scratch))
    try:
        (control / "jobs.json").write_text(json.dumps(jobs), "utf-8")
        results_file = control / "results.json"
        argv = [
            sys.executable,
            str(agent_dir / DRIVER.name),
            str(control / "jobs.json"),
            str(results_file),
        ]
        env = {"HOME": str(made[0][2]), "PATH": LIGHT_PATH}
        try:
            done = subprocess.run(
                argv,
                cwd=made[0][1],
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                timeout=max(task.timeout for _, task in items),
                check=False,
            )
            results = json.loads(results_file.read_text("utf-8")) if done.returncode == 0 else []
        except (OSError, ValueError, subprocess.TimeoutExpired):
            results = []
    finally:
        shutil.rmtree(control, ignore_errors=True)
    if not isinstance(results, list) or len(results) != len(items):
        results = [False] * len(items)
    found: list[Acted | None] = []
    for ok, (root, workspace, home, trajectory) in zip(results, made, strict=True):
        if ok is True:
            found.append(_acted(root, workspace, home, trajectory))
        else:
            shutil.rmtree(root, ignore_errors=True)
            found.append(None)
    return found


def grade_acted(task: Task, acted: Acted, sandbox: CheckSandbox | None) -> LightOutcome:
    """Grade what the exploit left as the harness grades a run of ``task``."""
    graded = grade(task, workspace=acted.workspace, home=acted.home, sandbox=sandbox)
    entry = verification_scores(graded.report).get(VERIFICATION_CORRECTNESS)
    credit = float(entry.get("score", 0.0)) if isinstance(entry, dict) else 0.0
    accepted = tuple(
        c["name"] for c in graded.report if c.get("role") == "correctness" and c.get("passed")
    )
    return LightOutcome(credit, accepted, acted.acted)


def discard(acted: Acted) -> None:
    shutil.rmtree(acted.root, ignore_errors=True)


def run_light(
    exploit: Exploit,
    task: Task,
    agent_dir: Path,
    scratch: Path,
    sandbox: CheckSandbox | None = None,
) -> LightOutcome | None:
    """:func:`act` then :func:`grade_acted`, for one probe."""
    acted = act(exploit, task, agent_dir, scratch)
    if acted is None:
        return None
    try:
        return grade_acted(task, acted, sandbox)
    finally:
        discard(acted)
