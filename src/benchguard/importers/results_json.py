"""Our own records: a ``results.json`` or a JSONL file of records.

``results.json`` comes in two layouts: the harness writes an object ``{schema_version,
run_id, t, manifest, records: [...], dynamic_rulesets}``; the reference's layout is a
bare list.

Records are taken as they are, ``{name, input, output, trajectory, ...}``: nothing is
added or renamed, so a rescan sees exactly what the harness recorded. The one exception
is the file's table of dynamic rulesets (schema 2): it is read into the import's
``rulesets`` (``record.rulesets.RulesetTable``, the same table every results reader
keeps), and each report keeps naming its ruleset by digest. An entry that is not an
object, or whose report names a ruleset the file does not hold, is reported by position
and skipped; the valid records beside it stay.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchguard.importers._json import loads_like_json
from benchguard.importers.json_stream import (
    ArrayElement,
    BrokenArray,
    Member,
    NotAnArray,
    array_elements,
    last_member,
    object_members,
    stream_json_lines_file,
)
from benchguard.importers.transcript import (
    ImportedFile,
    RecordStream,
    UnreadableLogError,
    import_json_lines,
    read_json_document,
)
from benchguard.record.codec import DYNAMIC_RULESETS_KEY
from benchguard.record.edge import sanitize_json
from benchguard.record.rulesets import RulesetTable, unresolved_reference

FORMAT_NAME = "benchguard"
# The reference's record shape is ``{input, output, trajectory, ...}``; any one of these
# keys (or a stored report) marks a record. Every other format is matched first, by
# keys of its own, so this never claims an Inspect sample or a Claude Code line.
_RECORD_KEYS = frozenset({"trajectory", "output", "input", "cheating_report"})
RECORD_KEYS_SORTED = tuple(sorted(_RECORD_KEYS))


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
    head = read_head(path)
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
        is read member by member, its records one at a time, the dynamic rules table they
    refer to read first from the end of the file (where the harness writes it) and checked
    against the table met in order.

        The records and problems are those :func:`import_file` gives, except for a list
        whose structure breaks after records were read: those records are kept and the
        break is a problem (``import_file`` refuses the whole file)."""
    head = read_head(path)
    problems: list[str] = []
    rulesets = RulesetTable()
    if head.startswith(b"["):
        records = _array_records(path, problems, rulesets)
        return RecordStream(path, FORMAT_NAME, records, problems, rulesets)
    if opens_a_results_object(head):
        records = _object_records(path, problems, rulesets)
        return RecordStream(path, FORMAT_NAME, records, problems, rulesets)
    if head.startswith(b"{") and not _first_line_is_a_record(path):
        return RecordStream.of(import_file(path))
    return stream_json_lines_file(path, format_name=FORMAT_NAME, read_line=_line_record)


def read_head(path: Path) -> bytes:
    """The file's first 4 KiB, a UTF-8 BOM and leading whitespace stripped."""
    try:
        with path.open("rb") as handle:
            return handle.read(4096).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc


def _array_records(
    path: Path, problems: list[str], rulesets: RulesetTable
) -> Iterator[dict[str, Any]]:
    """The list's records as they are read; problems named by position and line."""
    kept = 0
    try:
        with path.open("rb") as handle:
            for element in array_elements(handle):
                read = _element_record(path, "record ", element, rulesets, problems)
                if read is not None:
                    kept += 1
                    yield read
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc
    except (NotAnArray, BrokenArray) as exc:
        yield from _after_break(path, "record ", exc, kept, problems, rulesets)


def _after_break(
    path: Path,
    label: str,
    exc: ValueError,
    kept: int,
    problems: list[str],
    rulesets: RulesetTable,
) -> Iterator[dict[str, Any]]:
    """A list that broke off: read whole instead when nothing was kept yet (its reader
    names the error, or finds JSON Lines behind a broken first line), else name where
    it broke; the records already yielded stand."""
    if kept == 0:
        yield from _whole_instead(path, problems, rulesets)
        return
    problems.append(f"{_broken_at(path, label, exc)}: {exc}; the rest of the file is not read")


def _broken_at(path: Path, label: str, exc: ValueError) -> str:
    if not isinstance(exc, BrokenArray):
        return str(path)
    if exc.position < 0:
        return f"{path} (line {exc.line})"
    return f"{path}: {label}[{exc.position}] (line {exc.line})"


# The harness writes these first (``ResultsDocument.to_json``): an object opening with one
# is a results document, read as one without decoding it whole to find out.
_RESULTS_FIRST_KEY = re.compile(rb'\A\{\s*"(?:schema_version|run_id)"\s*:')


def opens_a_results_object(head: bytes) -> bool:
    """Whether a file starting with ``head`` (a BOM and leading space stripped) is the
    harness's results object: its first key is ``schema_version`` or ``run_id``."""
    return _RESULTS_FIRST_KEY.match(head) is not None


