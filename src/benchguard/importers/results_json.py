"""Our own records: a ``results.json`` (a JSON list of records) or a JSONL file of them.

Records are taken as they are, ``{name, input, output, trajectory, ...}``: nothing is
added or renamed, so a rescan sees exactly what the harness recorded. An entry that is
not an object is reported by position and skipped; the valid records beside it stay.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchguard.importers.transcript import ImportedFile, UnreadableLogError

FORMAT_NAME = "benchguard"
_RECORD_KEYS = frozenset({"trajectory", "output", "input", "cheating_report"})


def looks_like_record(document: object) -> bool:
    return isinstance(document, dict) and bool(_RECORD_KEYS & document.keys())


def import_file(path: Path) -> ImportedFile:
    try:
        with path.open("rb") as handle:
            head = handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc
    if head.startswith(b"["):
        return _import_list(path)
    return _import_lines(path)


def _import_list(path: Path) -> ImportedFile:
    try:
        document = json.loads(path.read_bytes())
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UnreadableLogError(f"{path}: not valid JSON ({exc})") from exc
    if not isinstance(document, list):
        raise UnreadableLogError(f"{path}: expected a JSON list of records")
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    for position, record in enumerate(document):
        if isinstance(record, dict):
            records.append(record)
        else:
            problems.append(
                f"{path}: record [{position}] is {type(record).__name__}, not an object; skipped"
            )
    return ImportedFile(path=path, format=FORMAT_NAME, records=records, problems=problems)


def _import_lines(path: Path) -> ImportedFile:
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    record = json.loads(line)
                except json.JSONDecodeError as exc:
                    problems.append(f"{path}: line {number}: not valid JSON ({exc.msg}); skipped")
                    continue
                if isinstance(record, dict):
                    records.append(record)
                else:
                    problems.append(
                        f"{path}: line {number}: {type(record).__name__}, not an object; skipped"
                    )
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc
    return ImportedFile(path=path, format=FORMAT_NAME, records=records, problems=problems)
