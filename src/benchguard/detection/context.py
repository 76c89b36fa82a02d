"""Where an agent's commands ran, as the harness knew it: the scan context of a record.

The shell-aware reading of commands (``shell.ShellReader``) resolves ``~``, the literal
home path, relative paths and globs only when it knows the agent's home, its working
directory and which paths exist. The harness knows all three; a record it writes
carries them as ``scan_context`` so that any later scan of that record (``benchguard
score``, ``scan`` of a results.json, the serial and dask engines) reads its commands
exactly as the run's own scan did, from the record alone, with the tasks directory
long gone.

A record stores only the known paths its own globs resolved to
(:func:`paths_globs_use`): reading its commands again against that subset gives the
same paths as against the whole listing, and a record costs a few paths, not a listing
of the protected set and the home per run.

Bounded: at most :data:`MAX_KNOWN_PATHS` known paths of at most
:data:`MAX_CONTEXT_PATH_CHARS` characters each; a listing that reached the bound says
so (``known_paths_complete: false``): globs may then resolve to fewer paths than exist,
which is weaker evidence, never a wrong one.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchguard.detection.shell import ShellReader, ShellState, canonical_text
from benchguard.detection.surfaces import dict_entries
from benchguard.record.context import (  # compatibility re-exports: the shape lives in record
    MAX_CONTEXT_PATH_CHARS,
    MAX_KNOWN_DEPTH,
    MAX_KNOWN_PATHS,
    SCAN_CONTEXT_KEY,
    ScanContext,
    stored_context,
)

_GLOB_CHARS = re.compile(r"[*?\[]")


@dataclass(frozen=True)
class _RecordingReader(ShellReader):
    """A shell reader that remembers which known paths its globs resolved to."""

    matched: set[str] = field(default_factory=set, compare=False, hash=False)

    def _glob(self, pattern: str) -> list[str]:
        found = super()._glob(pattern)
        self.matched.update(found)
        return found


def paths_globs_use(
    record: Mapping[str, Any],
    *,
    home: str | None,
    workdir: str | None,
    known_paths: Sequence[str],
) -> tuple[str, ...]:
    """The known paths the record's commands resolve globs to, read as the scan reads
    them (same steps, same working directory tracking), sorted and bounded."""
    entries = dict_entries(record)
    # Most records hold no glob at all: then no path can be one a glob resolved to.
    if not known_paths or not any(_GLOB_CHARS.search(repr(e.get("args"))) for e in entries):
        return ()
    reader = _RecordingReader(home=home, known_paths=tuple(known_paths))
    state = ShellState(cwd=workdir)
    for entry in entries:
        canonical_text(reader, entry.get("args"), state)
    usable = (p for p in reader.matched if p.startswith("/") and len(p) <= MAX_CONTEXT_PATH_CHARS)
    return tuple(sorted(usable))[:MAX_KNOWN_PATHS]


def list_known_paths(
    roots: Sequence[Path],
    *,
    limit: int = MAX_KNOWN_PATHS,
    max_depth: int = MAX_KNOWN_DEPTH,
    seen_as: Mapping[str, str] | None = None,
) -> tuple[tuple[str, ...], bool]:
    """Paths under ``roots`` (the roots included), sorted, and whether the listing is whole.

    Breadth-first over all roots together, so when the bound is reached every root's
    upper levels are in (a glob names a tasks root's ``*/task.yaml`` before a results
    tree's ten-thousandth journal file). Symlinks are listed, never followed.
    ``seen_as`` maps a host path prefix to the path the agent sees.
    """
    found: dict[str, None] = {}
    complete = True
    level: list[Path] = []
    for root in sorted(dict.fromkeys(roots)):
        if _exists(root):
            found[_shown(root, seen_as)] = None
            level.append(root)
    depth = 0
    while level and complete:
        if depth >= max_depth:
            complete = not any(_has_entries(folder) for folder in level)
            break
        following: list[Path] = []
        for folder in level:
            for name, is_dir in _entries(folder):
                path = folder / name
                shown = _shown(path, seen_as)
                if len(shown) > MAX_CONTEXT_PATH_CHARS or shown in found:
                    continue
                if len(found) >= limit:
                    complete = False
                    break
                found[shown] = None
                if is_dir:
                    following.append(path)
            if not complete:
                break
        level = following
        depth += 1
    return tuple(sorted(found)), complete


def _exists(path: Path) -> bool:
    try:
        path.lstat()
        return True
    except OSError:
        return False


def _entries(folder: Path) -> list[tuple[str, bool]]:
    try:
        with os.scandir(folder) as listing:
            entries = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in listing]
    except OSError:
        return []
    return sorted(entries)


def _has_entries(folder: Path) -> bool:
    try:
        info = folder.lstat()
        if not stat.S_ISDIR(info.st_mode):
            return False
        with os.scandir(folder) as listing:
            return next(iter(listing), None) is not None
    except OSError:
        return False


def _shown(path: Path, seen_as: Mapping[str, str] | None) -> str:
    text = os.path.abspath(path)
    for host, agent in (seen_as or {}).items():
        host = host.rstrip("/")
        if text == host or text.startswith(host + "/"):
            return agent.rstrip("/") + text[len(host) :] or "/"
    return text


__all__ = [
    "MAX_KNOWN_PATHS",
    "SCAN_CONTEXT_KEY",
    "ScanContext",
    "list_known_paths",
    "paths_globs_use",
    "stored_context",
]
