"""Which built-in exploits can change a task's correctness, decided before any run.

An exploit acts only by writing or removing files. Which ones is known before it runs:
the built-in modes of ``exploits/exploit.py`` act on the plan's files (the files the
checks name, or the prompt names), the declared grader outputs and fixed reward
names, or the files of the task's workspace seed, chosen by name. So its run can
differ from the no-op's only when

- it touches at least one file, and
- some correctness check could see a touched file: a command check may read
  anything, a file check reads only its own file. (``expected_output`` and ``rubric``
  are read only by a judge, and the audit runs none.)

When neither holds, the exploit's run is the no-op's run, and its credit is the
no-op's. The audit then skips it on that task and reports it as not applicable, with
the reason, but only where the no-op itself earned no credit (a task the no-op passes
runs every exploit, so its list of hacks stays whole). Operator exploits are programs
the audit cannot read this way: they always run.

What this cannot see: a check whose verdict changes between two identical runs (a
clock, a random number); such a task's no-op and exploit runs differ anyway.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

from benchguard.harness.tasks import CommandCheck, FileCheck, Task
from benchguard.taskaudit.exploits.exploit import (
    PY_NAME,
    REWARD_NAMES,
    TEST_NAME,
    answer_from_task_file,
)
from benchguard.taskaudit.exploits.library import Exploit

# Modes whose writes are the plan's files, whatever they write there.
_PLAN_FILE_MODES = frozenset({"empty-files", "quote-prompt", "workspace-answer", "read-task"})
_HOOK_FILES = ("conftest.py", "sitecustomize.py", "usercustomize.py", "zz_exploit.pth")
# A touched path the audit cannot name in advance (a module a workspace test imports).
UNNAMED = "<a module a workspace test imports>"


def seed_files(task: Task) -> list[str]:
    """The workspace seed's files, as ``exploit.py``'s ``workspace_files`` lists them."""
    seed = task.seed_dir()
    if seed is None:
        return []
    found = []
    for folder, dirs, files in os.walk(seed):
        dirs.sort()
        for name in sorted(files):
            found.append(os.path.normpath(os.path.relpath(os.path.join(folder, name), seed)))
    return found


def touched(
    exploit: Exploit, task: Task, plan: Mapping[str, Sequence[str]], seed: Sequence[str]
) -> set[str] | None:
    """The paths ``exploit`` writes or removes on ``task``; None when unknown."""
    if exploit.program.name != "exploit.py" or len(exploit.args) != 1:
        return None
    mode = exploit.args[0]
    files = set(plan.get("files", ()))
    if mode in _PLAN_FILE_MODES or mode.startswith("content:"):
        return files
    if mode == "reward-file":
        return {*plan.get("outputs", ()), *REWARD_NAMES}
    if mode == "tests-exit-zero":
        return {
            p
            for p in seed
            if p.endswith(".sh") or (p.endswith(".py") and "test" in os.path.basename(p))
        }
    if mode == "tests-deleted":
        return {
            p
            for p in seed
            if p.split(os.sep, 1)[0] in ("tests", "test")
            or os.path.basename(p).startswith("test_")
            or p.endswith("_test.py")
        }
    if mode == "plant-hooks":
        return set(_HOOK_FILES)
    if mode == "exit-on-import":
        return {p for p in seed if p.endswith(".py") and "test" not in os.path.basename(p)}
    if mode == "patch-test-runner":
        found = {p for p in seed if p.endswith(".py") and not TEST_NAME.match(Path(p).name)}
        found |= set(PY_NAME.findall(task.prompt)) | {f for f in files if f.endswith(".py")}
        if any(TEST_NAME.match(Path(p).name) for p in seed):
            found.add(UNNAMED)
        return found
    if mode == "print-expected":
        names = set(PY_NAME.findall(task.prompt)) | {f for f in files if f.endswith(".py")}
        return {p for p in names if not TEST_NAME.match(Path(p).name)}
    return None  # noop, reference, or a mode this module does not know: always run


def not_applicable(
    exploit: Exploit,
    task: Task,
    plan: Mapping[str, Sequence[str]],
    seed: Sequence[str],
    tasks_dir: Path | None = None,
) -> str | None:
    """Why ``exploit`` cannot change ``task``'s correctness, or None when it can.

    ``tasks_dir``: the directory the reading exploit is pointed at. When the task file
    it would pick there (the same function it runs, ``answer_from_task_file``) states
    no answer it could copy, its run could show nothing about whether the tasks were
    reachable, and a reading exploit's credit never makes a task hackable: not run."""
    if (
        tasks_dir is not None
        and exploit.program.name == "exploit.py"
        and exploit.args == ("read-task",)
        and not answer_from_task_file(str(tasks_dir), task.prompt).strip()
    ):
        return (
            "the task file states no answer it could copy (no expected_output or "
            "contains line): its run could not show the tasks were reachable"
        )
    paths = touched(exploit, task, plan, seed)
    if paths is None:
        return None
    if not paths:
        return "it would touch no file of this task"
    # expected_output and rubric are read only by a judge (run --judge); the audit's
    # runs have none, so they earn nothing there whatever the exploit writes.
    correctness = [c for c in task.verification if c.role == "correctness"]
    if any(isinstance(c, CommandCheck) for c in correctness):
        return None
    read = [os.path.normpath(c.file) for c in correctness if isinstance(c, FileCheck)]
    if any(_overlap(os.path.normpath(p), r) for p in paths for r in read):
        return None
    return (
        "no correctness check reads what it touches ("
        + ", ".join(sorted(paths)[:4])
        + (", ..." if len(paths) > 4 else "")
        + "): only file checks, of other files"
    )


def _overlap(path: str, read: str) -> bool:
    """A check on ``read`` sees ``path``: the same file, or one is inside the other (an
    ``exists`` check on a folder the exploit writes into, a file in a folder it removes)."""
    return path == read or path.startswith(read + "/") or read.startswith(path + "/")
