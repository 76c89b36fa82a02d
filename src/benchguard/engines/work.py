"""The units of work every engine runs: scan one record, scan one file.

Both are top-level functions over picklable values so a process pool (dask's
processes scheduler, a distributed cluster) can run them; both never raise, so one
bad record or file cannot take its neighbours down with it.

A file's records are scanned with the static rules plus the dynamic (inventory) rules
each record's stored report was scanned with, the same rules ``benchguard score``
rescans with: a cheat the harness caught through a leftover file stays flagged. A
record whose stored dynamic rules cannot be read is scanned with the static rules and
reported flagged and incomplete (fail closed), never clean.

What the user knows about a foreign log (``scan --material``, ``--repo``) travels as a
:class:`RecordKnowledge`: it adds rules for each record (the material's fingerprints)
and resolves each record's report with the record in hand (its hashes and dates
against the real history), in the worker that read the record.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict

from benchguard.detection.detector import DEFAULT_RECORD_BUDGET_S, DETECTOR_VERSION, Detector
from benchguard.detection.models import SCAN_INCOMPLETE_CATEGORY, CheatingReport, Rule
from benchguard.importers.registry import UnknownFormatError, stream_path
from benchguard.importers.transcript import UnreadableLogError
from benchguard.record.rules import ScanRulesets, as_ruleset
from benchguard.record.rulesets import RulesetTable, stored_rules
from benchguard.record.run import record_iteration, record_task_folder


class RecordKnowledge(Protocol):
    """Per-record knowledge a file scan applies (picklable, for a process pool)."""

    def rules_for(self, record: Mapping[str, Any]) -> Sequence[Rule]:
        """Dynamic rules appended for this record."""
        ...

    def resolve(
        self, record: Mapping[str, Any], label: str, report: CheatingReport
    ) -> CheatingReport:
        """The record's report, resolved with what is known."""
        ...


class RecordScan(BaseModel):
    """One record's verdict, with where the record sits in its file.

    ``task`` and ``iteration`` are what a reviewed dismissal names (the record's folder,
    else its name; its iteration, else 0); ``label`` is how output names the record:
    ``folder#iteration`` for a harness run, the log's own name for an imported one;
    ``line`` is the 1-based line of a one-record-per-line log, else None.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    index: int
    name: str | None
    report: CheatingReport
    task: str = "unknown"
    iteration: int = 0
    label: str = ""
    line: int | None = None


class FileScan(BaseModel):
    """One file's verdicts; ``error`` is set when the file as a whole could not be read,
    ``problems`` name the entries inside it that were skipped."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    format: str | None = None
    records: tuple[RecordScan, ...] = ()
    problems: tuple[str, ...] = ()
    error: str | None = None
    error_kind: Literal["unknown-format", "unreadable"] | None = None
    bytes: int = 0


@functools.cache
def worker_detector() -> Detector:
    """This process's detector, for units of work that were given none.

    A process-wide one on purpose: a dask worker process runs task after task of one
    scan, and only the process outlives a task, so the compiled plans (a few ms per
    ruleset) live with it rather than being rebuilt per file. Nothing else reads it;
    the serial engine passes a detector of its own, made per scan.
    """
    return Detector()


def scan_one_record(
    record: Mapping[str, Any],
    rules: Sequence[Rule],
    dynamic_rules: Sequence[Rule] = (),
    time_budget_s: float = DEFAULT_RECORD_BUDGET_S,
    detector: Detector | None = None,
) -> CheatingReport:
    """The detector's verdict; an unexpected failure is a flagged, incomplete report."""
    try:
        return (detector if detector is not None else worker_detector()).scan(
            record, ScanRulesets.of(rules, dynamic_rules), time_budget_s=time_budget_s
        )
    except Exception as exc:  # fail closed: a scan that did not finish never reads clean
        return CheatingReport(
            detector_version=DETECTOR_VERSION,
            status="flagged",
            categories=(SCAN_INCOMPLETE_CATEGORY,),
            incomplete=True,
            incomplete_reason=f"scan failed: {type(exc).__name__}: {exc}",
        )


