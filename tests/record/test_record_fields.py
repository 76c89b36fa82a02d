"""The record declares its evidence fields, and keeps a malformed one as stored.

A harness record's ``evidence_sources``, ``system_audit``, ``checks_sandboxed`` and
``transcript_problem`` are fields of ``RunRecord``, not extras. Declaring them must
not weaken the fail-closed reading: a malformed audit or transcript mark is kept as it
was stored, so the detector still reads the scan as incomplete.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchguard.detection import scan_record
from benchguard.detection.rules import load_ruleset
from benchguard.record import RunRecord, SystemAudit, parse_record
from benchguard.record.evidence import system_audit_view

_STEP = {"name": "bash", "args": {"command": "ls"}, "result": "a.txt", "status": "completed"}


def _harness_record(**fields: Any) -> dict[str, Any]:
    return {
        "folder": "t",
        "status": "success",
        "trajectory": [_STEP],
        "evidence_sources": ["audit", "transcript"],
        "system_audit": {"tool": "strace", "complete": True, "events": 3, "accesses": []},
        "checks_sandboxed": True,
        **fields,
    }


def test_the_evidence_fields_are_declared_not_extras() -> None:
    record = parse_record(_harness_record(transcript_problem="tampered"))
    assert record.model_extra == {}
    assert record.evidence_sources == ["audit", "transcript"]
    assert record.checks_sandboxed is True and record.transcript_problem == "tampered"
    audit = system_audit_view(record.system_audit)
    assert isinstance(audit, SystemAudit) and audit.complete and audit.events == 3


def test_an_unset_transcript_problem_is_not_written() -> None:
    """Most records have none: the key appears only where the harness set it."""
    assert "transcript_problem" not in RunRecord().to_json()
    assert "transcript_problem" not in parse_record(_harness_record()).to_json()
    written = parse_record(_harness_record(transcript_problem="missing")).to_json()
    assert written["transcript_problem"] == "missing"


@pytest.mark.parametrize(
    "fields",
    [
        {"system_audit": "deleted by the agent"},
        {"system_audit": {"tool": "strace", "complete": True, "accesses": "x"}},
        {"system_audit": ["not", "a", "summary"]},
        {"transcript_problem": 7},
    ],
)
def test_a_malformed_evidence_mark_is_kept_and_reads_incomplete(fields: dict[str, Any]) -> None:
    """Guards against a typed field replacing a tampered audit (or transcript mark) by
    its default: "no audit" would let the record read clean."""
    record = parse_record(_harness_record(**fields))
    key, value = next(iter(fields.items()))
    assert getattr(record, key) == value
    report = scan_record(record.to_json(), load_ruleset())
    assert report.status == "flagged" and report.incomplete
