"""Merging per-task rows.json files (one task per process in matrix runs) into one batch.

The steps, each usable alone: ``dedupe_latest`` keeps the newest row per setup, task and
iteration (by each row's original ``t``, so it runs before re-stamping);
``rebatch_rows`` re-validates stored rows and stamps one ``runId`` and ``t``;
``build_manifests`` gives one manifest per setup. ``aggregate`` chains them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchguard.record.codec import MANIFEST_FILE, MANIFESTS_FILE, ROWS_FILE
from benchguard.results.io import (
    ResultsFileError,
    read_manifest,
    read_row_objects,
    validate_rows,
    walk_files,
)
from benchguard.results.rows import Manifest, ResultRow

# The file names, defined once in record.codec (these names are kept for importers).
ROWS_FILENAME = ROWS_FILE
MANIFEST_FILENAME = MANIFEST_FILE
MANIFESTS_FILENAME = MANIFESTS_FILE


def new_run_id(now: datetime, pid: int) -> str:
    """``run_YYYYMMDD_HHMMSS_<pid>``, the run-directory name the harness uses too."""
    return f"run_{now.astimezone(UTC):%Y%m%d_%H%M%S}_{pid}"


def iso_t(now: datetime) -> str:
    """UTC ISO-8601 to the second; sorts lexically in time order."""
    return now.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def rebatch_rows(
    rows: Iterable[Mapping[str, Any] | ResultRow], *, run_id: str, t: str
) -> list[ResultRow]:
    """Re-validate stored rows and stamp them with one ``run_id`` and ``t``; each row
    keeps the run id it had as its ``batch_run_id`` (the page names the batches).

    Nothing else changes: a historical row with ``catastrophic: true`` and no
    ``catastrophicKinds`` keeps its true bool beside an empty list.
    """
    validated = [
        row if isinstance(row, ResultRow) else validate_rows([row], source="rows")[0]
        for row in rows
    ]
    return [
        row.model_copy(
            update={"run_id": run_id, "t": t, "batch_run_id": row.batch_run_id or row.run_id}
        )
        for row in validated
    ]


def dedupe_latest(rows: Iterable[ResultRow]) -> list[ResultRow]:
    """Keep the row with the greatest ``t`` per (setup, task, iteration); on equal ``t``
    the later row wins. Keys keep the order in which they were first seen."""
    latest: dict[tuple[str, str, int], ResultRow] = {}
    for row in rows:
        key = (row.setup_id, row.task_folder, row.iteration)
        current = latest.get(key)
        if current is None or row.t >= current.t:
            latest[key] = row
    return list(latest.values())


def build_manifests(
    rows: Iterable[ResultRow],
    *,
    run_id: str,
    t: str,
    known: Mapping[str, Manifest] | None = None,
) -> list[Manifest]:
    """One manifest per setup, in first-seen order; augmentation and other manifest
    fields come from a known per-task manifest of that setup when there is one."""
    manifests: dict[str, Manifest] = {}
    for row in rows:
        if row.setup_id in manifests:
            continue
        base = (known or {}).get(row.setup_id)
        if base is not None:
            manifests[row.setup_id] = base.model_copy(update={"run_id": run_id, "t": t})
        else:
            manifests[row.setup_id] = Manifest(
                run_id=run_id, t=t, setup_id=row.setup_id, model=row.model, harness=row.harness
            )
    return list(manifests.values())


@dataclass
class AggregateResult:
    rows: list[ResultRow]
    manifests: list[Manifest]
    sources: list[Path]
    problems: list[str] = field(default_factory=list)


def find_rows_files(root: Path, *, exclude: Path | None = None) -> list[Path]:
    """Every rows.json under ``root``, sorted, outside hidden folders (``.trash``,
    ``.git``); ``exclude`` (an output file, by any path to it) is skipped."""
    skip = exclude.resolve() if exclude is not None else None

    def wanted(path: Path) -> bool:
        return path.name == ROWS_FILENAME and (skip is None or path.resolve() != skip)

    return walk_files(root, wanted)


def aggregate(files: Sequence[Path], *, run_id: str, t: str) -> AggregateResult:
    """Merge rows files into one batch. A bad file is reported in ``problems`` and
    skipped; the valid files beside it are still merged."""
    collected: list[ResultRow] = []
    known: dict[str, Manifest] = {}
    problems: list[str] = []
    used: list[Path] = []
    for path in files:
        try:
            rows = validate_rows(read_row_objects(path), source=path)
        except ResultsFileError as exc:
            problems.append(str(exc))
            continue
        used.append(path)
        collected.extend(rows)
        manifest_path = path.parent / MANIFEST_FILENAME
        if manifest_path.is_file():
            try:
                manifest = read_manifest(manifest_path)
            except ResultsFileError as exc:
                problems.append(str(exc))
            else:
                known.setdefault(manifest.setup_id, manifest)
    batch = rebatch_rows(dedupe_latest(collected), run_id=run_id, t=t)
    return AggregateResult(
        rows=batch,
        manifests=build_manifests(batch, run_id=run_id, t=t, known=known),
        sources=used,
        problems=problems,
    )
