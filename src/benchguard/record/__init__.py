"""Every persisted shape of benchguard, at the bottom of the import graph.

One module per shape; nothing here imports another benchguard package but
``benchguard.errors`` (the import-graph test, tests/test_import_graph.py, holds it to
that):

- ``run``: the run record (:class:`RunRecord`), every field documented where declared;
- ``steps``: one tool call (:class:`Step`);
- ``evidence``: what a record carries beside its transcript (system audit, transcript
  problems, evidence sources); ``context``: the scan context (:class:`ScanContext`);
- ``report``: the cheating report and its findings, and :func:`stored_status`, the one
  fail-closed reading of a stored report;
- ``rules``: rules and rulesets (:class:`~benchguard.record.rules.Ruleset`) with their
  digest; ``rulesets``: the one table of rulesets by digest that reports name theirs in;
- ``scores``: score entries and the score keys;
- ``bounds``: every bound the edge enforces; ``edge``: the one lenient edge parser;
- ``codec``: the results-file codec, with the file names defined once.
"""

from __future__ import annotations

from benchguard.record.codec import (
    MANIFEST_FILE,
    RESULTS_FILE,
    RESULTS_SCHEMA_VERSION,
    ROWS_FILE,
    ResultsDocument,
    ResultsFileError,
    read_results,
)
from benchguard.record.context import ScanContext
from benchguard.record.edge import bounded_record_dict, parse_record, sanitize_json
from benchguard.record.evidence import SystemAudit, TranscriptProblem
from benchguard.record.report import (
    REPORT_SCHEMA_VERSION,
    CheatingReport,
    DismissedFinding,
    Finding,
    ScanCounts,
    stored_status,
)
from benchguard.record.rules import Rule, ruleset_digest
from benchguard.record.run import RunRecord, RunStatus
from benchguard.record.scores import CATASTROPHIC_SCORE_KEYS, ScoreEntry
from benchguard.record.steps import Step, StepStatus

__all__ = [
    "CATASTROPHIC_SCORE_KEYS",
    "MANIFEST_FILE",
    "REPORT_SCHEMA_VERSION",
    "RESULTS_FILE",
    "RESULTS_SCHEMA_VERSION",
    "ROWS_FILE",
    "CheatingReport",
    "DismissedFinding",
    "Finding",
    "ResultsDocument",
    "ResultsFileError",
    "Rule",
    "RunRecord",
    "RunStatus",
    "ScanContext",
    "ScanCounts",
    "ScoreEntry",
    "Step",
    "StepStatus",
    "SystemAudit",
    "TranscriptProblem",
    "bounded_record_dict",
    "parse_record",
    "read_results",
    "ruleset_digest",
    "sanitize_json",
    "stored_status",
]
