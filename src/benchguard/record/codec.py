"""The results-file codec: results.json in and out, clear errors in, nothing half-written out.

The file names a run directory holds are defined here once (:data:`RESULTS_FILE`,
:data:`ROWS_FILE`, :data:`MANIFEST_FILE`).

``results.json`` is written as ``{"schema_version", "run_id", "t", "manifest",
"records", "dynamic_rulesets"}``; a plain JSON list of records (the reference's layout)
is read too, and a rewrite keeps the layout it was read in. Every write goes to a
temporary file in the target directory and is renamed into place; a batch of files is
staged completely before the first rename, so a failure leaves the old files untouched.

Schema 2 stores reports' dynamic rules once per run, in the run-level
``dynamic_rulesets`` table (``record.rulesets``: ``rules``, every distinct rule once,
and ``sets``, each distinct ruleset by its digest as ``[first, last]`` spans over
``rules``); each report names its ruleset with ``dynamic_rules_ref``. In memory too:
a :class:`ResultsDocument` holds its table (``rulesets``) and its reports keep their
references. A report that carries its rules inline (schema 1, the list layout) is
converted at the edge, when it is read. Schema 3 records are ``RunRecord`` dumps;
schema 4 adds each harness record's ``scan_context``.

Every record read is made JSON-safe first (``record.edge.sanitized_record_dict``: lone
surrogates, ``NaN``/``Infinity`` and runaway nesting replaced and noted in
``record_errors``), so nothing read can make a later strict write fail; a clean file
reads back exactly as it was written.
"""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchguard.errors import BadInputError
from benchguard.record.edge import sanitize_json, sanitized_record_dict
from benchguard.record.rulesets import (
    DYNAMIC_RULES_KEY,
    DYNAMIC_RULES_REF_KEY,
    RulesetTable,
    inlined,
    reference_of,
    to_reference,
    unresolved_reference,
)

# The files of a run directory (and of ``benchguard score``'s output), named once.
RESULTS_FILE = "results.json"
ROWS_FILE = "rows.json"
MANIFEST_FILE = "manifest.json"
# ``benchguard aggregate``'s merged manifests.
MANIFESTS_FILE = "manifests.json"
# The harness's journal of a batch (harness.journal), beside its results.json.
BATCH_FILE = "batch.json"

# 3: records are ``records.RunRecord`` dumps (adds started_at, finished_at,
# record_errors and the "interrupted" status; strict JSON, no NaN). 4: harness records
# carry ``scan_context`` (detection.context), which rescans read. 1 to 3 still read.
RESULTS_SCHEMA_VERSION = 4
# Run-level table of dynamic rule lists (schema 2) and a report's reference into it.
DYNAMIC_RULESETS_KEY = "dynamic_rulesets"
__all__ = [
    "BATCH_FILE",
    "DYNAMIC_RULESETS_KEY",
    "DYNAMIC_RULES_KEY",
    "DYNAMIC_RULES_REF_KEY",
    "MANIFESTS_FILE",
    "MANIFEST_FILE",
    "RESULTS_FILE",
    "RESULTS_SCHEMA_VERSION",
    "ROWS_FILE",
    "ResultsDocument",
    "ResultsFileError",
    "dumps",
    "read_json",
    "read_results",
    "write_files_atomic",
    "write_text_atomic",
]


