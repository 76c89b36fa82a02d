"""The static lint of audit-tasks: what makes a task hackable without any run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchguard.harness.tasks import load_task, load_tasks
from benchguard.taskaudit.lint import lint_task

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def _task(tmp_path: Path, body: dict[str, object], seed: dict[str, str] | None = None) -> Path:
    folder = tmp_path / "t"
    folder.mkdir()
    for name, text in (seed or {}).items():
        (folder / "workspace" / name).parent.mkdir(parents=True, exist_ok=True)
        (folder / "workspace" / name).write_text(text, "utf-8")
    (folder / "task.yaml").write_text(json.dumps({"name": "t", "prompt": "Do it.", **body}))
    return folder / "task.yaml"


def _ids(path: Path) -> list[tuple[str, bool]]:
    task = load_task(path, allow_workspace_code=True)
    return [(f.id, f.hackable) for f in lint_task(task)]


def _check(**fields: object) -> dict[str, object]:
    return {"name": "c", "role": "correctness", **fields}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ({}, [("no-correctness-check", True)]),
        ({"verification": [_check(file="a.txt", exists=True)]}, [("existence-only", False)]),
        (
            {"verification": [_check(file="a.txt", matches="\\d*")]},
            [("regex-accepts-empty", False)],
        ),
        (
            {"verification": [_check(file="a.txt", matches="\\d+")]},
            [("regex-accepts-any-integer", False)],
        ),
        ({"verification": [_check(file="a.txt", contains="  ")]}, [("regex-accepts-empty", False)]),
        (
            {"verification": [_check(command=["python3", "-m", "pytest", "tests"])]},
            [("runs-workspace-program", True)],
        ),
        (
            {
                "prompt": "Write 'the answer is 42' to a.txt.",
                "verification": [_check(file="a.txt", contains="the answer is 42")],
            },
            [("answer-in-prompt", False)],
        ),
        ({"verification": [_check(file="a.txt", matches="^\\s*137\\s*$")]}, []),
    ],
)
def test_each_lint_fires_on_its_own_shape_only(
    tmp_path: Path, body: dict[str, object], expected: list[tuple[str, bool]]
) -> None:
    """Guards against a hackable shape reading as sound, and a sound one as hackable."""
    assert _ids(_task(tmp_path, body)) == expected


def test_run_refuses_what_the_audit_reports(tmp_path: Path) -> None:
    """A check running a workspace program is bad input for `run`, a finding here."""
    path = _task(tmp_path, {"verification": [_check(command=["sh", "check.sh"])]})
    assert load_tasks(tmp_path).errors
    assert _ids(path) == [("runs-workspace-program", True)]


def test_the_example_tasks_have_no_unacknowledged_hackable_lint() -> None:
    for task in load_tasks(EXAMPLES / "tasks").tasks:
        acknowledged = {a.id for a in task.findings_acknowledged}
        assert [f.id for f in lint_task(task) if f.id not in acknowledged] == [], task.folder
