"""A per-run disk budget: how much the run's writable space may hold.

A run writes only beneath its scratch directory (workspace, the fresh home's upper
layer or copy, its tmp, its agents' state, its stdout and stderr). Without a bound, a
broken or hostile agent fills the host's disk, and then concurrent and later runs of the
batch cannot write their records: an honest run is lost. Two layers bound it:

- As root, the scratch directory is a tmpfs of its own, ``size=`` the budget (and a
  bounded number of inodes): the kernel answers ENOSPC at the budget, whatever the
  agent does, and the host's disk is never touched. Its pages are memory, charged to
  the memory cgroup of the process that wrote them (the run's own cgroup), and freed
  when the run's scratch is unmounted at its end. Overlay upper and work directories
  work on tmpfs, so the fresh home's layers live there too.
- Everywhere (and alone where the mount is not possible: an unprivileged harness, a
  kernel without tmpfs): ``RLIMIT_FSIZE`` at the budget for every agent process, set
  by the launcher just before it execs the agent and inherited by everything that
  starts (a write past it raises SIGXFSZ, or EFBIG when that is ignored), and a
  watchdog that measures the scratch (``statvfs`` of the tmpfs; otherwise a walk
  bounded in entries) while the agent runs, and stops the run when it is over budget.

A run that reached its budget is an error on its row with the numbers, never clean,
and it is not graded. What the budget does not cover: a persistent home (``--home-mode
persistent``), which lies outside the scratch (the per-file limit still holds there).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import re
import stat
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchguard.errors import BadInputError

KIB = 1 << 10
MIB = 1 << 20
GIB = 1 << 30
# Far above what the example agents and the real agent CLIs write in a run (a few MiB:
# a transcript, session files, an npm cache at most), far below a host's free disk.
DEFAULT_DISK_BUDGET = 2 * GIB
# Smaller cannot hold an agent CLI's own state; the tests use 32 MiB.
MIN_DISK_BUDGET = 4 * MIB
# The harness's own writes (records, journal, kept home writes, grading boxes) beside
# the runs' scratch: pre-flight asks for this much free space on top of the budgets.
PREFLIGHT_MARGIN = 256 * MIB
# The watchdog's walk, where the scratch is no tmpfs: past this many entries the run
# counts as over budget (every inode costs disk too, and the walk must stay cheap).
MAX_WALK_ENTRIES = 200_000
# How often the watchdog looks while the agent runs.
WATCH_INTERVAL_S = 0.2
# SIGXFSZ: the kernel's answer to a write past RLIMIT_FSIZE.
SIGXFSZ = 25

_UNITS = {
    "": 1,
    "b": 1,
    "k": KIB,
    "kib": KIB,
    "m": MIB,
    "mib": MIB,
    "g": GIB,
    "gib": GIB,
    "t": 1 << 40,
    "tib": 1 << 40,
}
_SIZE = re.compile(r"^\s*(\d+)\s*([A-Za-z]*)\s*$")


def parse_budget(text: str | int) -> int:
    """``--disk-budget`` as bytes: ``2GiB``, ``512MiB``, ``64M``, or a byte count.
    Anything else, or less than :data:`MIN_DISK_BUDGET`, is bad input naming the
    value."""
    return parse_size(text, option="--disk-budget", minimum=MIN_DISK_BUDGET, example="2GiB")


def parse_size(text: str | int, *, option: str, minimum: int, example: str) -> int:
    """A size option's value as bytes (a byte count, or with a unit: K, M, G, T, or
    KiB ... TiB, all powers of 1024); bad input naming ``option`` and the value when it
    is no size or below ``minimum``."""
    if isinstance(text, int):
        value = text
    else:
        found = _SIZE.match(text)
        unit = found.group(2).lower() if found is not None else None
        if found is None or unit not in _UNITS:
            raise BadInputError(
                f"{option} {text!r}: not a size (write it as bytes or with a unit: "
                f"KiB, MiB, GiB, TiB; for example {example})"
            )
        value = int(found.group(1)) * _UNITS[unit]
    if value < minimum:
        raise BadInputError(f"{option} {text!r}: below the smallest budget, {size_text(minimum)}")
    return value


def size_text(value: int) -> str:
    """``value`` bytes for a person: ``2 GiB``, ``32 MiB``, ``1.5 GiB``, ``700 B``."""
    for unit, scale in (("TiB", 1 << 40), ("GiB", GIB), ("MiB", MIB), ("KiB", KIB)):
        if value >= scale:
            shown = f"{value / scale:.1f}".removesuffix(".0")
            return f"{shown} {unit}"
    return f"{value} B"


# --- the size-limited scratch (root) ---------------------------------------------

_MNT_DETACH = 2
# No device nodes and no set-uid programs on what the agent writes; exec stays (agents
# run scripts they wrote).
_MS_NOSUID = 2
_MS_NODEV = 4


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def mount_budget(root: Path, budget: int) -> str | None:
    """Mount a tmpfs of ``budget`` bytes on the empty directory ``root``; None when
    mounted, else why not (the watchdog alone bounds the run then)."""
    if os.geteuid() != 0:
        return "the harness is not root: no size-limited mount"
    # One inode per 4 KiB of budget, and never fewer than an npm tree needs.
    inodes = max(budget // (4 * KIB), 65_536)
    options = f"size={budget},nr_inodes={inodes},mode=0700,uid=0,gid=0".encode()
    done = _libc().mount(
        b"benchguard-scratch",
        os.fsencode(root),
        b"tmpfs",
        ctypes.c_ulong(_MS_NOSUID | _MS_NODEV),
        options,
    )
    if done != 0:
        errno = ctypes.get_errno()
        return f"tmpfs size={budget} cannot be mounted: {os.strerror(errno)}"
    return None


def unmount(root: Path) -> str | None:
    """Detach the tmpfs on ``root`` (its pages are freed with the last user); why
    not, or None."""
    if _libc().umount2(os.fsencode(root), _MNT_DETACH) != 0:
        errno = ctypes.get_errno()
        return f"{root}: cannot unmount the run's scratch: {os.strerror(errno)}"
    return None


# --- measuring -------------------------------------------------------------------


def mounted_usage(root: Path) -> int:
    """Bytes used on the tmpfs at ``root``: one ``statvfs``, whatever the tree holds."""
    info = os.statvfs(root)
    return (info.f_blocks - info.f_bfree) * info.f_frsize


def walked_usage(root: Path, max_entries: int = MAX_WALK_ENTRIES) -> int | None:
    """Bytes the tree at ``root`` holds on disk (allocated blocks, each hard-linked
    inode once), walked with an explicit stack (no recursion, symlinks never
    followed); None past ``max_entries`` entries."""
    total = 0
    entries = 0
    seen: set[tuple[int, int]] = set()
    pending = [os.fsencode(root)]
    while pending:
        folder = pending.pop()
        try:
            listing = os.scandir(folder)
        except OSError:
            continue  # gone, or made unreadable: what it holds is still on the tmpfs
        with listing:
            for entry in listing:
                entries += 1
                if entries > max_entries:
                    return None
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                if stat.S_ISDIR(info.st_mode):
                    pending.append(entry.path)
                key = (info.st_dev, info.st_ino)
                if info.st_nlink > 1:
                    if key in seen:
                        continue
                    seen.add(key)
                total += info.st_blocks * 512
    return total


@dataclass
class RunDisk:
    """One run's budget: how it is enforced, and what the watchdog saw."""

    root: Path
    budget: int
    # None: the tmpfs is mounted; else why the watchdog alone bounds the run.
    mount_problem: str | None = None
    peak: int = 0
    # Why the run is over its budget (None: it is not, as far as measured).
    exceeded: str | None = None
    _next_look: float = field(default=0.0, init=False)

    @property
    def mounted(self) -> bool:
        return self.mount_problem is None

    @classmethod
    def make(cls, root: Path, budget: int) -> RunDisk:
        """Mount the size-limited scratch where the harness can (``root`` empty)."""
        return cls(root, budget, mount_budget(root, budget))

    def usage(self) -> int | None:
        """Bytes the scratch holds now; None when the walk passed its bound."""
        try:
            return mounted_usage(self.root) if self.mounted else walked_usage(self.root)
        except OSError:
            return 0

    def look(self) -> str | None:
        """Measure now; why the run is over its budget, or None."""
        used = self.usage()
        if used is None:
            self.exceeded = (
                f"the run's scratch holds more than {MAX_WALK_ENTRIES:,} entries "
                f"(its disk budget is {size_text(self.budget)})"
            )
            return self.exceeded
        self.peak = max(self.peak, used)
        # A full tmpfs is the kernel's ENOSPC: less than a page left counts as reached.
        if used >= self.budget - (4 * KIB if self.mounted else 0):
            self.exceeded = (
                f"the run's writable space reached {size_text(used)} of its disk budget "
                f"of {size_text(self.budget)}"
            )
        return self.exceeded

    def watch(self) -> str | None:
        """The watchdog's look, at most every :data:`WATCH_INTERVAL_S` (the first
        after one interval: a run shorter than that costs nothing here)."""
        now = time.monotonic()
        if self._next_look == 0.0:
            self._next_look = now + WATCH_INTERVAL_S
            return None
        if now < self._next_look:
            return None
        self._next_look = now + WATCH_INTERVAL_S
        return self.look()

    def release(self) -> str | None:
        """Unmount the run's tmpfs (nothing to do without one); why not, or None."""
        if not self.mounted:
            return None
        problem = unmount(self.root)
        if problem is None:
            self.mount_problem = "unmounted"
        return problem

    def facts(self) -> dict[str, Any]:
        """``record["disk_budget"]``: the budget, how it was enforced, what was seen."""
        return {
            "bytes": self.budget,
            "enforced_by": (
                ["tmpfs", "rlimit-fsize", "watchdog"]
                if self.mount_problem in (None, "unmounted")
                else ["rlimit-fsize", "watchdog"]
            ),
            "mount_unavailable": None
            if self.mount_problem in (None, "unmounted")
            else self.mount_problem,
            "peak_bytes": self.peak,
            "exceeded": self.exceeded,
        }


