"""The (device, inode) identities of a protected tree, walked once while it is unchanged.

A batch builds a protected set per run and each names the same tasks tree and checkout;
walking them before every run was part of the audit's fixed cost per run. So a walk is
kept (process-wide: a batch's runs share the process, and so do a cluster worker's)
and reused while it is still true of the tree.

When is it still true: a file or directory created, removed, renamed or hard-linked
anywhere in the tree changes its parent directory's ``ctime`` (and ``mtime``; ``ctime``
cannot be set back by ``utimes``), so the walk remembers every directory it read with
its (device, inode, ctime) and is reused only while every one of them is unchanged
(one ``lstat`` per directory, no listing). A directory the walk read less than
:data:`VOLATILE_NS` after its last change could change again within the same clock
tick and keep its ``ctime``: such a directory is listed again on every reuse and
compared by name and inode. So a file created between two runs, at any depth, is in
the next run's identities.

What a reuse does not refresh: a file rewritten in place (its directory unchanged)
keeps its old ``mtime`` in the walk, so the identity match, which checks the ``mtime``
against inode reuse, no longer names it; it is still matched by the kernel's path for
it, as a file changed during a run always was.

Bounded: :data:`MAX_CACHED_TREES` walks are kept, cleared whole past it; a walk stops
at its ``limit`` entries (``full`` is then False).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

Identities = dict[tuple[int, int], int]
MAX_CACHED_TREES = 64
# A directory changed this recently before the walk is listed again on reuse (clock
# ticks are 1-10 ms; a second leaves room for coarse filesystem timestamps).
VOLATILE_NS = 1_000_000_000


@dataclass(frozen=True)
class _Directory:
    path: str
    device: int
    inode: int
    ctime_ns: int
    # Names and inodes as listed, kept only for a directory changed just before the walk.
    listing: frozenset[tuple[str, int]] | None


@dataclass(frozen=True)
class _Walk:
    result: tuple[Identities, bool]
    top: tuple[int, int, int]
    directories: tuple[_Directory, ...]


_cache: dict[tuple[str, int], _Walk] = {}
# What a missing tree has; never changed by anyone (callers only read identities).
_MISSING: tuple[Identities, bool] = ({}, True)


def _listing(path: str) -> frozenset[tuple[str, int]] | None:
    try:
        with os.scandir(path) as entries:
            return frozenset((entry.name, entry.inode()) for entry in entries)
    except OSError:
        return None


def _still_true(walk: _Walk, top: os.stat_result) -> bool:
    if (top.st_dev, top.st_ino, top.st_ctime_ns) != walk.top:
        return False
    for directory in walk.directories:
        try:
            info = os.lstat(directory.path)
        except OSError:
            return False
        if (info.st_dev, info.st_ino, info.st_ctime_ns) != (
            directory.device,
            directory.inode,
            directory.ctime_ns,
        ):
            return False
        if directory.listing is not None and _listing(directory.path) != directory.listing:
            return False
    return True


def tree_identities(path: str, limit: int) -> tuple[Identities, bool]:
    """(st_dev, st_ino) -> st_mtime_ns of ``path`` and everything under it (symlinks not
    followed), and whether the walk saw it all; the same objects as the last walk of
    ``path`` while the tree is unchanged (see the module's description)."""
    try:
        top = os.lstat(path)
    except OSError:
        # The same object every time (asked again on every call): a missing tree (the
        # results root before its first run) keeps the merged identities reusable.
        return _MISSING
    key = (path, limit)
    cached = _cache.get(key)
    if cached is not None and _still_true(cached, top):
        return cached.result
    started = time.time_ns()
    found: Identities = {(top.st_dev, top.st_ino): top.st_mtime_ns}
    directories: list[_Directory] = []
    full = True
    pending = [(path, top)] if os.path.isdir(path) and not os.path.islink(path) else []
    while pending and full:
        folder, info = pending.pop()
        try:
            with os.scandir(folder) as listed:
                entries = list(listed)
        except OSError:
            # Unreadable: remembered all the same (a chmod that opens it changes its ctime).
            entries = []
        recent = info.st_ctime_ns >= started - VOLATILE_NS
        listing = frozenset((entry.name, entry.inode()) for entry in entries) if recent else None
        directories.append(_Directory(folder, info.st_dev, info.st_ino, info.st_ctime_ns, listing))
        for entry in entries:
            try:
                child = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            found[(child.st_dev, child.st_ino)] = child.st_mtime_ns
            if entry.is_dir(follow_symlinks=False):
                pending.append((entry.path, child))
            if len(found) >= limit:
                full = False
                break
    result = (found, full)
    if len(_cache) >= MAX_CACHED_TREES:
        _cache.clear()
    _cache[key] = _Walk(result, (top.st_dev, top.st_ino, top.st_ctime_ns), tuple(directories))
    return result