def scan_one_file(
    path: str,
    rules: Sequence[Rule],
    format_name: str | None = None,
    time_budget_s: float = DEFAULT_RECORD_BUDGET_S,
    knowledge: RecordKnowledge | None = None,
    detector: Detector | None = None,
) -> FileScan:
    """Import one file (by content, or ``format_name``) and scan each record in it.

    Records are scanned as they are read (:func:`stream_path`): only one imported record
    is held at a time. A file found unreadable before any record was read is an error,
    as a whole; after, what was read stands and the rest is a problem (fail closed
    either way: neither reads clean)."""
    file_path = Path(path)
    rules = as_ruleset(rules)  # one digest for every record of the file
    detector = detector if detector is not None else worker_detector()
    scans: list[RecordScan] = []
    try:
        size = file_path.stat().st_size
        stream = stream_path(file_path, format_name)
        for index, record in enumerate(stream.records):
            # The file's table of stored rulesets (each parsed once, when first named).
            scans.append(
                _scan_in_file(
                    record, index, rules, time_budget_s, stream.rulesets, knowledge, detector
                )
            )
    except UnknownFormatError as exc:
        return FileScan(path=path, error=str(exc), error_kind="unknown-format")
    except (UnreadableLogError, OSError, ValueError, RecursionError) as exc:
        error = (
            f"{path}: JSON nested too deeply to read"
            if isinstance(exc, RecursionError)
            else _describe(exc, path)
        )
        if not scans:
            return FileScan(path=path, error=error, error_kind="unreadable")
        stream.problems.append(f"{error}; the rest of the file is not read")
    return FileScan(
        path=path,
        format=stream.format,
        records=tuple(scans),
        problems=tuple(stream.problems),
        bytes=size,
    )


def _scan_in_file(
    record: Mapping[str, Any],
    index: int,
    rules: Sequence[Rule],
    time_budget_s: float,
    rulesets: RulesetTable,
    knowledge: RecordKnowledge | None = None,
    detector: Detector | None = None,
) -> RecordScan:
    label = record_label(record, index)
    task = record_task_folder(record)
    extra = tuple(knowledge.rules_for(record)) if knowledge is not None else ()
    report = _scan_stored_record(record, rules, time_budget_s, rulesets, extra, detector)
    if knowledge is not None:
        report = knowledge.resolve(record, f"{label} {task}", report)
    return RecordScan(
        index=index,
        name=_record_name(record),
        report=report,
        task=task,
        iteration=record_iteration(record),
        label=label,
        line=_record_line(record),
    )


def _scan_stored_record(
    record: Mapping[str, Any],
    rules: Sequence[Rule],
    time_budget_s: float,
    rulesets: RulesetTable,
    extra: tuple[Rule, ...] = (),
    detector: Detector | None = None,
) -> CheatingReport:
    """The verdict with the record's stored dynamic rules (none for a foreign log),
    then ``extra`` (what the user knows: the material's fingerprints)."""
    try:
        dynamic_rules = stored_rules(record, rulesets)
    except ValueError as exc:
        report = scan_one_record(record, rules, extra, time_budget_s, detector)
        return _without_stored_rules(report, str(exc))
    return scan_one_record(record, rules, (*dynamic_rules, *extra), time_budget_s, detector)


def _without_stored_rules(report: CheatingReport, problem: str) -> CheatingReport:
    """``report`` (a static-only scan) marked flagged and incomplete: the rules the
    harness generated for this record are missing, so a clean result would be a guess.

    ``problem`` is our own message from ``stored_rules`` (a rule's position and
    pydantic's message), never a pattern.
    """
    note = f"the stored report's dynamic rules cannot be read ({problem}); scanned with the static rules only"
    if report.incomplete_reason:
        note = f"{note}; {report.incomplete_reason}"
    return CheatingReport.model_validate(
        {
            **report.model_dump(),
            "status": "flagged",
            "categories": sorted({*report.categories, SCAN_INCOMPLETE_CATEGORY}),
            "incomplete": True,
            "incomplete_reason": note,
        }
    )


def record_label(record: Mapping[str, Any], index: int) -> str:
    """``folder#iteration`` for a harness record (its task title is not unique, its
    folder and iteration are); else the log's own name for it; else ``#index``."""
    folder = record.get("folder")
    if isinstance(folder, str) and folder:
        return f"{folder}#{record_iteration(record)}"
    return _record_name(record) or f"#{index}"


def _record_line(record: Mapping[str, Any]) -> int | None:
    source = record.get("source")
    line = source.get("line") if isinstance(source, Mapping) else None
    return line if isinstance(line, int) and not isinstance(line, bool) and line >= 1 else None


def _record_name(record: Mapping[str, Any]) -> str | None:
    name = record.get("name")
    return name if isinstance(name, str) else None


def _describe(exc: Exception, path: str) -> str:
    text = str(exc)
    if isinstance(exc, OSError) and exc.strerror:
        text = f"cannot read ({exc.strerror})"
    return text if path in text else f"{path}: {text}"
