"""A command check that would run a workspace file as code is refused when the task loads.

Checks are the grader; a check whose argv executes a file the agent could have written
(a script given to an interpreter, a test file given to a runner, ``./run.sh``) lets
the agent decide its own verdict. Reading a workspace file as data stays allowed.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchguard.harness.check_programs import (
    GradingPaths,
    WorkspaceCode,
    check_command,
    pytest_run,
)
from benchguard.harness.tasks import load_tasks

GRADING = GradingPaths(("tests", "grade.py", "graders/run.sh"))

REFUSED = [
    ["sh", "run.sh"],
    ["bash", "-e", "run.sh"],
    ["./run.sh"],
    ["bin/tool", "--check"],
    ["python3", "check.py"],
    ["python3", "-B", "-W", "ignore", "check.py"],
    ["python3", "-m", "pytest", "mytests/test_x.py"],
    ["python3", "-m", "unittest", "discover"],
    ["python3", "-m", "cProfile", "solution.py"],
    ["pytest", "-p", "myplugin", "tests"],
    ["pytest", "--rootdir", ".", "tests"],
    ["pytest", "-q"],
    ["node", "index.js"],
    ["node", "-r", "./hook.js", "-e", "1"],
    ["node", "--test"],
    ["perl", "check.pl"],
    ["perl", "-I.", "-e", "use Check;"],
    ["ruby", "check.rb"],
    ["sh", "-c", "python3 check.py"],
    ["sh", "-c", "grep -q x a.txt && ./run.sh"],
    ["sh", "-c", "cd graders && ./run.sh"],
    ["sh", "-c", "echo $(./run.sh)"],
    ["sh", "-c", "eval ./run.sh"],
    ["sh", "-c", ". ./env.sh"],
    ["bash", "--rcfile", "rc.sh", "-c", "true"],
    ["env", "-i", "FOO=1", "python3", "check.py"],
    ["env", "-S", "python3 check.py"],
    ["timeout", "-s", "KILL", "5", "python3", "check.py"],
    ["nice", "-n", "5", "sh", "run.sh"],
    ["make"],
    ["make", "-f", "Makefile", "check"],
    ["awk", "-f", "prog.awk", "answer.txt"],
    ["find", ".", "-name", "*.sh", "-exec", "sh", "{}", ";"],
    ["git", "diff", "--exit-code"],
    ["npm", "test"],
    ["sh", "tests/../run.sh"],
    ["python3", "--frobnicate", "x.py"],
]

ALLOWED = [
    ["grep", "-qx", "58", "numbers.txt"],
    ["python3", "-m", "json.tool", "answer.json"],
    ["python3", "-I", "-c", "import json,sys; json.load(open('answer.json'))"],
    ["sh", "-c", "grep -q 137 answer.txt && test -s report.md"],
    ["sh", "-c", "wc -l < answer.txt > /dev/null"],
    ["python3", "grade.py", "answer.txt"],
    ["sh", "graders/run.sh"],
    ["./graders/run.sh"],
    ["pytest", "-q", "tests"],
    ["python3", "-m", "pytest", "-q", "--tb", "short", "tests/test_a.py::test_x"],
    ["/usr/bin/python3", "-c", "print(1)"],
    ["node", "-e", "require('fs').readFileSync('answer.json')"],
    ["perl", "-ne", "print if /137/", "answer.txt"],
    ["env", "LC_ALL=C", "grep", "-q", "x", "answer.txt"],
    ["timeout", "5", "python3", "tests/check.py"],
    ["awk", "{s+=$1} END {exit s!=137}", "numbers.txt"],
    ["find", ".", "-name", "answer.txt"],
]


@pytest.mark.parametrize("command", REFUSED, ids=lambda c: " ".join(c))
def test_a_check_that_runs_a_workspace_file_is_refused(command: list[str]) -> None:
    """Guards against a task whose grader runs code the agent could have written."""
    with pytest.raises(WorkspaceCode):
        check_command(command, GRADING)


@pytest.mark.parametrize("command", ALLOWED, ids=lambda c: " ".join(c))
def test_reading_data_and_running_grading_files_is_allowed(command: list[str]) -> None:
    """Guards against the rule refusing honest checks (grep, json.tool, graders)."""
    check_command(command, GRADING)


def test_pytest_runs_are_recognised_with_their_operands() -> None:
    run = pytest_run(("python3", "-m", "pytest", "-q", "--tb", "short", "tests"))
    assert run is not None and run.options == ("-q", "--tb", "short")
    assert run.operands == ("tests",)
    assert pytest_run(("grep", "pytest")) is None


def _task(tmp_path: Path, body: dict[str, object], files: tuple[str, ...] = ()) -> Path:
    folder = tmp_path / "tasks" / "t"
    folder.mkdir(parents=True)
    for name in files:
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / name).write_text("x\n", "utf-8")
    (folder / "task.yaml").write_text(json.dumps({"name": "t", "prompt": "p", **body}), "utf-8")
    return folder / "task.yaml"


def test_the_load_error_names_the_task_file_the_check_and_the_field(tmp_path: Path) -> None:
    """Guards against a refused check being skipped silently or reported vaguely."""
    path = _task(
        tmp_path,
        {
            "verification": [
                {"name": "ok", "role": "correctness", "file": "a.txt", "exists": True},
                {"name": "runs-it", "role": "correctness", "command": ["sh", "check.sh"]},
            ]
        },
    )
    loaded = load_tasks(tmp_path / "tasks")
    assert loaded.tasks == ()
    [message] = loaded.errors
    assert str(path) in message
    assert "check 'runs-it'" in message and "verification.1.command" in message
    assert "'check.sh'" in message and "grading_files" in message


def test_a_declared_grading_script_may_run(tmp_path: Path) -> None:
    _task(
        tmp_path,
        {
            "grading_files": ["check.sh"],
            "verification": [{"name": "c", "role": "correctness", "command": ["sh", "check.sh"]}],
        },
        files=("check.sh",),
    )
    loaded = load_tasks(tmp_path / "tasks")
    assert loaded.errors == () and loaded.tasks[0].grading_files == ("check.sh",)


@pytest.mark.parametrize(
    ("body", "files", "expected"),
    [
        ({"grading_files": ["missing.py"]}, (), "grading_files.0: 'missing.py' does not exist"),
        ({"grading_files": ["../other"]}, (), "without '..'"),
        ({"grading_files": ["/etc/passwd"]}, (), "relative to the task folder"),
        ({"grader_outputs": ["../reward.txt"]}, (), "without '..'"),
        ({"grading_files": ["task.yaml"]}, (), "the task file itself"),
        (
            {
                "grading_files": ["tests"],
                "verification": [
                    {
                        "name": "p",
                        "role": "correctness",
                        "command": ["pytest", "tests"],
                        "exit_code": 1,
                    }
                ],
            },
            ("tests/test_a.py",),
            "exit_code must be 0",
        ),
    ],
)
def test_bad_grading_fields_are_refused_with_the_field(
    tmp_path: Path, body: dict[str, object], files: tuple[str, ...], expected: str
) -> None:
    _task(tmp_path, body, files)
    [message] = load_tasks(tmp_path / "tasks").errors
    assert expected in message, message
