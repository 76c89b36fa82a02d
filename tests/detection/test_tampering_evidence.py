"""The harness's tampering mark on a record reaches the verdict and gates the run."""

from __future__ import annotations

from typing import Any

import pytest

from benchguard.detection.detector import scan_record
from benchguard.detection.harness_evidence import (
    TAMPERING_EVENTS,
    TAMPERING_INCOMPLETE_REASON,
    TAMPERING_KEY,
)
from benchguard.scoring.integrity import integrity_entry


def _record(mark: Any) -> dict[str, Any]:
    return {"trajectory": [], "output": "42", TAMPERING_KEY: mark}


@pytest.mark.parametrize("what", sorted(TAMPERING_EVENTS))
def test_each_tampering_event_is_a_gating_finding(what: str) -> None:
    """Guards against a write to what grades the run reading clean."""
    report = scan_record(
        _record({"complete": True, "events": [{"path": "tests/t.py", "what": what}]}), []
    )
    assert report.status == "flagged" and report.categories == ("tampering",)
    (finding,) = report.findings
    assert finding.source == "harness" and finding.field == "harness"
    assert finding.tool == what and finding.excerpt == "tests/t.py"
    entry = integrity_entry(report.model_dump(mode="json"))
    assert entry is not None and entry["score"] == 0.0


def test_no_events_and_complete_digests_keep_a_record_clean() -> None:
    report = scan_record(_record({"complete": True, "events": []}), [])
    assert report.status == "clean"


@pytest.mark.parametrize(
    "mark",
    [
        {"complete": False, "events": []},
        {"complete": True, "events": [{"path": "x", "what": "made-up"}]},
        {"complete": True, "events": "not a list"},
        "garbled",
    ],
)
def test_unfinished_or_unreadable_digests_are_incomplete_never_clean(mark: Any) -> None:
    """Guards against a capped or garbled tampering mark reading as no tampering."""
    report = scan_record(_record(mark), [])
    assert report.status == "flagged" and report.incomplete
    assert TAMPERING_INCOMPLETE_REASON in (report.incomplete_reason or "")


def test_a_record_without_the_mark_is_read_as_before() -> None:
    report = scan_record({"trajectory": [], "output": "42"}, [])
    assert report.status == "clean"
