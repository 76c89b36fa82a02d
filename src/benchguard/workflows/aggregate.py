"""The aggregate workflow: merge per-run rows.json files under a directory into one
batch (rows.json and manifests.json), written atomically."""

from __future__ import annotations

import datetime as dt
import os
from dataclasses import dataclass
from pathlib import Path

from benchguard.errors import BadInputError
from benchguard.results.aggregate import (
    MANIFESTS_FILENAME,
    ROWS_FILENAME,
    AggregateResult,
    aggregate,
    find_rows_files,
    iso_t,
    new_run_id,
)
from benchguard.results.io import dumps, write_files_atomic
from benchguard.workflows.exit_policy import verdict_exit_code


@dataclass(frozen=True)
class AggregateOutcome:
    """The merged batch and where it was written; ``result.problems`` name the rows
    files that were skipped (exit 3, incomplete: docs/exit-codes.md)."""

    target: Path
    result: AggregateResult

    @property
    def exit_code(self) -> int:
        return verdict_exit_code(incomplete=bool(self.result.problems))


def aggregate_tree(
    root: Path, *, out_dir: Path | None = None, run_id: str | None = None, t: str | None = None
) -> AggregateOutcome:
    """Merge every rows.json under ``root`` (not the output itself) into ``out_dir``
    (default ``root``). :class:`BadInputError` when there is nothing to merge, nothing
    could be read, or the outputs cannot be written."""
    if not root.is_dir():
        raise BadInputError(f"{root}: not a directory")
    target = out_dir if out_dir is not None else root
    files = find_rows_files(root, exclude=target / ROWS_FILENAME)
    if not files:
        raise BadInputError(f"{root}: no {ROWS_FILENAME} files found")
    now = dt.datetime.now(dt.UTC)
    result = aggregate(files, run_id=run_id or new_run_id(now, os.getpid()), t=t or iso_t(now))
    if not result.sources:
        problems = "; ".join(result.problems)
        raise BadInputError(
            f"{root}: none of the {len(files)} rows files could be read ({problems})"
        )
    try:
        write_files_atomic(
            {
                target / ROWS_FILENAME: dumps([row.to_json() for row in result.rows]),
                target / MANIFESTS_FILENAME: dumps([m.to_json() for m in result.manifests]),
            }
        )
    except OSError as exc:
        raise BadInputError(f"{target}: cannot write outputs: {exc.strerror or exc}") from None
    return AggregateOutcome(target, result)
