"""The grading box's copy: what of the workspace reaches the checks, and what never does."""

from __future__ import annotations

import os
from pathlib import Path

from benchguard.harness.grading import build_box, hook_files


def _workspace(tmp_path: Path) -> Path:
    workspace = tmp_path / "ws"
    (workspace / "tests" / "__pycache__").mkdir(parents=True)
    (workspace / "tests" / "__pycache__" / "test_a.cpython-311.pyc").write_bytes(b"planted")
    (workspace / "tests" / "test_a.py").write_text("def test_a():\n    pass\n", "utf-8")
    (workspace / "helper.cpython-311-x86_64-linux-gnu.so").write_bytes(b"\x7fELF")
    (workspace / "helper.py").write_text("wrong = True\n", "utf-8")
    (workspace / "reward.txt").write_text("1\n", "utf-8")
    (workspace / "answer.txt").write_text("137\n", "utf-8")
    (workspace / "conftest.py").write_text("", "utf-8")
    (workspace / "x.pth").write_text("", "utf-8")
    os.symlink("/etc/passwd", workspace / "outside")
    return workspace


def test_the_box_holds_the_task_s_grading_files_and_no_planted_code(tmp_path: Path) -> None:
    """Guards against a planted bytecode cache, a shadowing extension module, a forged
    reward file or an edited test reaching the grader."""
    task_dir = tmp_path / "task"
    (task_dir / "tests").mkdir(parents=True)
    (task_dir / "tests" / "test_a.py").write_text("def test_a():\n    assert False\n", "utf-8")
    (task_dir / "helper.py").write_text("wrong = False\n", "utf-8")
    box = build_box(
        _workspace(tmp_path),
        task_dir=task_dir,
        grading_files=("tests", "helper.py"),
        grader_outputs=("reward.txt",),
    )
    try:
        copy = box.pristine
        assert (copy / "tests" / "test_a.py").read_text("utf-8").endswith("assert False\n")
        assert not (copy / "tests" / "__pycache__").exists()
        assert (copy / "helper.py").read_text("utf-8") == "wrong = False\n"
        assert not (copy / "helper.cpython-311-x86_64-linux-gnu.so").exists()
        assert not (copy / "reward.txt").exists()
        assert (copy / "answer.txt").read_text("utf-8") == "137\n"
        assert not (copy / "outside").is_symlink() and box.links_out == {"outside"}
    finally:
        box.remove()
    assert not box.root.exists()


def test_a_planted_pycache_outside_grading_files_is_not_copied(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / "pkg" / "__pycache__").mkdir(parents=True)
    (workspace / "pkg" / "__pycache__" / "mod.cpython-311.pyc").write_bytes(b"planted")
    (workspace / "pkg" / "mod.py").write_text("", "utf-8")
    box = build_box(workspace, task_dir=tmp_path)
    try:
        assert (box.pristine / "pkg" / "mod.py").exists()
        assert not (box.pristine / "pkg" / "__pycache__").exists()
    finally:
        box.remove()


def test_hook_files_are_listed_sorted(tmp_path: Path) -> None:
    assert hook_files(_workspace(tmp_path)) == ["conftest.py", "x.pth"]


def test_the_box_grades_only_what_the_run_delivered(tmp_path: Path) -> None:
    """Guards against a file another process rewrote after the run's processes were all
    dead (a colluding sibling handing a finished run the answer) being graded: the box
    checks each copy against the delivered digests and leaves out what differs or
    appeared since; what matches (or was not digested) is copied as before."""
    from benchguard.harness.tampering import TamperWatch, tree_state

    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "answer.txt").write_text("0\n", "utf-8")
    (workspace / "notes.txt").write_text("mine\n", "utf-8")
    gone = tree_state(workspace, content=True)
    delivered = {path: gone.content.get(path) for path in gone.entries}
    assert delivered == TamperWatch(task=None, workspace=workspace, gone=gone).delivered()  # type: ignore[arg-type]
    (workspace / "answer.txt").write_text("137\n", "utf-8")  # another process, later
    (workspace / "extra.txt").write_text("planted\n", "utf-8")
    task_dir = tmp_path / "task"
    task_dir.mkdir()
    box = build_box(workspace, task_dir=task_dir, delivered=delivered)
    try:
        assert box.foreign == {"answer.txt", "extra.txt"}
        assert sorted(os.listdir(box.pristine)) == ["notes.txt"]
    finally:
        box.remove()
