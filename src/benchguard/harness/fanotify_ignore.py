"""Ignore marks: an inode that cannot be protected costs the fanotify observer one
event (two for a file of the run's own trees), then nothing more.

The observer marks whole filesystems, so every open of the interpreter's modules, the
C library and ``/bin/sh`` by every step of a run is one event read, ``fstat``'d,
``readlink``'d and matched (a twelve-step tool loop: about 500 events, nearly all of
the same thirty files). Once an event showed such a file is outside the protected set,
an ignore mark on its inode (``FAN_MARK_IGNORE``, for this group only) tells the kernel
to drop its later opens before they are queued.

The security property: no open of a protected file may be dropped, whatever its name.
An ignore mark belongs to the inode, not to the name the agent used, so a hard link or
a bind mount of a protected file shares it: marking an inode first met through an
innocent name would hide every later open of the protected file. An inode is
therefore marked only when nothing says it could be protected (:func:`ignorable`):

- its (device, inode) is not among the protected set's identities (every file and
  directory of the protected trees at the run's start), whatever its mtime: this
  alone covers hard links and binds of every file that existed then;
- it is a regular file with one name (``st_nlink == 1``: no hard link anywhere, so a
  protected file made after the start, matched by path only, has no second name), or a
  directory (never hard-linked);
- the kernel's path of it lies under no protected root that a read reaches;
- its filesystem holds no tree whose identities were capped (``identity_capped``:
  beyond the cap a protected file is known by path only, so a bind of it would pass
  the first three tests).

Only opens are ignored (``FAN_OPEN``, ``FAN_OPEN_EXEC``, with ``FAN_ONDIR`` for a
directory): a close after writing is still reported for every inode, so a write to a
write-only root (the interpreter) stays seen. A file's mark goes with its first write
(no ``FAN_MARK_IGNORED_SURV_MODIFY``), and the file is not marked again: were it
renamed into a protected tree later, the only content whose reads are dropped is what
was read while it was not protected.

What remains: a directory outside every protected tree renamed into one later (the
kernel keeps a directory's ignore mark through modification): its listings would be
dropped, never the opens of files made in it. Only a writer of both places can move
it, and Landlock gives no agent write access to any protected tree.
"""

from __future__ import annotations

import ctypes
import os
import stat
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from benchguard.harness.fanotify_libc import fanotify_libc


class ProtectedSet(Protocol):
    """What this module reads of harness.audit's ProtectedSet (named by its shape:
    harness.audit imports the observers, and an import back would close a cycle)."""

    @property
    def identities(self) -> Mapping[tuple[int, int], Any]: ...

    @property
    def identity_capped(self) -> tuple[str, ...]: ...

    @property
    def own_trees(self) -> tuple[str, ...]: ...

    def readable_under(self, path: str) -> bool: ...


FAN_MARK_ADD = 0x1
FAN_MARK_IGNORED_SURV_MODIFY = 0x40
FAN_MARK_IGNORE = 0x400  # Linux 6.0
FAN_OPEN = 0x20
FAN_OPEN_EXEC = 0x1000
FAN_ONDIR = 0x40000000
# Marks one observer adds at most (each costs the kernel a little memory until the
# group is closed at the run's end).
MAX_IGNORE_MARKS = 1 << 15


def ignorable(protected: ProtectedSet, info: os.stat_result, path: str, capped: set[int]) -> bool:
    """Whether an ignore mark on the inode ``info`` (reached as ``path``, the kernel's
    name for it) can never hide an open of a protected file (see the module's text;
    ``capped``: the devices holding an identity-capped tree)."""
    if (info.st_dev, info.st_ino) in protected.identities:
        return False
    if info.st_dev in capped:
        return False
    if stat.S_ISREG(info.st_mode):
        if info.st_nlink != 1:
            return False
    elif not stat.S_ISDIR(info.st_mode):
        return False
    if not path.startswith("/") or path.endswith(" (deleted)"):
        return False
    return not protected.readable_under(path)


def capped_devices(protected: ProtectedSet) -> set[int]:
    """The devices of the trees whose identities were capped (unknown: every one is
    refused by the caller treating a failed ``stat`` as capped)."""
    devices: set[int] = set()
    for path in protected.identity_capped:
        try:
            devices.add(os.stat(path).st_dev)
        except OSError:
            devices.add(-1)
    return devices


@dataclass
class IgnoreMarks:
    """The ignore marks one observer's group (``fd``) has added."""

    fd: int
    protected: ProtectedSet
    added: int = 0
    refused: int = 0
    # Why marks stopped being added (the kernel refused one): None while they work.
    problem: str | None = None
    _capped: set[int] = field(default_factory=set)
    # Inodes of the run's own trees met once, and inodes decided. A mark costs a
    # system call, paid back only by an inode that recurs: a system file (the
    # interpreter's modules, the C library, ``/bin/sh``) recurs at every step, so it is
    # marked at its first event; a file of the run's own trees (its workspace) is often
    # read once (the file-heavy agent reads 2,000), so it is marked at its second.
    _met: set[tuple[int, int]] = field(default_factory=set)
    _decided: set[tuple[int, int]] = field(default_factory=set)

    def __post_init__(self) -> None:
        self._capped = capped_devices(self.protected)
        if -1 in self._capped:
            # A capped tree that cannot be stat'ed: its device is unknown, so none is
            # safe to mark.
            self.problem = "an identity-capped tree could not be stat'ed"

    def offer(self, event_fd: int, info: os.stat_result, path: str) -> None:
        """Mark the inode of ``event_fd`` ignored when :func:`ignorable` says it may be."""
        if self.problem is not None or self.added >= MAX_IGNORE_MARKS:
            return
        key = (info.st_dev, info.st_ino)
        if key in self._decided:
            return
        if key not in self._met and self._own(path):
            if len(self._met) < MAX_IGNORE_MARKS * 4:
                self._met.add(key)
            return
        self._decided.add(key)
        if not ignorable(self.protected, info, path, self._capped):
            self.refused += 1
            return
        mask = FAN_OPEN | FAN_OPEN_EXEC
        flags = FAN_MARK_ADD | FAN_MARK_IGNORE
        if stat.S_ISDIR(info.st_mode):
            # The kernel takes a directory's ignore mark only surviving modification.
            mask |= FAN_ONDIR
            flags |= FAN_MARK_IGNORED_SURV_MODIFY
        # dirfd = the event's descriptor, no path: the mark goes on that very inode.
        if fanotify_libc().fanotify_mark(self.fd, flags, mask, event_fd, None) != 0:
            error = ctypes.get_errno()
            self.problem = f"an ignore mark was refused ({os.strerror(error)})"
            return
        self.added += 1

    def _own(self, path: str) -> bool:
        for tree in self.protected.own_trees:
            if path == tree or path.startswith(tree.rstrip("/") + "/"):
                return True
        return False
