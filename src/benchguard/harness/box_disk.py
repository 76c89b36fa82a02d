"""The disk budget inside the grading box: a check's writes bounded like the run's.

Each command check runs the deliverable, as the thing under test, in its own corner of
the box (``grading.CheckRun``: a copy of the workspace, a home, a reports directory)
under the host's temp directory. Unbounded, a deliverable writes there as much as it
likes for as long as the check's timeout, beyond the run's ``--disk-budget``, and the
host's temp filesystem fills for every other run and harness (red team 27's box-disk:
256 MiB under ``--disk-budget 16M``). So each corner gets the run's budget on top of
the copy it starts with, enforced like the run's scratch (``harness.disk_budget``):

- as root, the corner is a tmpfs of that size: the kernel answers ENOSPC at the
  budget, and the check goes on with whatever the deliverable makes of that;
- otherwise (or where the mount fails) a watchdog measures the corner while the check
  runs, and a check over budget is stopped and fails, saying so. A walk between two
  looks can overshoot by what the deliverable writes in one interval; the mount cannot.

The check's verdict never depends on the watchdog when the tmpfs is mounted, so a
result is the same on a fast and a slow machine. Not covered: what the check's
processes write outside their corner (the sandbox allows only the corner; an
unsandboxed check can write wherever the harness's uid can, as it always could).
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

from benchguard.harness.disk_budget import (
    KIB,
    MIB,
    WATCH_INTERVAL_S,
    RunDisk,
    size_text,
)

# Room for the corner's own directories and the reports beside the copy and the budget.
SLACK = MIB


class OverBudget(Exception):
    """A check's corner passed its budget (watchdog only); the message says by how much."""


def open_corner(root: Path, pristine_usage: int | None, budget: int) -> RunDisk:
    """The budget of one check's corner at ``root`` (an empty directory): the size of
    the copy of the pristine tree it will hold (``pristine_usage``, measured once when
    the box was built: ``grading.Box.pristine_usage``) plus ``budget``, as a tmpfs where
    the harness can mount one."""
    # A copy too large to measure is at most a budget (the run's scratch held it).
    start = budget if pristine_usage is None else pristine_usage
    return RunDisk.make(root, start + budget + SLACK)


def wait(process: subprocess.Popen[bytes], timeout: float, corner: RunDisk | None) -> int:
    """``process``'s exit code; :class:`subprocess.TimeoutExpired` past ``timeout``;
    :class:`OverBudget` when the watchdog finds ``corner`` over its size (never when
    the corner is a tmpfs: the kernel bounds it). The caller kills the process group."""
    if corner is None or corner.mounted:
        return process.wait(timeout=timeout)
    deadline = time.monotonic() + timeout
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            raise subprocess.TimeoutExpired(process.args, timeout)
        try:
            return process.wait(timeout=min(WATCH_INTERVAL_S, left))
        except subprocess.TimeoutExpired:
            pass
        used = corner.usage()
        if used is None or used >= corner.budget:
            held = "more entries than can be measured" if used is None else size_text(used)
            raise OverBudget(
                f"the deliverable's writes in the grading box passed the disk budget "
                f"(the check's copy holds {held}, allowed {size_text(corner.budget)}): stopped"
            )


def full_note(corner: RunDisk | None) -> str | None:
    """Why a check may have failed, when its mounted corner is full now (less than a
    page left: the check met the kernel's ENOSPC); None otherwise. Only said, never a
    verdict of its own."""
    if corner is None or not corner.mounted:
        return None
    used = corner.usage()
    if used is None or used < corner.budget - 4 * KIB:
        return None
    return (
        f"its corner of the grading box was full ({size_text(corner.budget)}: the copy "
        "of the workspace and the run's disk budget)"
    )
