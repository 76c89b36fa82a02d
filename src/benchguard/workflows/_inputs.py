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
    paths: Sequence[Path],
    wanted: Callable[[Path], bool],
    *,
    exclude: Path | None = None,
    harbor: bool = False,
) -> CollectedInputs:
    """Named paths that are not directories as they are (existing or not), and the files
    under each directory that ``wanted`` accepts, except hidden ones and anything under
    ``exclude`` (an output directory, so a second run does not read its own outputs).
    A file reached twice, by any spelling of its path, is kept once, where first met.
    With ``harbor`` (the commands that read logs), a Harbor job or trial directory,
    named or met while walking, is one input (not walked)."""
    files: list[InputFile] = []
    empty_dirs: list[Path] = []
    seen: set[Path] = set()

    def add(path: Path, *, named: bool) -> None:
        key = _absolute(path)
        if key not in seen:
            seen.add(key)
            files.append(InputFile(path, named))

    for path in paths:
        if not path.is_dir() or (harbor and is_harbor_dir(path)):
            # A Harbor job or trial directory is one input: its importer reads each
            # trial's trajectory, reward and configuration together.
            add(path, named=True)
            continue
        # Harbor directories met while walking are one input each too, and the files
        # inside them are not walked one by one (a trial's config.json is no log).
        trials = harbor_dirs_under(path, exclude=exclude) if harbor else []
        found = [
            f
            for f in walk_files(path, wanted, exclude=exclude)
            if not any(f.is_relative_to(h) for h in trials)
        ]
        if not found and not trials:
            empty_dirs.append(path)
        for candidate in sorted([*found, *trials]):
            add(candidate, named=False)
    return CollectedInputs(files, empty_dirs)


def harbor_dirs_under(root: Path, *, exclude: Path | None = None) -> list[Path]:
    """The outermost Harbor job or trial directories below ``root``, sorted; hidden
    folders, symlinked folders and anything under ``exclude`` are not entered (as
    ``walk_files`` does)."""
    skip = _absolute(exclude) if exclude is not None else None
    found: list[Path] = []
    for folder, dirnames, _ in os.walk(root):
        here = Path(folder)
        kept = []
        for name in sorted(dirnames):
            child = here / name
            if name.startswith(".") or (skip is not None and _absolute(child).is_relative_to(skip)):
                continue
            if is_harbor_dir(child):
                found.append(child)
            else:
                kept.append(name)
        dirnames[:] = kept
    return sorted(found)


def _absolute(path: Path) -> Path:
    # Not resolve(): a symlinked input keeps its own identity, as the user named it.
    return Path(os.path.abspath(path))
