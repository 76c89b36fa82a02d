"""The fanotify audit names a run by the mount its event came through; the kernel
reuses a freed mount id at once, so the audit holds every namespace it learned.

Asked of the real kernel (root: new mount namespaces): a namespace whose last process
exited gives its mount ids to the next namespace made, unless it is held open."""

from __future__ import annotations

import os
import subprocess
import time

import pytest

from benchguard.harness.fanotify import hold_namespace

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="new mount namespaces need root")

SHOW_IDS = "cut -d' ' -f1 /proc/self/mountinfo"


def _namespace_ids() -> set[int]:
    """The mount ids of a namespace made and left now (its process exits)."""
    done = subprocess.run(
        ["unshare", "--mount", "sh", "-c", SHOW_IDS],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return {int(x) for x in done.stdout.split()}


def _held_and_released() -> tuple[set[int], int]:
    """A namespace's ids, read through hold_namespace, and the held descriptor; its one
    process then exits."""
    child = subprocess.Popen(
        ["unshare", "--mount", "sh", "-c", "echo ready; read line"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdin is not None
    assert child.stdout.readline().strip() == "ready"
    learned = hold_namespace(child.pid)
    child.stdin.write("\n")
    child.stdin.close()
    child.wait(timeout=30)
    assert learned is not None
    fd, name, ids = learned
    assert name.startswith("mnt:[") and ids
    return ids, fd


def _reused(ids: set[int], tries: int) -> set[int]:
    found: set[int] = set()
    for _ in range(tries):
        time.sleep(0.2)  # the kernel frees a dead namespace's mounts asynchronously
        found |= ids & _namespace_ids()
        if found:
            break
    return found


def test_a_held_namespace_keeps_its_mount_ids_from_the_next_namespace() -> None:
    """Guards against an honest run flagged for a neighbour's file (its namespace took
    the ids the audit had learned for this run) and against a run's own access credited
    to a finished run whose ids it took."""
    ids, fd = _held_and_released()
    try:
        assert _reused(ids, 3) == set(), "a held namespace's mount id went to another mount"
    finally:
        os.close(fd)
    # The control: released, the same ids are handed out again (what the hold prevents).
    assert _reused(ids, 10), "the kernel did not reuse the ids: this test shows nothing here"


def test_a_process_that_left_the_namespace_is_not_learned() -> None:
    """Guards against ids read from a namespace other than the one held (the process
    exited, or unshared, between the two reads): nothing is learned then."""
    child = subprocess.Popen(["sleep", "0"])
    child.wait(timeout=30)
    assert hold_namespace(child.pid) is None
