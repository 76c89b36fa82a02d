"""Inputs a task's prompt hands over in the agent home, kept read-only.

A prompt that says "sum the amounts in ``~/fixtures/orders.csv``" grants that file: the
inventory then treats its folder as input, not as a prior run's leftover (no
fingerprint, ``inventory.filter_rules_for_prompt``). A granted input must not become a
channel: an agent that rewrites it could leave answers for the next run, or change what
a check reads. So:

- sandboxed, each granted path is bound read-only over the (writable) home: a write,
  a rename or a delete fails (``EROFS``, ``EBUSY``);
- unsandboxed nothing can stop the write, so each granted path's content is digested
  before and after the run and a change is stored on the record
  (``granted_inputs_changed``), for a reviewer to see.

What counts as granted, the inventory's rule for an input: an existing path the prompt
names inside a home folder (``~/folder/file``, ``$HOME/...``, ``${HOME}/...`` or the
home's literal path), never a top-level entry named alone (``~/report.md`` is a
deliverable to write), never a path a verification check names (checks name
deliverables), never through a symlink. At most :data:`MAX_GRANTED_PATHS` per run.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path, PurePosixPath

from benchguard.harness.tasks import FileCheck, Task

MAX_GRANTED_PATHS = 32
# Bytes digested per granted tree: past it the digest covers names and sizes only.
MAX_DIGEST_BYTES = 64 << 20
MAX_DIGEST_FILES = 2000

_PATH_CHARS = r"[\w.@%+=,-]"


def granted_inputs(task: Task, home: Path) -> tuple[Path, ...]:
    """The existing home paths ``task``'s prompt hands over as input (module doc), sorted."""
    home = Path(os.path.abspath(home))
    deliverables = [
        home / check.file[2:]
        for check in task.verification
        if isinstance(check, FileCheck) and check.file.startswith("~/")
    ]
    found: dict[Path, None] = {}
    for relative in _named_home_paths(task.prompt, str(home)):
        parts = PurePosixPath(relative).parts
        if len(parts) < 2 or ".." in parts or "." in parts:
            continue
        path = home.joinpath(*parts)
        if any(_related(path, deliverable) for deliverable in deliverables):
            continue
        if _plain(path, home):
            found[path] = None
        if len(found) >= MAX_GRANTED_PATHS:
            break
    return tuple(sorted(found))


def _named_home_paths(prompt: str, home: str) -> Iterable[str]:
    prefixes = r"(?:~|\$HOME|\$\{HOME\}|" + re.escape(home.rstrip("/")) + r")"
    pattern = re.compile(rf"(?<![\w~/]){prefixes}/({_PATH_CHARS}+(?:/{_PATH_CHARS}+)*)")
    for match in pattern.finditer(prompt):
        # A sentence's final period is not part of the path.
        yield match.group(1).rstrip(".,")


def _related(path: Path, other: Path) -> bool:
    return path == other or other in path.parents or path in other.parents


def _plain(path: Path, home: Path) -> bool:
    """``path`` exists as a file or folder under ``home`` and no part of it is a link."""
    current = home
    for part in path.relative_to(home).parts:
        current = current / part
        try:
            info = current.lstat()
        except OSError:
            return False
        if stat.S_ISLNK(info.st_mode):
            return False
    return stat.S_ISREG(info.st_mode) or stat.S_ISDIR(info.st_mode)


def digest(paths: Sequence[Path]) -> dict[str, str]:
    """A content digest per path (a tree's names, sizes and file contents, bounded)."""
    return {str(path): _digest_one(path) for path in paths}


def _digest_one(path: Path) -> str:
    hasher = hashlib.sha256()
    budget = [MAX_DIGEST_BYTES, MAX_DIGEST_FILES]
    try:
        info = path.lstat()
    except OSError:
        return "missing"
    if stat.S_ISDIR(info.st_mode):
        for folder, dirs, files in os.walk(path):
            dirs.sort()
            for name in sorted(files + dirs):
                _add(hasher, Path(folder, name), budget)
    else:
        _add(hasher, path, budget)
    return hasher.hexdigest()


def _add(hasher: hashlib._Hash, path: Path, budget: list[int]) -> None:
    try:
        info = path.lstat()
    except OSError:
        hasher.update(f"{path}\0missing\n".encode(errors="replace"))
        return
    hasher.update(f"{path}\0{stat.S_IFMT(info.st_mode)}\0{info.st_size}\n".encode(errors="replace"))
    if not stat.S_ISREG(info.st_mode) or budget[1] <= 0 or info.st_size > budget[0]:
        return
    budget[1] -= 1
    budget[0] -= info.st_size
    try:
        with open(path, "rb") as handle:
            hasher.update(handle.read(info.st_size + 1))
    except OSError:
        hasher.update(b"\0unreadable")


def changed(before: dict[str, str], paths: Sequence[Path]) -> list[str]:
    """The granted paths whose digest differs from ``before``, sorted."""
    after = digest(paths)
    return sorted(path for path, value in before.items() if after.get(path) != value)


__all__ = ["MAX_GRANTED_PATHS", "changed", "digest", "granted_inputs"]
