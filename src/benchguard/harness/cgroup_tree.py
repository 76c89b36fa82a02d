"""Paths in a mounted cgroup hierarchy (v1 or v2), shared by the run cgroups
(harness.cgroup) and the per-run limits' cgroups (harness.cgroup_controllers)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path


def unescape_mount(text: str) -> str:
    """A path field of /proc/self/mountinfo as it is (mountinfo escapes space, tab,
    newline and backslash as octal)."""
    for code, char in (("\\040", " "), ("\\011", "\t"), ("\\012", "\n"), ("\\134", "\\")):
        text = text.replace(code, char)
    return text


def directory_of(own: str, mount: tuple[Path, str]) -> Path | None:
    """The directory of the cgroup ``own`` (a hierarchy path, as /proc/PID/cgroup shows
    it) under ``mount`` (its mount point and the hierarchy path it shows as its root);
    None when it is not there."""
    point, root = mount
    relative = own
    if root != "/" and (own == root or own.startswith(root.rstrip("/") + "/")):
        relative = own[len(root.rstrip("/")) :]
    directory = point / relative.lstrip("/")
    return directory if directory.is_dir() else None


def child_dirs(directory: Path) -> Iterator[Path]:
    """The child cgroups of ``directory``, sorted by name (none when it is gone)."""
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except OSError:
        return
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            yield Path(entry.path)