def xfsz_exit(returncode: int | None) -> bool:
    """Whether the agent was killed by SIGXFSZ (a file written past the per-file limit):
    directly, or as a shell reports it (128 + the signal)."""
    return returncode in (-SIGXFSZ, 128 + SIGXFSZ)


def home_share_problem(home: Path, home_bytes: int, budget: int, source: str) -> str | None:
    """Why a fresh home of ``home_bytes`` leaves a run too little of ``budget``: the
    launcher copies the home into the run's scratch where it cannot overlay it, and that
    copy counts against the budget. None when at most half the budget."""
    if home_bytes * 2 <= budget:
        return None
    return (
        f"{source} {home} holds {size_text(home_bytes)}, more than half the disk budget of "
        f"{size_text(budget)} (a run's copy of it counts against the budget); raise "
        "--disk-budget or trim the home"
    )


def free_space_problem(paths: list[Path], budget: int, jobs: int) -> str | None:
    """Why the file systems holding ``paths`` (the results, the scratch's parent)
    cannot take ``jobs`` runs at ``budget`` each plus the harness's margin; None when
    they can. Paths on one file system are counted once."""
    need = budget * max(1, jobs) + PREFLIGHT_MARGIN
    seen: set[int] = set()
    for path in paths:
        with contextlib.suppress(OSError):
            device = os.stat(path).st_dev
            if device in seen:
                continue
            seen.add(device)
            info = os.statvfs(path)
            free = info.f_bavail * info.f_frsize
            if free < need:
                return (
                    f"{path}: {size_text(free)} free, but {max(1, jobs)} parallel run(s) at "
                    f"a disk budget of {size_text(budget)} and the harness's margin of "
                    f"{size_text(PREFLIGHT_MARGIN)} need {size_text(need)} (lower "
                    "--disk-budget or -j, or free space)"
                )
    return None
