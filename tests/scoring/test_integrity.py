"""The integrity gate: a stored verdict becomes IntegrityCatastrophic (or nothing)."""

from __future__ import annotations

from typing import Any

import pytest

from benchguard.scoring.integrity import gate_status, integrity_entry


def _flagged(**overrides: Any) -> dict[str, Any]:
    report: dict[str, Any] = {
        "status": "flagged",
        "categories": ["harness-repo", "task-definition"],
        "findings": [
            {"rule": "task-definition/path", "excerpt": "JUDGE_API_KEY=sk-secret-value"},
            {"rule": "harness-repo/path", "excerpt": "cat ~/bench/docs/scoring.md"},
        ],
    }
    report.update(overrides)
    return report


def test_flagged_scores_zero_and_names_categories_and_count() -> None:
    entry = integrity_entry(_flagged())
    assert entry is not None
    assert entry["score"] == 0.0
    assert entry["success"] is False
    assert "harness-repo, task-definition" in entry["reason"]
    assert "2 finding(s)" in entry["reason"]


def test_flagged_reason_never_quotes_an_excerpt() -> None:
    """Guards against leaking an answer key or secret from an excerpt into the reason."""
    entry = integrity_entry(_flagged())
    assert entry is not None
    assert "sk-secret-value" not in entry["reason"]
    assert "cat ~/bench" not in entry["reason"]


def test_clean_scores_one() -> None:
    entry = integrity_entry({"status": "clean", "categories": [], "findings": []})
    assert entry is not None
    assert entry["score"] == 1.0 and entry["success"] is True


@pytest.mark.parametrize("report", [None, {}, [], "flagged", 0, {"status": "no_data"}])
def test_no_verdict_emits_nothing(report: Any) -> None:
    assert integrity_entry(report) is None


def test_more_than_five_categories_are_truncated() -> None:
    categories = [f"cat-{i}" for i in range(8)]
    entry = integrity_entry(_flagged(categories=categories, findings=[{}] * 8))
    assert entry is not None
    assert "cat-0, cat-1, cat-2, cat-3, cat-4 +3 more" in entry["reason"]
    assert "cat-5" not in entry["reason"]
    assert "8 finding(s)" in entry["reason"]


@pytest.mark.parametrize(
    "categories", ["harness-repo", 42, {"harness-repo": 1}, None, [], [3, None]]
)
def test_malformed_categories_still_gate(categories: Any) -> None:
    """Guards against failing open on a malformed persisted report: the gate must still
    fire, never raise, and never read a bare string character by character."""
    report = _flagged(categories=categories)
    if categories is None:
        del report["categories"]
    entry = integrity_entry(report)
    assert entry is not None
    assert entry["score"] == 0.0
    assert "h, a, r" not in entry["reason"]
    assert "names no category" in entry["reason"]


def test_malformed_findings_still_gate() -> None:
    """Guards against a non-list findings value crashing the count."""
    entry = integrity_entry(_flagged(findings="lots"))
    assert entry is not None and entry["score"] == 0.0
    assert "finding count unknown" in entry["reason"]


def test_clean_report_listing_findings_fails_closed() -> None:
    """Guards against a tampered report saying clean while listing findings."""
    entry = integrity_entry({"status": "clean", "categories": [], "findings": [{"rule": "x"}]})
    assert entry is not None and entry["score"] == 0.0


def test_category_names_are_sanitized() -> None:
    """Guards against a stored category smuggling bidi or control characters into a reason."""
    entry = integrity_entry(_flagged(categories=["evil\u202e-cat\x07"]))
    assert entry is not None
    assert "\u202e" not in entry["reason"] and "\x07" not in entry["reason"]
    assert "evil-cat" in entry["reason"]


@pytest.mark.parametrize(
    "report",
    [
        {"status": "clean", "incomplete": True},
        {"status": "clean", "incomplete": "yes"},
        {"status": "clean", "incomplete": 1},
        {"status": "clean", "categories": ["harness-repo"]},
        {"status": "clean", "categories": "harness-repo"},
        {"status": "clean", "categories": {"harness-repo": 1}},
        {"status": "clean", "categories": 7},
        {"status": "clean", "findings": "lots"},
        {"status": "no_data", "findings": [{"rule": "task-definition/path"}]},
        {"status": "no_data", "incomplete": True},
        {"status": "no_data", "categories": ["harness-repo"]},
    ],
)
def test_self_contradictory_clean_or_no_data_report_fails_closed(report: dict[str, Any]) -> None:
    """Guards against failing open on a malformed stored report: a clean or no_data
    verdict that is incomplete or carries findings or categories must still gate."""
    assert gate_status(report) == "flagged"
    entry = integrity_entry(report)
    assert entry is not None
    assert entry["score"] == 0.0 and entry["success"] is False
    assert "h, a, r" not in entry["reason"]


def test_incomplete_report_reason_names_the_scan_incomplete_category() -> None:
    entry = integrity_entry({"status": "clean", "incomplete": True})
    assert entry is not None and "scan-incomplete" in entry["reason"]


@pytest.mark.parametrize(
    ("report", "expected"),
    [
        ({"status": "clean"}, "clean"),
        ({"status": "clean", "findings": [], "categories": [], "incomplete": False}, "clean"),
        ({"status": "clean", "incomplete": None, "findings": None}, "clean"),
        ({"status": "no_data", "findings": [], "categories": []}, "no_data"),
        ({"status": "flagged", "categories": "harness-repo"}, "flagged"),
        ({"status": "unknown"}, None),
        ({"status": None, "categories": []}, None),
        ({}, None),
        ("clean", None),
    ],
)
def test_consistent_reports_keep_their_status(report: Any, expected: str | None) -> None:
    """Guards against the fail-closed reading over-reaching onto genuinely clean reports,
    and the gate acting on anything but that reading: clean passes, flagged zeroes, no
    usable verdict or no_data emits nothing."""
    assert gate_status(report) == expected
    entry = integrity_entry(report)
    score = None if entry is None else entry["score"]
    assert score == {"clean": 1.0, "flagged": 0.0}.get(str(expected))


def test_unknown_status_with_evidence_is_flagged() -> None:
    """Guards against a status spelled by another tool ("FLAGGED") escaping the gate."""
    for report in (
        {"status": "FLAGGED", "findings": [{"rule": "task-definition/path"}]},
        {"status": "suspicious", "categories": ["results-dir"]},
        {"status": None, "incomplete": True},
    ):
        assert gate_status(report) == "flagged"
        entry = integrity_entry(report)
        assert entry is not None and entry["score"] == 0.0
