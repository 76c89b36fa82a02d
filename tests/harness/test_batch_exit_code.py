"""The batch's exit code when a stop cut a run: the stop's own damage is exit 3, a
finding is exit 1.

The records are scanned by the real detector (the one ``benchguard run`` uses), so the
reports carry the shapes a run's really do: an audit whose log the stop cut is
``complete: false`` and the report is flagged ``scan-incomplete``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchguard.detection.rules import load_ruleset
from benchguard.engines import scan_records
from benchguard.errors import EXIT_FINDINGS, EXIT_INCOMPLETE
from benchguard.harness.batch import BatchResult
from benchguard.records import parse_record
from benchguard.results.rows import Manifest, build_rows

CUT_AUDIT: dict[str, Any] = {
    "tool": "strace",
    "complete": False,
    "incomplete_reason": "audit log missing (No such file or directory)",
    "events": 0,
    "protected_accesses": 0,
    "accesses": [],
}
READ_BEFORE_THE_STOP = {
    "path": "/srv/tasks/t00/expected/answer.txt",
    "operation": "opened",
    "result": "ok",
    "category": "benchmark-material",
    "material": "the task's expected output",
}


def _batch(status: str, audit: dict[str, Any]) -> BatchResult:
    raw = {
        "name": "t00",
        "folder": "t00",
        "iteration": 2,
        "status": status,
        "trajectory": [],
        "output": "",
        "system_audit": audit,
    }
    [report] = scan_records([raw], load_ruleset())
    raw["cheating_report"] = report.model_dump(mode="json")
    manifest = Manifest(run_id="run_x", t="2026-12-01T00:00:00Z", setup_id="s", planned_runs=1)
    if status == "interrupted":
        manifest = manifest.model_copy(update={"interrupted_by": "SIGTERM"})
    rows = build_rows([raw], manifest)
    return BatchResult(
        run_dir=Path("/nonexistent"),
        records=[parse_record(raw)],
        rows=rows,
        manifest=manifest,
        errors=[],
        interrupted_by=manifest.interrupted_by,
    )


def test_an_interrupted_run_whose_audit_the_stop_cut_is_incomplete_not_a_finding() -> None:
    """Guards against CI's flake: SIGTERM landed before strace wrote its log; the
    interrupted run's report was flagged scan-incomplete and the batch exited 1, as if
    a run had cheated. It stays flagged on its record (never read clean); the batch
    says incomplete."""
    batch = _batch("interrupted", CUT_AUDIT)
    assert batch.rows[0].integrity_status == "flagged"
    assert batch.exit_code == EXIT_INCOMPLETE


def test_a_finding_an_interrupted_run_recorded_still_wins() -> None:
    batch = _batch("interrupted", {**CUT_AUDIT, "accesses": [READ_BEFORE_THE_STOP]})
    assert batch.exit_code == EXIT_FINDINGS


@pytest.mark.parametrize("status", ["success", "error", "timeout"])
def test_an_incomplete_audit_on_a_run_the_stop_did_not_cut_is_a_finding(status: str) -> None:
    assert _batch(status, CUT_AUDIT).exit_code == EXIT_FINDINGS
