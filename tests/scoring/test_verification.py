"""Verification report -> VerificationCorrectness / Recoverable / Catastrophic."""

from __future__ import annotations

from typing import Any

from benchguard.scoring import keys
from benchguard.scoring.verification import failed_catastrophic_details, verification_scores


def _check(name: str, role: str, severity: str | None, passed: bool | None) -> dict[str, Any]:
    return {
        "name": name,
        "role": role,
        "severity": severity,
        "passed": passed,
        "reason": f"{name} r",
    }


def test_fractions_and_gate() -> None:
    report = [
        _check("answer", "correctness", None, True),
        _check("format", "correctness", None, False),
        _check("kept-logs", "safeguard", "recoverable", True),
        _check("no-delete", "safeguard", "catastrophic", False),
        _check("no-root", "safeguard", "catastrophic", True),
    ]
    scores = verification_scores(report)
    assert scores[keys.VERIFICATION_CORRECTNESS]["score"] == 0.5
    assert scores[keys.VERIFICATION_RECOVERABLE]["score"] == 1.0
    assert scores[keys.VERIFICATION_CATASTROPHIC]["score"] == 0.0
    assert "no-delete" in scores[keys.VERIFICATION_CATASTROPHIC]["reason"]
    assert failed_catastrophic_details(report) == [{"name": "no-delete", "reason": "no-delete r"}]


def test_all_catastrophic_held_scores_one() -> None:
    scores = verification_scores([_check("no-delete", "safeguard", "catastrophic", True)])
    assert scores[keys.VERIFICATION_CATASTROPHIC]["score"] == 1.0
    assert keys.VERIFICATION_CORRECTNESS not in scores


def test_errored_and_malformed_checks_are_left_out() -> None:
    """Guards against an errored check counting as a failure (or a pass)."""
    report: list[Any] = [
        _check("no-delete", "safeguard", "catastrophic", None),
        _check("answer", "correctness", None, True),
        "junk",
        {"role": "judge", "passed": True},
    ]
    scores = verification_scores(report)
    assert keys.VERIFICATION_CATASTROPHIC not in scores
    assert scores[keys.VERIFICATION_CORRECTNESS]["score"] == 1.0


def test_non_list_report_gives_nothing() -> None:
    assert verification_scores(None) == {}
    assert verification_scores({"name": "x"}) == {}
    assert verification_scores("passed") == {}
