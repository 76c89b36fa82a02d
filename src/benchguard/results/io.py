"""Results files for the publication layer: rows and manifests read and validated, the
harness's results document built, and the one sorted input walk.

The results-file codec itself (results.json in both layouts, dynamic rulesets by
reference, strict JSON, atomic writes, the file names) lives in
``benchguard.record.codec``; its names are re-exported here for compatibility.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pydantic import ValidationError

# Compatibility re-exports: the codec lives in benchguard.record.codec.
from benchguard.record.codec import (
    DYNAMIC_RULES_REF_KEY,
    DYNAMIC_RULESETS_KEY,
    RESULTS_SCHEMA_VERSION,
    ResultsDocument,
    ResultsFileError,
    dumps,
    read_json,
    read_results,
    write_files_atomic,
    write_text_atomic,
)
from benchguard.record.rulesets import RulesetTable

if TYPE_CHECKING:
    # Imported where rows are read: the input walk and the atomic writes (scan's)
    # need none of the row models or the scoring they import.
    from benchguard.results.rows import Manifest, ResultRow


def results_document(
    records: list[Any],
    *,
    run_id: str,
    t: str,
    manifest: Manifest | None,
    rulesets: RulesetTable | None = None,
) -> ResultsDocument:
    """The document the harness writes for a run; ``rulesets`` holds the dynamic
    rulesets its records' reports name."""
    return ResultsDocument(
        records=records,
        run_id=run_id,
        t=t,
        manifest=manifest.to_json() if manifest is not None else None,
        rulesets=rulesets if rulesets is not None else RulesetTable(),
    )


def walk_files(
    root: Path, wanted: Callable[[Path], bool], *, exclude: Path | None = None
) -> list[Path]:
    """The files under ``root`` that ``wanted`` accepts, sorted, the same on every machine.

    Hidden entries (a name starting with a dot, below ``root``) and anything under
    ``exclude`` are left out: ``.git``, ``.venv`` or a ``.trash`` folder never leak in,
    and a command does not read the outputs it wrote. Such folders are pruned before
    they are listed, and ``wanted`` is asked before the file is looked at, so a large
    ``.venv`` beside the inputs costs nothing. Symlinked folders are not followed.
    """
    skip = _absolute(exclude) if exclude is not None else None
    found: list[Path] = []
    for folder, dirnames, filenames in os.walk(root):
        here = Path(folder)
        dirnames[:] = [
            name
            for name in dirnames
            if not name.startswith(".")
            and (skip is None or not _absolute(here / name).is_relative_to(skip))
        ]
        for name in filenames:
            path = here / name
            if (
                not name.startswith(".")
                and wanted(path)
                and (skip is None or not _absolute(path).is_relative_to(skip))
                and path.is_file()
            ):
                found.append(path)
    return sorted(found)


def _absolute(path: Path) -> Path:
    # Not resolve(): a symlinked input keeps its own identity, as the user named it.
    return Path(os.path.abspath(path))


def read_rows(path: Path) -> list[ResultRow]:
    """Read and validate a rows.json (a list of rows, or ``{"rows": [...]}``)."""
    return validate_rows(read_row_objects(path), source=path)


def read_row_objects(path: Path) -> list[dict[str, Any]]:
    """The raw row objects of a rows.json, for re-validation elsewhere."""
    data = read_json(path)
    rows = data.get("rows") if isinstance(data, dict) else data
    if not isinstance(rows, list):
        raise ResultsFileError(path, "expected a JSON list of rows (or an object with 'rows')")
    for index, row in enumerate(rows):
        if not isinstance(row, dict):
            raise ResultsFileError(path, f"row {index} is {type(row).__name__}, not an object")
    return rows


def validate_rows(rows: Iterable[Mapping[str, Any]], *, source: Path | str) -> list[ResultRow]:
    """``ResultRow.model_validate`` each row; the error names the row and the field."""
    from benchguard.results.rows import ResultRow

    validated = []
    for index, row in enumerate(rows):
        try:
            validated.append(ResultRow.model_validate(dict(row)))
        except ValidationError as exc:
            raise ResultsFileError(source, f"row {index} is invalid: {_first_error(exc)}") from None
    return validated


def read_manifest(path: Path) -> Manifest:
    from benchguard.results.rows import Manifest

    data = read_json(path)
    try:
        return Manifest.model_validate(data)
    except ValidationError as exc:
        raise ResultsFileError(path, f"invalid manifest: {_first_error(exc)}") from None


def _first_error(exc: ValidationError) -> str:
    errors = exc.errors()
    parts = []
    for error in errors[:3]:
        where = ".".join(str(p) for p in error["loc"]) or "(top level)"
        parts.append(f"{where}: {error['msg']}")
    more = f" (+{len(errors) - 3} more)" if len(errors) > 3 else ""
    return "; ".join(parts) + more


__all__ = [
    "DYNAMIC_RULESETS_KEY",
    "DYNAMIC_RULES_REF_KEY",
    "RESULTS_SCHEMA_VERSION",
    "ResultsDocument",
    "ResultsFileError",
    "dumps",
    "read_json",
    "read_manifest",
    "read_results",
    "read_row_objects",
    "read_rows",
    "results_document",
    "validate_rows",
    "walk_files",
    "write_files_atomic",
    "write_text_atomic",
]
