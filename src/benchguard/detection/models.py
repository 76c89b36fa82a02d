"""Compatibility re-exports: the detection layer's shapes live in ``benchguard.record``.

Import from ``benchguard.record`` (``record.rules``, ``record.report``) in new code;
these names stay so existing imports keep working.
"""

from __future__ import annotations

from benchguard.record.report import (
    REPORT_SCHEMA_VERSION,
    SCAN_INCOMPLETE_CATEGORY,
    CheatingReport,
    DismissedFinding,
    Finding,
    FindingField,
    FindingSource,
    ReportStatus,
    ScanCounts,
    status_for,
)
from benchguard.record.rules import (
    GATING_STRENGTHS,
    SCAN_FIELDS,
    STRENGTHS,
    Rule,
    ScanField,
    Severity,
    Strength,
)

__all__ = [
    "GATING_STRENGTHS",
    "REPORT_SCHEMA_VERSION",
    "SCAN_FIELDS",
    "SCAN_INCOMPLETE_CATEGORY",
    "STRENGTHS",
    "CheatingReport",
    "DismissedFinding",
    "Finding",
    "FindingField",
    "FindingSource",
    "ReportStatus",
    "Rule",
    "ScanCounts",
    "ScanField",
    "Severity",
    "Strength",
    "status_for",
]