class ResultsFileError(BadInputError, ValueError):
    """A results, rows or manifest file that cannot be used; the message names the file."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(f"{path}: {message}", reason=message)
        self.path = Path(path)


@dataclass
class ResultsDocument:
    """A results.json in memory. ``records`` is mutable: scoring works on it in place.

    Reports name their dynamic rulesets by digest (``dynamic_rules_ref``) and
    ``rulesets`` holds them: the document's one table (``record.rulesets``).
    """

    records: list[Any]
    run_id: str | None = None
    t: str | None = None
    manifest: dict[str, Any] | None = None
    layout: Literal["object", "list"] = "object"
    extra: dict[str, Any] = field(default_factory=dict)
    rulesets: RulesetTable = field(default_factory=RulesetTable)

    def to_json(self) -> Any:
        """The JSON value to write; the object layout stores each dynamic ruleset once,
        in the table, in the order the records first name them.

        The reference's list layout has nowhere to put a table, so it keeps them inline.
        A report in memory that carries its rules inline (built by older code) is
        stored by reference like the rest. ``records`` itself is never modified.
        """
        if self.layout == "list":
            return [inlined(record, self.rulesets) for record in self.records]
        records = [to_reference(record, self.rulesets) for record in self.records]
        named = (reference_of(record) for record in records)
        return {
            **self.extra,
            "schema_version": RESULTS_SCHEMA_VERSION,
            "run_id": self.run_id,
            "t": self.t,
            "manifest": self.manifest,
            "records": records,
            DYNAMIC_RULESETS_KEY: self.rulesets.to_json(
                ref for ref in named if ref is not None and ref in self.rulesets
            ),
        }

    def non_object_positions(self) -> list[int]:
        return [i for i, r in enumerate(self.records) if not isinstance(r, dict)]


def dumps(data: Any) -> str:
    """Stable, strict JSON text: two-space indent, UTF-8 kept, trailing newline.

    Strict: ``NaN`` and ``Infinity`` raise ``ValueError`` rather than being written
    as bare tokens strict readers reject (records are sanitised before they get here).

    A results document's ``dynamic_rulesets`` table goes last, one rule (and one set)
    per line: indenting thousands of small rule objects field by field is slow to write
    and long to read.
    """
    if isinstance(data, dict):
        table = data.get(DYNAMIC_RULESETS_KEY)
        if (
            isinstance(table, dict)
            and set(table) == {"rules", "sets"}
            and isinstance(table["rules"], list)
            and isinstance(table["sets"], dict)
            and table["rules"]
        ):
            head = {key: value for key, value in data.items() if key != DYNAMIC_RULESETS_KEY}
            text = (
                json.dumps(head, indent=2, ensure_ascii=False, allow_nan=False)[:-2]
                if head
                else "{"
            )
            separator = ",\n" if head else "\n"
            key = json.dumps(DYNAMIC_RULESETS_KEY)
            return f"{text}{separator}  {key}: {_table_text(table)}\n}}\n"
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _table_text(table: dict[str, Any]) -> str:
    rules = ",\n".join("      " + json.dumps(rule, ensure_ascii=False) for rule in table["rules"])
    sets = ",\n".join(
        f"      {json.dumps(key, ensure_ascii=False)}: {json.dumps(spans)}"
        for key, spans in table["sets"].items()
    )
    sets_text = "{\n" + sets + "\n    }" if sets else "{}"
    return f'{{\n    "rules": [\n{rules}\n    ],\n    "sets": {sets_text}\n  }}'


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
    except RecursionError:
        raise ResultsFileError(path, "JSON nested too deeply to read") from None
    except ValueError as exc:
        # Valid syntax past the decoder's limits (an integer of over 4300 digits).
        raise ResultsFileError(
            path, f"JSON beyond what can be read ({str(exc).split(';')[0]})"
        ) from None


def read_results(path: Path) -> ResultsDocument:
    """Read a results.json in either layout (see module doc)."""
    data = read_json(path)
    if isinstance(data, list):
        inline = RulesetTable()
        return ResultsDocument(records=_at_the_edge(data, inline), layout="list", rulesets=inline)
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
    schema = data.get("schema_version")
    if isinstance(schema, int) and not isinstance(schema, bool) and schema > RESULTS_SCHEMA_VERSION:
        raise ResultsFileError(
            path,
            f"schema_version {schema} is newer than this benchguard reads "
            f"(up to {RESULTS_SCHEMA_VERSION}); upgrade benchguard",
        )
    table = data.get(DYNAMIC_RULESETS_KEY)
    if table is not None and not (
        isinstance(table, dict)
        and isinstance(table.get("rules"), list)
        and isinstance(table.get("sets"), dict)
    ):
        raise ResultsFileError(
            path,
            f"the '{DYNAMIC_RULESETS_KEY}' field is not an object with a 'rules' list and "
            "a 'sets' object",
        )
    # The edge (benchguard.record.edge): a hand-edited or foreign file may hold lone
    # surrogates, NaN or runaway nesting, which must never reach a writer. Records are
    # made safe, and the table once; a report that carries its rules inline (schema 1)
    # has them moved into the table.
    rulesets = RulesetTable.from_json(sanitize_json(table) if table is not None else None)
    records = _at_the_edge(records, rulesets)
    problems = [
        (index, problem)
        for index, record in enumerate(records)
        if (problem := unresolved_reference(record, rulesets)) is not None
    ]
    if problems:
        # Rescanning such a record without its leftover rules could clear a cheat.
        index, message = problems[0]
        more = f" (+{len(problems) - 1} more records)" if len(problems) > 1 else ""
        raise ResultsFileError(path, f"records[{index}]: {message}{more}")
    run_id, t = data.get("run_id"), data.get("t")
    known = {"schema_version", "run_id", "t", "manifest", "records", DYNAMIC_RULESETS_KEY}
    return ResultsDocument(
        records=records,
        run_id=run_id if isinstance(run_id, str) else None,
        t=t if isinstance(t, str) else None,
        manifest=manifest,
        layout="object",
        extra={k: v for k, v in data.items() if k not in known},
        rulesets=rulesets,
    )


def _at_the_edge(records: list[Any], rulesets: RulesetTable) -> list[Any]:
    """Each record object made JSON-safe (``record.edge.sanitized_record_dict``: a clean
    file reads back exactly as written) and its inline dynamic rules, if any, moved into
    ``rulesets``; anything else left for the caller to report."""
    return [
        to_reference(sanitized_record_dict(r), rulesets) if isinstance(r, dict) else r
        for r in records
    ]


def write_text_atomic(path: Path, text: str) -> None:
    """Write one file via a temporary file and a rename."""
    write_files_atomic({path: text})


def _placement(target: Path) -> tuple[Path, bool]:
    """Where ``target``'s text goes, and whether it is written in place: through a
    symbolic link, its target is renamed over (the link stays a link); a target that
    exists and is no regular file (``/dev/null``, ``/dev/stdout``, a FIFO) is written
    into, never renamed over: a rename would replace the device with a file (as root,
    ``-o /dev/null`` turned the machine's /dev/null into a regular file)."""
    real = Path(os.path.realpath(target)) if target.is_symlink() else target
    try:
        mode = real.stat().st_mode
    except FileNotFoundError:
        return real, False
    if stat.S_ISDIR(mode):  # would fail only at rename time, after other files moved
        raise IsADirectoryError(21, "is a directory", str(target))
    return real, not stat.S_ISREG(mode)


def write_files_atomic(files: Mapping[Path, str]) -> None:
    """Stage every file next to its target, then rename them all into place; a target
    that is a device or a FIFO is written into directly, after the others are staged.

    If staging any file fails, no target is touched and the temporary files are removed.
    """
    staged: list[tuple[Path, Path]] = []
    direct: list[tuple[Path, str]] = []
    try:
        for named, text in files.items():
            target, in_place = _placement(named)
            if in_place:
                direct.append((target, text))
                continue
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
    for target, text in direct:
        with open(target, "w", encoding="utf-8") as handle:
            handle.write(text)
