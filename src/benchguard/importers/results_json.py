"""Our own records: a ``results.json`` or a JSONL file of records.

``results.json`` comes in two layouts: the harness writes an object ``{schema_version,
run_id, t, manifest, records: [...], dynamic_rulesets}``; the reference's layout is a
bare list.

Records are taken as they are, ``{name, input, output, trajectory, ...}``: nothing is
added or renamed, so a rescan sees exactly what the harness recorded. The one exception
is the on-disk sharing of dynamic rules (schema 2): each report's ``dynamic_rules`` is
put back from the file's table by :func:`benchguard.results.io.inflate_records`, the
same code every results reader uses. An entry that is not an object, or whose report
names a rules list the file does not hold, is reported by position and skipped; the
valid records beside it stay.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchguard.importers.json_stream import (
    BrokenArray,
    NotAnArray,
    array_elements,
    stream_json_lines_file,
)
from benchguard.importers.transcript import (
    ImportedFile,
    RecordStream,
    UnreadableLogError,
    import_json_lines,
    read_json_document,
)
from benchguard.results.io import DYNAMIC_RULESETS_KEY, inflate_records

FORMAT_NAME = "benchguard"
# The reference's record shape is ``{input, output, trajectory, ...}``; any one of these
# keys (or a stored report) marks a record. Every other format is matched first, by
# keys of its own, so this never claims an Inspect sample or a Claude Code line.
_RECORD_KEYS = frozenset({"trajectory", "output", "input", "cheating_report"})


def looks_like_record(document: object) -> bool:
    """One of our records: ``trajectory`` (a list), ``output``, ``input`` or a report."""
    return (
        isinstance(document, dict)
        and bool(_RECORD_KEYS & document.keys())
        and isinstance(document.get("trajectory", []), list)
    )


def looks_like_results_document(document: object) -> bool:
    return (
        isinstance(document, dict)
        and isinstance(document.get("records"), list)
        and bool({"schema_version", "run_id", "manifest"} & document.keys())
    )


def import_file(path: Path) -> ImportedFile:
    head = _head(path)
    if head.startswith(b"[") or (head.startswith(b"{") and not _first_line_is_a_record(path)):
        try:
            return _import_document(path)
        except UnreadableLogError:
            # JSONL whose first line is broken: the records beside it still count.
            # (A broken pretty-printed document is not JSONL: its lone ``{}`` lines
            # are no records, so it keeps the document's error.)
            lines = _import_lines(path)
            if any(looks_like_record(record) for record in lines.records):
                return lines
            raise
    return _import_lines(path)


def stream_file(path: Path) -> RecordStream:
    """:func:`import_file`, record by record where the layout allows: a list of records
    and JSON Lines are read one element (line) at a time; the harness's results object
    (whose dynamic rules table follows its records) is read whole.

    The records and problems are those :func:`import_file` gives, except for a list
    whose structure breaks after records were read: those records are kept and the
    break is a problem (``import_file`` refuses the whole file)."""
    head = _head(path)
    if head.startswith(b"["):
        problems: list[str] = []
        return RecordStream(path, FORMAT_NAME, _array_records(path, problems), problems)
    if head.startswith(b"{") and not _first_line_is_a_record(path):
        return RecordStream.of(import_file(path))
    return stream_json_lines_file(path, format_name=FORMAT_NAME, read_line=_line_record)


def _head(path: Path) -> bytes:
    try:
        with path.open("rb") as handle:
            return handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc


def _array_records(path: Path, problems: list[str]) -> Iterator[dict[str, Any]]:
    """The list's records as they are read; problems named by position and line."""
    kept = 0
    try:
        with path.open("rb") as handle:
            for element in array_elements(handle):
                where = f"{path}: record [{element.position}]"
                if element.error is not None:
                    problems.append(f"{where} (line {element.line}): {element.error}; skipped")
                    continue
                unresolved = inflate_records([element.value], None)
                if unresolved:
                    problems.append(f"{where}: {unresolved[0][1]}; skipped")
                elif isinstance(element.value, dict):
                    kept += 1
                    yield element.value
                else:
                    kind = type(element.value).__name__
                    problems.append(f"{where} is {kind}, not an object; skipped")
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc
    except (NotAnArray, BrokenArray) as exc:
        if kept == 0:
            # Nothing read yet: the whole-file reader decides (and words the error, or
            # finds JSON Lines behind a broken first line) as it always has.
            problems.clear()
            imported = import_file(path)
            problems.extend(imported.problems)
            yield from imported.records
            return
        where = (
            f"{path}: record [{exc.position}] (line {exc.line})"
            if isinstance(exc, BrokenArray)
            else f"{path}"
        )
        problems.append(f"{where}: {exc}; the rest of the file is not read")


def _first_line_is_a_record(path: Path) -> bool:
    """JSONL has a whole record on its first line. A pretty-printed document's first
    line does not decode; a one-line document (``jq -c``, ``json.dump`` without indent)
    decodes to the whole results object, which is a document, not a record."""
    with path.open("rb") as handle:
        first = handle.readline()
    try:
        value = json.loads(first)
    except (ValueError, RecursionError):  # undecodable, or past the decoder's limits
        return False
    return not looks_like_results_document(value)


def _import_document(path: Path) -> ImportedFile:
    document = read_json_document(path, what="benchguard results")
    table = None
    if looks_like_results_document(document):
        entries = document["records"]
        table = document.get(DYNAMIC_RULESETS_KEY)
        label = "records"
    elif isinstance(document, list):
        entries = document
        label = "record "
    elif looks_like_record(document):
        entries = [document]
        label = "record "
    else:
        raise UnreadableLogError(
            f"{path}: expected a JSON list of records or an object with a 'records' list"
        )
    unresolved = dict(inflate_records(entries, table))
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    for position, record in enumerate(entries):
        if position in unresolved:
            problems.append(f"{path}: {label}[{position}]: {unresolved[position]}; skipped")
        elif isinstance(record, dict):
            records.append(record)
        else:
            problems.append(
                f"{path}: {label}[{position}] is {type(record).__name__}, not an object; skipped"
            )
    return ImportedFile(path=path, format=FORMAT_NAME, records=records, problems=problems)


def _import_lines(path: Path) -> ImportedFile:
    return import_json_lines(path, format_name=FORMAT_NAME, read_line=_line_record)


def _line_record(number: int, record: Any) -> dict[str, Any] | str:
    unresolved = inflate_records([record], None)
    if unresolved:
        # A lone line cannot carry the run's table, so the reference dangles.
        return unresolved[0][1]
    if isinstance(record, dict):
        return record
    return f"{type(record).__name__}, not an object"
