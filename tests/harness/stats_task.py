"""The "fix the total" task the delivered-code and grading-box adversary tests share:
stats.py's buggy ``total()``, graded by the task's own pytest tests in the box."""

from __future__ import annotations

from pathlib import Path

from harness.privileges import Harness, readable_by_harness

TASK = """\
name: Fix the total
prompt: >-
  {lead}stats.py defines total(numbers), which should return the sum of a list of
  integers, but it has a bug. Fix stats.py so that the tests in tests/ pass.
timeout: 60
grading_files: [tests]
verification:
  - name: tests-pass
    role: correctness
    command: ["python3", "-m", "pytest", "-q", "tests"]
"""
BUGGY = "def total(numbers):\n    return sum(numbers[1:])\n"


def stats_tasks(harness: Harness, leads: dict[str, str], tests: str) -> Path:
    """One task folder per ``leads`` entry (folder -> the prompt's lead), each with the
    buggy stats.py and ``tests`` as its grading test file, readable by the harness."""
    tasks = harness.operator.root / ("-".join(sorted(leads)) + "-tasks")
    for folder, lead in leads.items():
        (tasks / folder / "workspace").mkdir(parents=True)
        (tasks / folder / "tests").mkdir()
        (tasks / folder / "task.yaml").write_text(TASK.format(lead=lead), "utf-8")
        (tasks / folder / "workspace" / "stats.py").write_text(BUGGY, "utf-8")
        (tasks / folder / "tests" / "test_stats.py").write_text(tests, "utf-8")
    return readable_by_harness(harness, tasks)
