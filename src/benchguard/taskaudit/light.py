"""Light runs: a built-in exploit on a task graded by file checks alone, without the
agent launch.

A task whose every check is a file check of the workspace (no command check, no
judged check, no ``~/`` file) is graded from the files the run leaves and nothing
else. For such a task the audit runs a built-in exploit (``exploits/exploit.py``, the
audit's own program, never an agent's) as a plain subprocess in a fresh copy of the
task's workspace seed, with ``plan.json`` beside it, exactly as the harness would
start it (same argv, working directory and ``HOME``), then grades the workspace with
the harness's own grading (``harness.verification.grade``: the same grading box,
grading files and grader outputs) and scores the report with
``scoring.verification.verification_scores``. What it skips is what a file check
cannot see: the launcher, Landlock, the sandbox, the fresh home, the transcript
channel, tampering digests and the batch's records. Not used for the no-op (the
baseline runs through the harness), the reading exploit (it tests the sandbox), the
reference solution (any program) or operator exploits. An exploit that does not exit
0 within the task's timeout is not judged here (None): the audit runs it through the
harness instead.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from benchguard.harness.tasks import FileCheck, Task
from benchguard.harness.verification import grade
from benchguard.scoring.keys import VERIFICATION_CORRECTNESS
from benchguard.scoring.verification import verification_scores
from benchguard.taskaudit.exploits.library import PROGRAM, Exploit

# Never light: the baseline, and the exploit whose point is the sandbox.
_HARNESS_ONLY = frozenset({"noop", "read-task"})
LIGHT_PATH = "/usr/local/bin:/usr/bin:/bin"


@dataclass(frozen=True)
class LightOutcome:
    credit: float
    accepted: tuple[str, ...]
    acted: bool


def light_task(task: Task) -> bool:
    """Whether ``task`` is graded by workspace file checks alone."""
    if task.expected_output is not None or task.rubric is not None or not task.verification:
        return False
    return all(isinstance(c, FileCheck) and not c.file.startswith("~") for c in task.verification)


def light_exploit(exploit: Exploit) -> bool:
    """Whether ``exploit`` is a built-in mode that may run light."""
    return (
        exploit.program == PROGRAM
        and not exploit.reference
        and not exploit.reading
        and exploit.id not in _HARNESS_ONLY
    )


def run_light(exploit: Exploit, task: Task, agent_dir: Path, scratch: Path) -> LightOutcome | None:
    """Run ``exploit`` (copied with ``plan.json`` into ``agent_dir``) on ``task``; None
    when it did not exit 0 in time (then it runs through the harness)."""
    root = Path(tempfile.mkdtemp(prefix="light-", dir=scratch))
    try:
        workspace, home = root / "workspace", root / "home"
        seed = task.seed_dir()
        if seed is not None:
            shutil.copytree(seed, workspace, symlinks=True)
        else:
            workspace.mkdir()
        home.mkdir()
        trajectory = root / "trajectory.jsonl"
        trajectory.touch()
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
            return None
        if done.returncode != 0:
            return None
        graded = grade(task, workspace=workspace, home=home)
        entry = verification_scores(graded.report).get(VERIFICATION_CORRECTNESS)
        credit = float(entry.get("score", 0.0)) if isinstance(entry, dict) else 0.0
        accepted = tuple(
            c["name"] for c in graded.report if c.get("role") == "correctness" and c.get("passed")
        )
        return LightOutcome(credit, accepted, trajectory.stat().st_size > 0)
    finally:
        shutil.rmtree(root, ignore_errors=True)
