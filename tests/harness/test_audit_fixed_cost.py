"""What the default audit does once instead of once per run must not make it miss
anything (issue 19's overhead target).

- The identities of a protected tree are walked once and reused while the tree is
  unchanged (harness.audit_identities): a file created between two runs, at any depth,
  or in a directory changed within the same clock tick, is in the next walk.
- A run's fanotify groups are closed in the background (harness.fanotify_close), after
  their queues were drained: the record is whole, and the descriptors do go.
- The run's agent starts once the observer has learned its namespace (the gate is held
  read-write and released by one line): its very first open is named by its mount,
  however slow the observer is to learn it.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from benchguard.harness import audit, audit_identities, fanotify
from benchguard.harness.audit import (
    MAX_IDENTITIES,
    AuditSettings,
    protected_set,
    tree_identities,
)
from benchguard.harness.audit_session import RunSession
from benchguard.harness.cgroup import BatchCgroups
from benchguard.harness.containment import RunContainment
from benchguard.harness.fanotify import probe_fanotify
from benchguard.harness.fanotify_close import wait_closed
from benchguard.harness.fanotify_readers import run_soon
from benchguard.harness.process import become_subreaper, run_process


def _tree(root: Path) -> Path:
    tree = root / "tasks"
    (tree / "t1" / "tests").mkdir(parents=True)
    (tree / "t1" / "task.toml").write_text("x", encoding="utf-8")
    (tree / "t1" / "tests" / "expected.txt").write_text("42", encoding="utf-8")
    return tree


def _key(path: Path) -> tuple[int, int]:
    info = os.lstat(path)
    return info.st_dev, info.st_ino


def test_a_file_created_deep_in_a_walked_tree_is_in_the_next_walk(tmp_path: Path) -> None:
    """The top directory does not change when a file is made two levels down: a walk
    reused by the top's own identity (the memo before) kept missing it."""
    tree = _tree(tmp_path)
    first, _ = tree_identities(str(tree))
    assert tree_identities(str(tree))[0] is first  # unchanged: reused
    planted = tree / "t1" / "tests" / "answer.txt"
    planted.write_text("the answer", encoding="utf-8")
    second, full = tree_identities(str(tree))
    assert full and _key(planted) in second
    renamed = tree / "t1" / "moved.txt"
    os.rename(planted, renamed)
    os.link(renamed, tree / "t1" / "tests" / "linked.txt")
    third, _ = tree_identities(str(tree))
    assert third is not second and _key(renamed) in third


def test_a_change_within_the_walks_clock_tick_is_seen_by_its_listing(
    tmp_path: Path,
) -> None:
    """A directory changed just before the walk can change again with the same ctime
    (one clock tick): it is listed again on reuse. Simulated by giving the memo the
    directory's ctime after the change."""
    tree = _tree(tmp_path)
    first, _ = tree_identities(str(tree))
    planted = tree / "t1" / "tests" / "answer.txt"
    planted.write_text("the answer", encoding="utf-8")
    key = (str(tree), MAX_IDENTITIES)
    walk = audit_identities._cache[key]
    same_tick = tuple(
        dataclasses.replace(d, ctime_ns=os.lstat(d.path).st_ctime_ns) for d in walk.directories
    )
    audit_identities._cache[key] = dataclasses.replace(walk, directories=same_tick)
    again, _ = tree_identities(str(tree))
    assert again is not first and _key(planted) in again


needs_fanotify = pytest.mark.skipif(
    probe_fanotify() is not None, reason=f"fanotify unavailable: {probe_fanotify()}"
)


def _fanotify_fds() -> int:
    count = 0
    for name in os.listdir("/proc/self/fd"):
        try:
            if os.readlink(f"/proc/self/fd/{name}") == "anon_inode:[fanotify]":
                count += 1
        except OSError:
            continue
    return count


