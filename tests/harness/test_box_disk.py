"""The grading box's disk budget (harness.box_disk) sizes every check's corner from one
measure of the pristine tree, taken when the box is built (the end-to-end attack:
test_adversary_box_fill.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchguard.harness import box_disk, grading
from benchguard.harness.disk_budget import MIB, RunDisk, walked_usage
from benchguard.harness.tasks import load_task
from benchguard.harness.verification import grade

TASK = """\
name: three checks
prompt: Write answer.txt.
timeout: 60
verification:
  - name: first
    role: correctness
    command: ["test", "-f", "answer.txt"]
  - name: second
    role: correctness
    command: ["test", "-s", "answer.txt"]
  - name: third
    role: correctness
    command: ["grep", "-q", "137", "answer.txt"]
"""


def test_a_task_with_three_checks_walks_its_pristine_tree_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards against measuring the pristine tree per check (a walk of the whole
    workspace copy for each of N checks): one walk when the box is built, and every
    corner sized from it as before (the copy plus the budget plus the slack)."""
    task_file = tmp_path / "task" / "task.yaml"
    task_file.parent.mkdir()
    task_file.write_text(TASK, "utf-8")
    task = load_task(task_file)
    workspace, home = tmp_path / "ws", tmp_path / "home"
    (workspace / "data").mkdir(parents=True)
    (workspace / "answer.txt").write_text("137\n", "utf-8")
    (workspace / "data" / "blob").write_bytes(b"x" * (256 << 10))
    home.mkdir()
    walked: list[int | None] = []
    corners: list[int] = []

    def counting(root: Path, *args: int, **kwargs: int) -> int | None:
        used = walked_usage(root, *args, **kwargs)
        if Path(root).name == "pristine":
            walked.append(used)
        return used

    opened = box_disk.open_corner

    def sized(root: Path, usage: int | None, budget: int) -> RunDisk:
        corner = opened(root, usage, budget)
        corners.append(corner.budget)
        return corner

    # Wherever the pristine tree is measured (the box, or each corner as before).
    monkeypatch.setattr(grading, "walked_usage", counting, raising=False)
    monkeypatch.setattr(box_disk, "walked_usage", counting, raising=False)
    monkeypatch.setattr(grading, "open_corner", sized)
    report = grade(task, workspace=workspace, home=home, disk_budget=16 * MIB).report
    assert [check["passed"] for check in report] == [True, True, True], report
    assert len(walked) == 1, walked
    [usage] = walked
    assert usage is not None and usage >= 256 << 10
    assert corners == [usage + 16 * MIB + box_disk.SLACK] * 3, corners
