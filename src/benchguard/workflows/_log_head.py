"""The bounded head of a log, as text, for ``--profile auto`` to recognise its benchmark.

Never the whole of a large log: a file's first :data:`SNIFF_BYTES`; an archive's
members (an Inspect ``.eval`` log) read through the importer's own reader, member by
member until the budget is spent; a directory's (a Harbor job) sorted files, a slice of
each. Unreadable input gives ``""``: recognition is a hint, and the scan itself reports
what it cannot read.
"""

from __future__ import annotations

from pathlib import Path

from benchguard.importers.eval_zip import EvalArchive, EvalArchiveError, is_zip

# Enough for the first steps of a trajectory, where the working directory, the task
# id and the grader's paths appear.
SNIFF_BYTES = 2 << 20
_MAX_DIR_FILES = 64
_MAX_MEMBERS = 64


def log_head(path: Path) -> str:
    try:
        if path.is_dir():
            return _dir_head(path)
        if is_zip(path):
            return _archive_head(path)
        with path.open("rb") as handle:
            return handle.read(SNIFF_BYTES).decode("utf-8", errors="replace")
    except (OSError, EvalArchiveError, ValueError):
        return ""


def _dir_head(path: Path) -> str:
    parts: list[str] = []
    budget = SNIFF_BYTES
    files = sorted(p for p in path.rglob("*") if p.is_file() and not p.is_symlink())
    for item in files[:_MAX_DIR_FILES]:
        with item.open("rb") as handle:
            chunk = handle.read(max(1, min(budget, SNIFF_BYTES // 8)))
        parts.append(chunk.decode("utf-8", errors="replace"))
        budget -= len(chunk)
        if budget <= 0:
            break
    return "\n".join(parts)


def _archive_head(path: Path) -> str:
    archive = EvalArchive(path)
    parts: list[str] = []
    budget = SNIFF_BYTES
    for name in archive.names()[:_MAX_MEMBERS]:
        try:
            # The reader refuses members over its own size bound before decompressing.
            chunk = archive.read(name)[:budget]
        except EvalArchiveError:
            continue
        parts.append(chunk.decode("utf-8", errors="replace"))
        budget -= len(chunk)
        if budget <= 0:
            break
    return "\n".join(parts)
