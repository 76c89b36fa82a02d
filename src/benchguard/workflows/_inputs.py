"""The input files a command was given: named files, and directory trees walked.

``scan`` and ``score`` both take files and directories mixed. A directory is walked
by ``results.io.walk_files``: sorted, skipping hidden entries (``.git``, a ``.trash``
folder) without listing them. Each command says which walked files
it wants; a path named on the command line is taken whatever its name, and reading it
reports any problem.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchguard.importers.harbor import is_harbor_dir
from benchguard.results.io import walk_files


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
    files: list[InputFile] = []
    empty_dirs: list[Path] = []
    seen: set[Path] = set()

    def add(path: Path, *, named: bool) -> None:
        key = _absolute(path)
        if key not in seen:
            seen.add(key)
            files.append(InputFile(path, named))

    for path in paths:
        if not path.is_dir() or is_harbor_dir(path):
            # A Harbor job or trial directory is one input: its importer reads each
            # trial's trajectory, reward and configuration together.
            add(path, named=True)
            continue
        found = walk_files(path, wanted, exclude=exclude)
        if not found:
            empty_dirs.append(path)
        for candidate in found:
            add(candidate, named=False)
    return CollectedInputs(files, empty_dirs)


def _absolute(path: Path) -> Path:
    # Not resolve(): a symlinked input keeps its own identity, as the user named it.
    return Path(os.path.abspath(path))
