"""The scan context a record stores: where the agent's commands ran, as the harness knew it.

The shell-aware reading of commands resolves ``~``, the literal home path, relative
paths and globs only when it knows the agent's home, its working directory and which
paths exist. The harness stores them on its records as ``scan_context`` so any later
scan of that record reads its commands exactly as the run's own scan did.
``benchguard.detection.context`` builds a context (listing the paths, keeping only
those the record's globs use); this module holds only the persisted shape.

Bounded: at most :data:`MAX_KNOWN_PATHS` known paths of at most
:data:`MAX_CONTEXT_PATH_CHARS` characters each; a listing that reached the bound says
so (``known_paths_complete: false``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Annotated, Any

from pydantic import BaseModel, ConfigDict, Field, StringConstraints, ValidationError

SCAN_CONTEXT_KEY = "scan_context"
# Enough for a tasks tree, a home and the top of a results tree; a record carries its
# own copy, so the bound is also the record's cost (about 100 KB at most).
MAX_KNOWN_PATHS = 1000
# Levels listed below each root: globs name a few levels (``t?sks/*/t*.yaml``).
MAX_KNOWN_DEPTH = 6
MAX_CONTEXT_PATH_CHARS = 1024

ContextPath = Annotated[
    str, StringConstraints(min_length=1, max_length=MAX_CONTEXT_PATH_CHARS, pattern=r"^/")
]


class ScanContext(BaseModel):
    """The agent's view of the file system, for reading its commands.

    Paths are absolute and spelled as the agent saw them (a sandbox keeps host paths,
    so they are the host's).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    # The agent's home (``~``, ``$HOME`` and this literal path mean the same place).
    home: ContextPath | None = None
    # Where the agent's shell started: relative paths and ``cd ..`` resolve from here.
    workdir: ContextPath | None = None
    # Paths the harness knows exist (the protected set, the home), sorted: what a glob
    # or a relative path can name.
    known_paths: tuple[ContextPath, ...] = Field(default=(), max_length=MAX_KNOWN_PATHS)
    # False when the listing stopped at MAX_KNOWN_PATHS or MAX_KNOWN_DEPTH.
    known_paths_complete: bool = True


def stored_context(record: Mapping[str, Any]) -> tuple[ScanContext | None, str | None]:
    """The record's scan context and, when one is stored but unusable, why.

    A record without one (an imported log, a results file older than schema 4) gives
    ``(None, None)``: its commands are read without a home or working directory.
    """
    raw = record.get(SCAN_CONTEXT_KEY)
    if raw is None:
        return None, None
    if isinstance(raw, ScanContext):
        return raw, None
    try:
        return ScanContext.model_validate(raw), None
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(part) for part in error["loc"]) or "(top level)"
        return None, f"the stored scan context cannot be read ({where}: {error['msg']})"
