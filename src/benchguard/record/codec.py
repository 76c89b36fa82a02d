"""The results-file codec: results.json in and out, clear errors in, nothing half-written out.

The file names a run directory holds are defined here once (:data:`RESULTS_FILE`,
:data:`ROWS_FILE`, :data:`MANIFEST_FILE`).

``results.json`` is written as ``{"schema_version", "run_id", "t", "manifest",
"records", "dynamic_rulesets"}``; a plain JSON list of records (the reference's layout)
is read too, and a rewrite keeps the layout it was read in. Every write goes to a
temporary file in the target directory and is renamed into place; a batch of files is
staged completely before the first rename, so a failure leaves the old files untouched.

Schema 2 stores reports' ``dynamic_rules`` once per run, in the run-level
``dynamic_rulesets`` table: ``rules`` (every distinct rule once) and ``sets`` (each
distinct list, keyed by its ruleset digest, as ``[first, last]`` spans over ``rules``);
each report names its list with ``dynamic_rules_ref`` instead. With a home of a
thousand leftovers every record carries ~1,900 rules, nearly the same from record to
record, which would otherwise be most of the file. This is an on-disk shape only:
:func:`read_results` (and the results importer, through :func:`inflate_records`) puts
every list back, so in memory a report is a ``CheatingReport`` dump as before. Schema
1 files (rules inline) are read as they are. Schema 3 records are ``RunRecord`` dumps;
schema 4 adds each harness record's ``scan_context``.

Every record read is made JSON-safe first (``record.edge.sanitized_record_dict``: lone
surrogates, ``NaN``/``Infinity`` and runaway nesting replaced and noted in
``record_errors``), so nothing read can make a later strict write fail; a clean file
reads back exactly as it was written.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchguard.errors import BadInputError
from benchguard.record.edge import sanitize_json, sanitized_record_dict
from benchguard.record.report import REPORT_KEY

# The files of a run directory (and of ``benchguard score``'s output), named once.
RESULTS_FILE = "results.json"
ROWS_FILE = "rows.json"
MANIFEST_FILE = "manifest.json"
# ``benchguard aggregate``'s merged manifests.
MANIFESTS_FILE = "manifests.json"

# 3: records are ``records.RunRecord`` dumps (adds started_at, finished_at,
# record_errors and the "interrupted" status; strict JSON, no NaN). 4: harness records
# carry ``scan_context`` (detection.context), which rescans read. 1 to 3 still read.
RESULTS_SCHEMA_VERSION = 4
# Run-level table of dynamic rule lists (schema 2) and a report's reference into it.
DYNAMIC_RULESETS_KEY = "dynamic_rulesets"
DYNAMIC_RULES_REF_KEY = "dynamic_rules_ref"
DYNAMIC_RULES_KEY = "dynamic_rules"
_DYNAMIC_RULES_KEY = DYNAMIC_RULES_KEY
_REPORT_KEY = REPORT_KEY


class ResultsFileError(BadInputError, ValueError):
    """A results, rows or manifest file that cannot be used; the message names the file."""

    def __init__(self, path: Path | str, message: str) -> None:
        super().__init__(f"{path}: {message}", reason=message)
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
        """The JSON value to write; the object layout stores dynamic rules by reference.

        The reference's list layout has nowhere to put a table, so it keeps them inline.
        ``records`` itself is never modified.
        """
        if self.layout == "list":
            return self.records
        records, table = compact_records(self.records)
        return {
            **self.extra,
            "schema_version": RESULTS_SCHEMA_VERSION,
            "run_id": self.run_id,
            "t": self.t,
            "manifest": self.manifest,
            "records": records,
            DYNAMIC_RULESETS_KEY: table,
        }

    def non_object_positions(self) -> list[int]:
        return [i for i, r in enumerate(self.records) if not isinstance(r, dict)]


def compact_records(records: list[Any]) -> tuple[list[Any], dict[str, Any]]:
    """``records`` with each report's dynamic rules replaced by a reference, and the table.

    A report whose ``dynamic_rules`` is a non-empty list gets ``dynamic_rules_ref``
    (the list's digest: ``sha256:`` over the rules' canonical JSON, sorted keys and no
    spaces, in order; for rules dumped from ``Rule`` models it equals the detector's
    ruleset digest of the same rules) in the same position; anything
    else (no report, an empty list, a malformed report) is kept as it is. Records and
    reports that change are shallow copies; the input is not modified.
    """
    table = _RulesTable()
    compacted: list[Any] = []
    for record in records:
        report = record.get(_REPORT_KEY) if isinstance(record, dict) else None
        rules = report.get(_DYNAMIC_RULES_KEY) if isinstance(report, dict) else None
        if not isinstance(report, dict) or not isinstance(rules, list) or not rules:
            compacted.append(record)
            continue
        digest = table.add(rules)
        stored = {
            (DYNAMIC_RULES_REF_KEY if key == _DYNAMIC_RULES_KEY else key): (
                digest if key == _DYNAMIC_RULES_KEY else value
            )
            for key, value in report.items()
        }
        compacted.append({**record, _REPORT_KEY: stored})
    return compacted, table.to_json()


def inflate_records(
    records: list[Any], table: Any, expanded: dict[str, list[Any] | None] | None = None
) -> list[tuple[int, str]]:
    """Put each referenced list of dynamic rules back into its report, in place.

    Returns ``(position, message)`` for each record whose reference cannot be resolved
    (its report is left as stored); records without a reference are untouched. Records
    that name the same list share one list object, and lists share rule objects: treat
    stored rules as read-only.
    """
    problems: list[tuple[int, str]] = []
    rules = table.get("rules") if isinstance(table, dict) else None
    sets = table.get("sets") if isinstance(table, dict) else None
    # ``expanded`` may be kept across calls (a reader inflating one record at a time),
    # so records naming one list share it however they are read.
    expanded = {} if expanded is None else expanded
    for index, record in enumerate(records):
        report = record.get(_REPORT_KEY) if isinstance(record, dict) else None
        if not isinstance(report, dict) or DYNAMIC_RULES_REF_KEY not in report:
            continue
        ref = report[DYNAMIC_RULES_REF_KEY]
        resolved = None
        if isinstance(ref, str):
            if ref not in expanded:
                spans = sets.get(ref) if isinstance(sets, dict) else None
                expanded[ref] = _expand(spans, rules if isinstance(rules, list) else [])
            resolved = expanded[ref]
        if resolved is None:
            problems.append(
                (
                    index,
                    f"{_REPORT_KEY}.{DYNAMIC_RULES_REF_KEY} {ref!r} names no valid entry in "
                    f"the file's '{DYNAMIC_RULESETS_KEY}.sets' table",
                )
            )
            continue
        record[_REPORT_KEY] = {
            (_DYNAMIC_RULES_KEY if key == DYNAMIC_RULES_REF_KEY else key): (
                resolved if key == DYNAMIC_RULES_REF_KEY else value
            )
            for key, value in report.items()
        }
    return problems


def _expand(spans: Any, rules: list[Any]) -> list[Any] | None:
    """The rules a list of ``[first, last]`` spans names; ``None`` if any span is bad."""
    if not isinstance(spans, list) or not spans:
        return None
    out: list[Any] = []
    for span in spans:
        if (
            not isinstance(span, list)
            or len(span) != 2
            or not all(isinstance(i, int) and not isinstance(i, bool) for i in span)
            or not 0 <= span[0] <= span[1] < len(rules)
        ):
            return None
        out.extend(rules[span[0] : span[1] + 1])
    return out


class _RulesTable:
    """The run-level table being written: distinct rules once, each list as spans.

    Rule lists of one run overlap almost entirely (a home changes by an entry or two
    between tasks; prompt authorization drops a rule or two), so each list is stored as
    ``[first, last]`` spans over the table of distinct rules, in list order. Memos are
    keyed by object id, valid because the records holding the objects outlive the
    table; the detector gives records with the same rules the same objects, so a batch
    costs one encoding per distinct rule, not one per record.
    """

    def __init__(self) -> None:
        self.rules: list[Any] = []
        self.sets: dict[str, list[list[int]]] = {}
        self._position: dict[str, int] = {}
        self._rule_memo: dict[int, tuple[str, int]] = {}
        self._list_memo: dict[int, str] = {}

    def add(self, rules: list[Any]) -> str:
        digest = self._list_memo.get(id(rules))
        if digest is not None:
            return digest
        canonical: list[str] = []
        spans: list[list[int]] = []
        for rule in rules:
            text, position = self._rule(rule)
            canonical.append(text)
            if spans and spans[-1][1] + 1 == position:
                spans[-1][1] = position
            else:
                spans.append([position, position])
        body = "[" + ",".join(canonical) + "]"
        digest = "sha256:" + hashlib.sha256(body.encode("utf-8")).hexdigest()
        self.sets.setdefault(digest, spans)
        self._list_memo[id(rules)] = digest
        return digest

    def _rule(self, rule: Any) -> tuple[str, int]:
        memo = self._rule_memo.get(id(rule))
        if memo is None:
            text = json.dumps(rule, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
            position = self._position.get(text)
            if position is None:
                position = self._position[text] = len(self.rules)
                self.rules.append(rule)
            memo = self._rule_memo[id(rule)] = (text, position)
        return memo

    def to_json(self) -> dict[str, Any]:
        return {"rules": self.rules, "sets": self.sets}


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
        return ResultsDocument(records=_at_the_edge(data), layout="list")
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
    # made safe before their rule references are resolved, and the table once, so
    # records naming the same list still share it.
    records = _at_the_edge(records)
    if table is not None:
        table = sanitize_json(table)
    problems = inflate_records(records, table)
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
    )


def _at_the_edge(records: list[Any]) -> list[Any]:
    """Each record object made JSON-safe (``record.edge.sanitized_record_dict``: a clean
    file reads back exactly as written); anything else left for the caller to report."""
    return [sanitized_record_dict(r) if isinstance(r, dict) else r for r in records]


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
