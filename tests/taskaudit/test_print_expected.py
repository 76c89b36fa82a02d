"""audit-tasks finds a task whose hidden tests run the deliverable beside expected files.

Red team 6 (subread): the hidden test ran ``python total.py numbers.txt`` as a
subprocess (no import: no ``in-process-grading`` lint) and compared its output with
``tests/expected.txt``; the deliverable printed that file instead of summing, and
``audit-tasks`` called the task sound. The ``print-expected`` exploit writes such a
deliverable. Checked: without the exploit (``--exploit noop`` alone) the task is sound.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchguard.cli import app

TEST = """\
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent


def test_total():
    done = subprocess.run(
        [sys.executable, "total.py", "numbers.txt"], capture_output=True, text=True
    )
    assert done.stdout.strip() == (HERE / "expected.txt").read_text().strip()
"""


def _task(root: Path) -> Path:
    folder = root / "tasks" / "sub-total"
    (folder / "tests").mkdir(parents=True)
    (folder / "workspace").mkdir()
    (folder / "workspace" / "numbers.txt").write_text("4700\n11\n", "utf-8")
    (folder / "tests" / "test_total.py").write_text(TEST, "utf-8")
    (folder / "tests" / "expected.txt").write_text("4711\n", "utf-8")
    body = {
        "name": "sub-total",
        "prompt": "Write total.py, which prints the sum of the integers in the file it is given.",
        "timeout": 60,
        "grading_files": ["tests"],
        "verification": [
            {
                "name": "tests-pass",
                "role": "correctness",
                "command": ["python3", "-m", "pytest", "-q", "tests"],
            }
        ],
    }
    (folder / "task.yaml").write_text(json.dumps(body), "utf-8")
    return root / "tasks"


def _audit(tasks: Path, home: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(
        app, ["audit-tasks", str(tasks), "--home", str(home), "--json", *args]
    )
    try:
        document = json.loads(result.stdout)
    except json.JSONDecodeError:
        document = {}
    return result.exit_code, document, result.output


@pytest.mark.slow
def test_a_deliverable_printing_the_expected_file_is_found(tmp_path: Path) -> None:
    tasks = _task(tmp_path)
    code, document, output = _audit(
        tasks, tmp_path / "home", "--exploit", "noop", "--exploit", "print-expected"
    )
    assert code == 1, output
    [task] = document["tasks"]
    assert task["hackable"] is True and task["hacks"] == ["print-expected"], task
