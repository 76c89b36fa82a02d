"""The metadata group names a changed file by a path the kernel confirms is that inode.

Root only (fanotify). Found in CI: an honest Claude Code run under bwrap was flagged
``outside-metadata`` on ``/``. The event's file handle, opened once the file's name had
left the dentry cache (a loaded machine), was a disconnected dentry, whose path the
kernel spells ``/``. Dropping the dentry cache between the change and the read makes
that happen on demand.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from benchguard.harness.fanotify_attrib import AttribWatch

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="fanotify needs root")


def _drop_dentries() -> None:
    # 2: reclaimable slab objects (dentries and inodes); nothing is written or lost.
    os.sync()
    Path("/proc/sys/vm/drop_caches").write_text("2\n", "ascii")


def _changed_paths(watch: AttribWatch, pid: int) -> list[str | None]:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        found = [watch.path(info) for who, info in watch.events() if who == pid]
        if found:
            return found
        time.sleep(0.02)
    raise AssertionError("no metadata event arrived")


@pytest.mark.parametrize("kind", ["file", "directory"])
def test_a_change_read_after_its_name_left_the_cache_names_the_file(
    tmp_path: Path, kind: str
) -> None:
    target = tmp_path / "deep" / "er" / "own-file"
    if kind == "file":
        target.parent.mkdir(parents=True)
        target.write_text("mine\n", "utf-8")
    else:
        target.mkdir(parents=True)
    watch = AttribWatch.open([str(tmp_path)])
    try:
        os.chmod(target, 0o700)
        _drop_dentries()
        paths = _changed_paths(watch, os.getpid())
    finally:
        watch.close()
    assert paths and all(path == str(target) for path in paths), paths


def test_a_change_whose_file_is_gone_is_unnamed(tmp_path: Path) -> None:
    target = tmp_path / "gone"
    target.write_text("x\n", "utf-8")
    watch = AttribWatch.open([str(tmp_path)])
    try:
        os.chmod(target, 0o600)
        target.unlink()
        paths = _changed_paths(watch, os.getpid())
    finally:
        watch.close()
    # The unlink's own link-count event names the file too: nothing names a live "/".
    assert all(path is None for path in paths), paths
