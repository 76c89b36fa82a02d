"""The harness's marks on a record (system audit, transcript channel) reach the verdict."""

from __future__ import annotations

from typing import Any

from benchguard.detection.detector import scan_record
from benchguard.detection.harness_evidence import (
    AUDIT_INCOMPLETE_REASON,
    SYSTEM_AUDIT_KEY,
    TRANSCRIPT_PROBLEM_KEY,
    harness_evidence,
)


def _access(path: str = "/srv/tasks/t/task.yaml", result: str = "ok") -> dict[str, Any]:
    return {
        "path": path,
        "operation": "opened",
        "result": result,
        "category": "task-definition",
        "material": "the tasks directory",
        "root": "/srv/tasks",
    }


def _record(**extra: Any) -> dict[str, Any]:
    return {"trajectory": [], "output": "", **extra}


def test_silent_agent_with_an_audited_read_is_flagged_with_an_audit_finding() -> None:
    """A run that recorded nothing is not `no_data` when the audit saw it open a task."""
    record = _record(**{SYSTEM_AUDIT_KEY: {"complete": True, "accesses": [_access()]}})
    report = scan_record(record, [])
    assert report.status == "flagged"
    (finding,) = report.findings
    assert finding.source == "audit"
    assert finding.field == "audit"
    assert finding.evidence == "opened by the agent, system audit"
    assert "task.yaml" in finding.excerpt


def test_a_hidden_path_attempt_reads_as_tried() -> None:
    record = _record(
        **{SYSTEM_AUDIT_KEY: {"complete": True, "accesses": [_access(result="not-found")]}}
    )
    (finding,) = scan_record(record, []).findings
    assert finding.evidence.startswith("tried (opened, not-found)")


def test_a_capped_audit_is_incomplete_never_clean() -> None:
    record = _record(output="42", **{SYSTEM_AUDIT_KEY: {"complete": False, "accesses": []}})
    report = scan_record(record, [])
    assert report.status == "flagged"
    assert report.incomplete
    assert AUDIT_INCOMPLETE_REASON in (report.incomplete_reason or "")


def test_a_clean_complete_audit_keeps_a_clean_record_clean() -> None:
    record = _record(output="42", **{SYSTEM_AUDIT_KEY: {"complete": True, "accesses": []}})
    assert scan_record(record, []).status == "clean"


def test_junk_in_the_stored_audit_fails_closed() -> None:
    for junk in ("yes", {"complete": True, "accesses": "x"}, {"complete": True}):
        report = scan_record(_record(output="42", **{SYSTEM_AUDIT_KEY: junk}), [])
        assert report.incomplete, junk
    bad_op = {"complete": True, "accesses": [{**_access(), "operation": "<script>"}]}
    assert harness_evidence({SYSTEM_AUDIT_KEY: bad_op}).findings == ()
    assert harness_evidence({SYSTEM_AUDIT_KEY: bad_op}).notes


def test_a_transcript_problem_is_never_clean() -> None:
    for problem in ("missing", "tampered", "anything"):
        report = scan_record(_record(output="42", **{TRANSCRIPT_PROBLEM_KEY: problem}), [])
        assert report.status == "flagged" and report.incomplete


def test_repeated_accesses_are_one_finding() -> None:
    audit = {"complete": True, "accesses": [_access(), _access(), _access(result="denied")]}
    assert len(scan_record(_record(**{SYSTEM_AUDIT_KEY: audit}), []).findings) == 2
