"""A sandboxed check cannot write over its grading files, whatever tool it runs.

The reader of check commands refuses the writes it models (``cp x grade.py``, sed's
``w``, ``gunzip grade.py.gz``, ...), but not what a task's own grading script does:
here a task's ``prep.sh`` copies the submission into place (``cp -r submission/. .``),
and a submission holding its own ``grade.py`` would replace the grader. In a
sandboxed box the grading files are bound read-only over the check's copy
(grading.read_only_grading), so the kernel refuses the write and the task's grader
runs. Checked: without the read-only binds (verification's ``read_only_inside``) the
cheat passes the check.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from benchguard.harness.tasks import load_tasks
from harness.helpers import grade_workspaces

TASK = """\
name: Prepared total
prompt: Write the total of numbers.txt to answer.txt; put helpers under submission/.
timeout: 30
grading_files: [grade.py, prep.sh]
verification:
  - name: total-correct
    role: correctness
    command: ["sh", "-c", "sh prep.sh; python3 grade.py"]
    exit_code: 0
"""
GRADER = "import sys\nsys.exit(open('answer.txt').read().strip() != '137')\n"


def _tasks(root: Path) -> Path:
    folder = root / "tasks" / "prepared-total"
    (folder / "workspace").mkdir(parents=True)
    (folder / "workspace" / "numbers.txt").write_text("100\n37\n", "utf-8")
    (folder / "task.yaml").write_text(TASK, "utf-8")
    (folder / "grade.py").write_text(GRADER, "utf-8")
    (folder / "prep.sh").write_text("cp -r submission/. . 2>/dev/null\n", "utf-8")
    for path in [root / "tasks", *(root / "tasks").rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    return root / "tasks"


def test_a_submission_cannot_replace_the_grader_in_a_sandboxed_box(tmp_path: Path) -> None:
    """Guards against a grading script's copy putting the agent's grade.py in place of
    the task's; an honest answer still passes, and the submission is still copied."""
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is required on CI")
    [task] = load_tasks(_tasks(tmp_path)).tasks
    cases = {
        "cheat": {"answer.txt": "12\n", "submission/grade.py": "raise SystemExit(0)\n"},
        "honest": {"answer.txt": "137\n", "submission/notes.txt": "100 + 37\n"},
    }
    outcomes = grade_workspaces(task, tmp_path, cases, "bwrap")
    [cheat] = outcomes["cheat"].report
    assert cheat["passed"] is False, cheat
    [honest] = outcomes["honest"].report
    assert honest["passed"] is True, honest


OUTPUT_TASK = """\
name: Prepared total with a verdict
prompt: Write the total of numbers.txt to answer.txt; put helpers under submission/.
timeout: 30
grading_files: [tests]
grader_outputs: [tests/verdict.txt]
verification:
  - name: total-correct
    role: correctness
    command: ["sh", "-c", "sh tests/prep.sh; sh tests/grade.sh"]
    exit_code: 0
"""
GRADE_SH = "grep -qx 137 answer.txt; code=$?; echo $code > tests/verdict.txt; exit $code\n"


def test_a_folder_holding_a_grader_output_keeps_its_grading_files_read_only(
    tmp_path: Path,
) -> None:
    """Guards against a grading folder left writable whole because the grader writes its
    verdict inside it: the other entries of tests/ are bound in its place (checked:
    with the folder skipped whole, the submission's grade.sh replaced the task's and
    the wrong answer passed)."""
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is required on CI")
    folder = tmp_path / "tasks" / "prepared-verdict"
    (folder / "workspace").mkdir(parents=True)
    (folder / "tests").mkdir()
    (folder / "task.yaml").write_text(OUTPUT_TASK, "utf-8")
    (folder / "tests" / "grade.sh").write_text(GRADE_SH, "utf-8")
    (folder / "tests" / "prep.sh").write_text("cp -r submission/. tests/ 2>/dev/null\n", "utf-8")
    for path in [tmp_path / "tasks", *(tmp_path / "tasks").rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
    [task] = load_tasks(tmp_path / "tasks").tasks
    cases = {
        "cheat": {"answer.txt": "12\n", "submission/grade.sh": "exit 0\n"},
        "honest": {"answer.txt": "137\n"},
    }
    outcomes = grade_workspaces(task, tmp_path, cases, "bwrap")
    [cheat] = outcomes["cheat"].report
    assert cheat["passed"] is False, cheat
    [honest] = outcomes["honest"].report
    assert honest["passed"] is True, honest
