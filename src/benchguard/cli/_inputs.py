"""The input files a command was given: named files, and directory trees walked.

``scan`` and ``score`` both take files and directories mixed. A directory is walked
recursively in sorted order, skipping hidden entries (a path part, relative to the
directory named, that starts with a dot) so ``.git`` or a ``.trash`` folder never leaks
in and the listing is the same on every machine. Each command says which walked files
it wants; a path named on the command line is taken whatever its name, and reading it
reports any problem.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class InputFile:
    """One input, and whether it was named on the command line (not found by a walk)."""

    path: Path
    named: bool


@dataclass(frozen=True)
class CollectedInputs:
    """Inputs in order without repeats, and the directories whose walk found none."""

    files: list[InputFile]
    empty_dirs: list[Path]


def collect_inputs(
    paths: Sequence[Path], wanted: Callable[[Path], bool], *, exclude: Path | None = None
) -> CollectedInputs:
    """Named paths that are not directories as they are (existing or not), and the files
    under each directory that ``wanted`` accepts, except hidden ones and anything under
    ``exclude`` (an output directory, so a second run does not read its own outputs).
    A file reached twice, by any spelling of its path, is kept once, where first met."""
    skip = _absolute(exclude) if exclude is not None else None
    files: list[InputFile] = []
    empty_dirs: list[Path] = []
    seen: set[Path] = set()

    def add(path: Path, *, named: bool) -> None:
        key = _absolute(path)
        if key not in seen:
            seen.add(key)
            files.append(InputFile(path, named))

    for path in paths:
        if not path.is_dir():
            add(path, named=True)
            continue
        found = [
            candidate
            for candidate in sorted(path.rglob("*"))
            if candidate.is_file()
            and not any(part.startswith(".") for part in candidate.relative_to(path).parts)
            and wanted(candidate)
            and (skip is None or not _absolute(candidate).is_relative_to(skip))
        ]
        if not found:
            empty_dirs.append(path)
        for candidate in found:
            add(candidate, named=False)
    return CollectedInputs(files, empty_dirs)


def _absolute(path: Path) -> Path:
    # Not resolve(): a symlinked input keeps its own identity, as the user named it.
    return Path(os.path.abspath(path))
