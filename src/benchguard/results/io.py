"""Reading and writing results files: clear errors in, nothing half-written out.

``results.json`` is written as ``{"schema_version", "run_id", "t", "manifest",
"records"}``; a plain JSON list of records (the reference's layout) is read too, and a
rewrite keeps the layout it was read in. Every write goes to a temporary file in the
target directory and is renamed into place; a batch of files is staged completely
before the first rename, so a failure leaves the old files untouched.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from benchguard.results.rows import Manifest, ResultRow

RESULTS_SCHEMA_VERSION = 1


class ResultsFileError(ValueError):
    """A results, rows or manifest file that cannot be used; the message names the file."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = Path(path)


@dataclass
class ResultsDocument:
    """A results.json in memory. ``records`` is mutable: scoring works on it in place."""

    records: list[Any]
    run_id: str | None = None
    t: str | None = None
    manifest: dict[str, Any] | None = None
    layout: Literal["object", "list"] = "object"
    extra: dict[str, Any] = field(default_factory=dict)

    def to_json(self) -> Any:
        if self.layout == "list":
            return self.records
        return {
            **self.extra,
            "schema_version": RESULTS_SCHEMA_VERSION,
            "run_id": self.run_id,
            "t": self.t,
            "manifest": self.manifest,
            "records": self.records,
        }

    def non_object_positions(self) -> list[int]:
        return [i for i, r in enumerate(self.records) if not isinstance(r, dict)]


def results_document(
    records: list[Any], *, run_id: str, t: str, manifest: Manifest | None
) -> ResultsDocument:
    """The document the harness writes for a run."""
    return ResultsDocument(
        records=records,
        run_id=run_id,
        t=t,
        manifest=manifest.to_json() if manifest is not None else None,
    )


def dumps(data: Any) -> str:
    """Stable JSON text: two-space indent, UTF-8 kept, trailing newline."""
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def read_json(path: Path) -> Any:
    """Parse a JSON file, raising ``ResultsFileError`` that says what is wrong."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ResultsFileError(path, "file not found") from None
    except IsADirectoryError:
        raise ResultsFileError(path, "is a directory, expected a JSON file") from None
    except UnicodeDecodeError as exc:
        raise ResultsFileError(path, f"not UTF-8 text (byte {exc.start})") from None
    except OSError as exc:
        raise ResultsFileError(path, f"cannot read: {exc.strerror or exc}") from None
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise ResultsFileError(
            path, f"invalid JSON at line {exc.lineno} column {exc.colno}: {exc.msg}"
        ) from None


def read_results(path: Path) -> ResultsDocument:
    """Read a results.json in either layout (see module doc)."""
    data = read_json(path)
    if isinstance(data, list):
        return ResultsDocument(records=data, layout="list")
    if not isinstance(data, dict):
        raise ResultsFileError(
            path,
            f"top level is {type(data).__name__}; expected a list of records or an "
            "object with a 'records' list",
        )
    records = data.get("records")
    if not isinstance(records, list):
        raise ResultsFileError(path, "the 'records' field is missing or not a list")
    manifest = data.get("manifest")
    if manifest is not None and not isinstance(manifest, dict):
        raise ResultsFileError(path, "the 'manifest' field is not an object")
    run_id, t = data.get("run_id"), data.get("t")
    known = {"schema_version", "run_id", "t", "manifest", "records"}
    return ResultsDocument(
        records=records,
        run_id=run_id if isinstance(run_id, str) else None,
        t=t if isinstance(t, str) else None,
        manifest=manifest,
        layout="object",
        extra={k: v for k, v in data.items() if k not in known},
    )


def read_rows(path: Path) -> list[ResultRow]:
    """Read and validate a rows.json (a list of rows, or ``{"rows": [...]}``)."""
    return validate_rows(_row_objects(path), source=path)


def read_row_objects(path: Path) -> list[dict[str, Any]]:
    """The raw row objects of a rows.json, for re-validation elsewhere."""
    return _row_objects(path)


def _row_objects(path: Path) -> list[dict[str, Any]]:
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
    validated = []
    for index, row in enumerate(rows):
        try:
            validated.append(ResultRow.model_validate(dict(row)))
        except ValidationError as exc:
            raise ResultsFileError(source, f"row {index} is invalid: {_first_error(exc)}") from None
    return validated


def read_manifest(path: Path) -> Manifest:
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


def write_text_atomic(path: Path, text: str) -> None:
    """Write one file via a temporary file and a rename."""
    write_files_atomic({path: text})


def write_files_atomic(files: Mapping[Path, str]) -> None:
    """Stage every file next to its target, then rename them all into place.

    If staging any file fails, no target is touched and the temporary files are removed.
    """
    staged: list[tuple[Path, Path]] = []
    try:
        for target, text in files.items():
            if target.is_dir():  # would fail only at rename time, after other files moved
                raise IsADirectoryError(21, "is a directory", str(target))
            target.parent.mkdir(parents=True, exist_ok=True)
            fd, temp_name = tempfile.mkstemp(
                dir=target.parent, prefix=f".{target.name}.", suffix=".tmp"
            )
            temp = Path(temp_name)
            staged.append((temp, target))
            os.fchmod(fd, 0o644)  # mkstemp's 0600 would hide results from other readers
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
    except BaseException:
        for temp, _ in staged:
            temp.unlink(missing_ok=True)
        raise
    for temp, target in staged:
        os.replace(temp, target)