def _run_reading_a_task_file(tmp_path: Path) -> tuple[dict[str, Any], str]:
    """An agent whose first act is to read a task file and exit, under the default
    audit; its summary and the file's path."""
    become_subreaper()
    tasks = _tree(tmp_path)
    secret = tasks / "t1" / "tests" / "expected.txt"
    scratch = tmp_path / "bg-run-gate"
    workspace = scratch / "workspace"
    private = scratch / "private"
    workspace.mkdir(parents=True)
    private.mkdir()
    for path in (tmp_path, scratch, workspace, tasks, tasks / "t1", tasks / "t1" / "tests"):
        path.chmod(0o755)
    secret.chmod(0o644)
    batch = BatchCgroups.open()
    try:
        protected = protected_set(
            tasks_dirs=[tasks], results_root=tmp_path / "results", own_scratch=scratch
        )
        session = RunSession(
            AuditSettings("fanotify"), RunContainment.start(batch, "gate"), private, protected
        )
        argv = session.command([sys.executable, "-S", "-c", f"open({str(secret)!r}).read()"])
        finished = run_process(
            argv,
            cwd=workspace,
            env={"PATH": "/usr/bin:/bin"},
            timeout_s=60,
            stdout_file=scratch / "out",
            stderr_file=scratch / "err",
        )
        session.end()
        summary = session.summary(workspace)
        session.remove()
    finally:
        if isinstance(batch, BatchCgroups):
            batch.close()
    assert finished.returncode == 0, (scratch / "err").read_text()
    assert summary is not None
    return summary, str(secret)


@needs_fanotify
def test_the_first_open_of_a_run_is_named_by_its_mount_and_the_groups_go(
    tmp_path: Path,
) -> None:
    """The held gate lets the agent start, and its first read is the run's by its mount
    (its namespace learned before; not a cgroup asked in time, nor unattributed); the
    groups' descriptors are closed after the record is made (they stay open with the
    background close removed)."""
    before = _fanotify_fds()
    summary, secret = _run_reading_a_task_file(tmp_path)
    assert summary["complete"], summary
    read = [a for a in summary["accesses"] if a["path"] == secret]
    assert read and read[0]["attributed_by"] == "mount", summary
    wait_closed()
    assert _fanotify_fds() == before


@needs_fanotify
def test_a_slow_observer_holds_the_agent_until_its_namespace_is_learned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The gate, not the observer's speed, orders the run: with learning a namespace
    made slow (0.5 s, a loaded machine's worst), an agent let go early reads its file,
    exits and takes its namespace with it before the observer can name it (the run
    then reads incomplete, or the read unattributed). Held until learned, its read is
    still the run's by its mount. (Without the slow-down the observer usually learns
    the namespace within the agent's own start-up, so an early release went unseen.)"""
    real = fanotify.hold_namespace

    def slow(pid: int) -> tuple[int, str, set[int]] | None:
        time.sleep(0.5)
        return real(pid)

    monkeypatch.setattr(fanotify, "hold_namespace", slow)
    summary, secret = _run_reading_a_task_file(tmp_path)
    assert summary["complete"], summary
    read = [a for a in summary["accesses"] if a["path"] == secret]
    assert read and read[0]["attributed_by"] == "mount", summary


def test_a_runs_reader_is_kept_for_the_next_and_handing_it_work_does_not_wait() -> None:
    """A run's observer is given a reader kept from the last run (no thread start, and
    no wait for the scheduler to run a new thread, on the run's path): the work is
    handed over while the reader is still busy elsewhere, and the next work runs on the
    same thread (a thread per run fails the second assertion)."""
    release = threading.Event()
    ran: list[threading.Thread] = []

    def first() -> None:
        release.wait(10)
        ran.append(threading.current_thread())

    done = run_soon(first)
    assert not done.is_set()  # handed over; run_soon did not wait for it
    release.set()
    assert done.wait(10)
    assert run_soon(lambda: ran.append(threading.current_thread())).wait(10)
    assert len(ran) == 2 and ran[0] is ran[1] and ran[0] is not threading.current_thread()


def test_the_kernels_resolution_is_realpaths(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The protected set's paths are resolved by the kernel (an O_PATH descriptor's
    name) where they exist: the same answer as ``os.path.realpath`` for symlinks, links
    to links, ``..`` after a symlink, relative, missing and dangling paths."""
    real = tmp_path / "real" / "deep"
    real.mkdir(parents=True)
    (real / "file").write_text("x", encoding="utf-8")
    (tmp_path / "link").symlink_to(real)
    (tmp_path / "link2").symlink_to(tmp_path / "link")
    (tmp_path / "dangling").symlink_to(tmp_path / "nowhere")
    (tmp_path / "rel").symlink_to("real/deep")
    monkeypatch.chdir(tmp_path)
    for spelled in (
        tmp_path / "link",
        tmp_path / "link2" / "file",
        tmp_path / "link" / ".." / "deep",
        tmp_path / "rel" / "file",
        tmp_path / "dangling",
        tmp_path / "missing" / "below",
        "link2",
        "rel/../deep/file",
        "/",
    ):
        assert audit._resolved(spelled) == os.path.realpath(spelled), spelled
