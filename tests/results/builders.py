"""Small hand-written records for the results tests."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchguard.detection.models import CheatingReport, Rule
from benchguard.engines import scan_records
from benchguard.record.codec import ResultsDocument
from benchguard.results.dismissals import Dismissal
from benchguard.results.rescore import RescoreOutcome, rescan_documents, rescore_records
from benchguard.results.rows import Manifest, setup_id_for


def finding(rule: str, category: str, field: str = "args", index: int | None = 0) -> dict[str, Any]:
    return {
        "rule": rule,
        "category": category,
        "material": f"{category} material",
        "evidence": "the path",
        "severity": "high",
        "pattern": "x",
        "field": field,
        "trajectory_index": index,
        "tool": "exec" if index is not None else None,
        "excerpt": "cat ~/secret-answer-key.md",
    }


def report(status: str, *findings: dict[str, Any]) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "detector_version": 1,
        "status": status,
        "categories": sorted({f["category"] for f in findings}),
        "findings": list(findings),
    }


def record(
    folder: str,
    iteration: int = 0,
    *,
    scores: dict[str, Any] | None = None,
    cheating_report: Any = None,
    **extra: Any,
) -> dict[str, Any]:
    return {
        "name": folder.replace("-", " ").title(),
        "folder": folder,
        "iteration": iteration,
        "status": "success",
        "validated": True,
        "scores": scores if scores is not None else {},
        "cheating_report": cheating_report if cheating_report is not None else {},
        "verification_report": [],
        "integrity_checked": cheating_report is not None and cheating_report != {},
        "sandboxed": False,
        **extra,
    }


def manifest(
    model: str = "model-a", harness: str = "scripted", t: str = "2026-01-01T00:00:00Z"
) -> Manifest:
    return Manifest(
        run_id="run_20260101_000000_1",
        t=t,
        setup_id=setup_id_for(model, harness),
        model=model,
        harness=harness,
    )


def rescore(
    records: list[Any],
    rules: Sequence[Rule],
    *,
    dismissals: Sequence[Dismissal] = (),
    run_id: str | None = None,
) -> RescoreOutcome:
    """Rescore ``records`` in place as ``benchguard score`` does: one batch rescan
    through the serial engine, then dismissals, the gate and finalizing."""
    (verdicts,) = rescan_documents([ResultsDocument(records=records)], rules, _serial_scan)
    return rescore_records(records, verdicts=verdicts, dismissals=dismissals, run_id=run_id)


def _serial_scan(
    records: Sequence[Mapping[str, Any]],
    rules: Sequence[Rule],
    dynamic_rules: Sequence[Sequence[Rule]],
) -> list[CheatingReport]:
    return scan_records(records, rules, dynamic_rules=dynamic_rules)
