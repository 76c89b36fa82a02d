"""Scratch removal: whatever an agent leaves in its workspace, the harness removes it."""

from __future__ import annotations

import os
from pathlib import Path

from benchguard.harness.workspace import remove_tree


def _deep_tree(root: Path, levels: int, name: str) -> None:
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY)
    try:
        for _ in range(levels):
            os.mkdir(name, dir_fd=fd)
            child = os.open(name, os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
            os.close(fd)
            fd = child
        os.symlink("/etc/hostname", "link", dir_fd=fd)
        os.mkdir("locked", dir_fd=fd)
        os.chmod("locked", 0, dir_fd=fd)
    finally:
        os.close(fd)


def test_a_1100_level_tree_past_path_max_is_removed(tmp_path: Path) -> None:
    """Guards against a deep directory exhausting recursion (or PATH_MAX) in cleanup."""
    root = tmp_path / "scratch"
    root.mkdir()
    _deep_tree(root, 1100, "d" * 40)  # 1100 * 41 characters: well past PATH_MAX
    (root / "ro").mkdir()
    (root / "ro" / "f").write_text("x")
    (root / "ro").chmod(0o500)
    assert remove_tree(root) == []
    assert not root.exists()
    assert Path("/etc/hostname").exists(), "a symlink is removed, never followed"


def test_missing_tree_and_plain_file(tmp_path: Path) -> None:
    assert remove_tree(tmp_path / "absent") == []
    plain = tmp_path / "file"
    plain.write_text("x")
    assert remove_tree(plain) == [] and not plain.exists()