def _object_records(
    path: Path, problems: list[str], rulesets: RulesetTable
) -> Iterator[dict[str, Any]]:
    """The records of a results object as they are read.

    Records refer to the table of dynamic rules that follows them, so the table is read
    first from the file's end (:func:`last_member`); the table met in order must be the
    same, or the records were resolved against the wrong one and the file says so."""
    kept = 0
    keys: list[str] = []
    streamed = False
    table: Any = None
    try:
        with path.open("rb") as handle:
            found, table = last_member(handle, DYNAMIC_RULESETS_KEY)
            if not found:
                # Not laid out as the harness pretty-prints it (one line, or no table):
                # the records cannot be resolved before the table is read, so the file
                # is read whole.
                handle.close()
                yield from _whole_instead(path, problems, rulesets)
                return
            # The edge for the table: made JSON-safe once, for every record naming it.
            rulesets.merge(RulesetTable.from_json(sanitize_json(table)))
            handle.seek(0)
            met: tuple[bool, Any] = (False, None)
            for item in object_members(handle, "records"):
                if isinstance(item, Member):
                    keys.append(item.key)
                    if item.key == "records":
                        streamed = item.value is None
                    if item.key == DYNAMIC_RULESETS_KEY:
                        met = (True, item.value)
                    continue
                read = _element_record(path, "records", item, rulesets, problems)
                if read is not None:
                    kept += 1
                    yield read
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc
    except (NotAnArray, BrokenArray) as exc:
        yield from _after_break(path, "records", exc, kept, problems, rulesets)
        return
    if not (streamed and {"schema_version", "run_id", "manifest"} & set(keys)) and kept == 0:
        # Not a results document after all (no records list): read as it always was.
        yield from _whole_instead(path, problems, rulesets)
        return
    if keys.count("records") > 1:
        problems.append(
            f"{path}: 'records' appears {keys.count('records')} times; the records of every "
            "one were scanned (a JSON reader keeps only the last)"
        )
    if met != (found, table):
        problems.append(
            f"{path}: the '{DYNAMIC_RULESETS_KEY}' table read ahead from the end of the file "
            "is not the one the document holds; its records' stored dynamic rules may be "
            "wrong; read this file with benchguard score"
        )


def _whole_instead(
    path: Path, problems: list[str], rulesets: RulesetTable
) -> Iterator[dict[str, Any]]:
    """Nothing was read yet: the whole-file reader decides (and words an error) as it
    always has."""
    problems.clear()
    imported = import_file(path)
    problems.extend(imported.problems)
    rulesets.merge(imported.rulesets)
    yield from imported.records


def _element_record(
    path: Path,
    label: str,
    element: ArrayElement,
    rulesets: RulesetTable,
    problems: list[str],
) -> dict[str, Any] | None:
    """The element as a record whose ruleset reference resolves, or None with a problem."""
    where = f"{path}: {label}[{element.position}]"
    if element.error is not None:
        problems.append(f"{where} (line {element.line}): {element.error}; skipped")
        return None
    unresolved = unresolved_reference(element.value, rulesets)
    if unresolved is not None:
        problems.append(f"{where}: {unresolved}; skipped")
        return None
    if isinstance(element.value, dict):
        if not _RECORD_KEYS & element.value.keys():
            # Fail closed on shape: another tool's event list (OpenHands writes one)
            # parses as a list of objects too; read as records it would scan as
            # no_data over a transcript that was never read.
            problems.append(
                f"{where} has none of a benchguard record's keys "
                f"({', '.join(RECORD_KEYS_SORTED)}): not a results record; skipped"
            )
            return None
        return element.value
    problems.append(f"{where} is {type(element.value).__name__}, not an object; skipped")
    return None


def _first_line_is_a_record(path: Path) -> bool:
    """JSONL has a whole record on its first line. A pretty-printed document's first
    line does not decode; a one-line document (``jq -c``, ``json.dump`` without indent)
    decodes to the whole results object, which is a document, not a record."""
    with path.open("rb") as handle:
        first = handle.readline()
    try:
        value = loads_like_json(first)
    except (ValueError, RecursionError):  # undecodable, or past the decoder's limits
        return False
    return not looks_like_results_document(value)


def _import_document(path: Path) -> ImportedFile:
    document = read_json_document(path, what="benchguard results")
    table: Any = None
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
    rulesets = RulesetTable.from_json(sanitize_json(table) if table is not None else None)
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    for position, record in enumerate(entries):
        unresolved = unresolved_reference(record, rulesets)
        if unresolved is not None:
            problems.append(f"{path}: {label}[{position}]: {unresolved}; skipped")
        elif isinstance(record, dict):
            records.append(record)
        else:
            problems.append(
                f"{path}: {label}[{position}] is {type(record).__name__}, not an object; skipped"
            )
    return ImportedFile(
        path=path, format=FORMAT_NAME, records=records, problems=problems, rulesets=rulesets
    )


def _import_lines(path: Path) -> ImportedFile:
    return import_json_lines(path, format_name=FORMAT_NAME, read_line=_line_record)


def _line_record(number: int, record: Any) -> dict[str, Any] | str:
    unresolved = unresolved_reference(record, RulesetTable())
    if unresolved is not None:
        # A lone line cannot carry the run's table, so the reference dangles.
        return unresolved
    if isinstance(record, dict):
        return record
    return f"{type(record).__name__}, not an object"
