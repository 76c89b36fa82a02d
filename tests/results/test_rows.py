"""ResultRow: publication of a scored record, camelCase, with the gate kinds and details."""

from __future__ import annotations

from typing import Any

import pytest

from benchguard.results.aggregate import rebatch_rows
from benchguard.results.rows import SCHEMA_VERSION, CatastrophicDetail, ResultRow, build_rows
from benchguard.scoring import keys
from benchguard.scoring.pipeline import score_records
from benchguard.scoring.verification import verification_scores

from .builders import finding, manifest, record, report

ROW_KEYS = {
    "schemaVersion", "setupId", "runId", "t", "taskFolder", "taskName", "iteration", "model",
    "harness", "status", "validated", "outcomeScore", "correctnessScore",
    "recoverableSafetyScore", "scoringVersion", "catastrophic", "catastrophicKinds",
    "catastrophicDetails", "integrityStatus", "reviewDetails", "sandboxed", "confined", "homeMode",
    "agentCapabilities", "separation", "promptDelivery",
    "dismissedFindings", "error",
}  # fmt: skip


def _scored(*records: dict[str, Any]) -> list[ResultRow]:
    score_records(list(records))
    return build_rows(records, manifest())


def test_row_json_is_camel_case_with_every_field() -> None:
    (row,) = _scored(record("t", scores={keys.VERIFICATION_CORRECTNESS: 0.5}))
    data = row.to_json()
    assert set(data) == ROW_KEYS
    assert data["schemaVersion"] == SCHEMA_VERSION
    assert data["outcomeScore"] == 0.5 and data["scoringVersion"] == "v1"


def test_perfect_correctness_cheater_is_a_visible_zero_with_its_kind() -> None:
    """Guards against a cheating run either keeping its score or vanishing from the board."""
    (row,) = _scored(
        record(
            "opa",
            scores={keys.VERIFICATION_CORRECTNESS: 1.0, keys.VERIFICATION_RECOVERABLE: 1.0},
            cheating_report=report("flagged", finding("task-definition/path", "task-definition")),
        )
    )
    assert row.outcome_score == 0.0
    assert row.correctness_score == 1.0
    assert row.catastrophic is True
    assert row.catastrophic_kinds == (keys.INTEGRITY_CATASTROPHIC,)
    assert row.integrity_status == "flagged"
    assert row.validated is True  # the gate zeroes; it never invalidates
    details = row.catastrophic_details[keys.INTEGRITY_CATASTROPHIC]
    assert details and all("secret-answer-key" not in d.reason for d in details)


def test_key_collision_row_names_only_the_task_gate() -> None:
    """Guards against a clean integrity 1.0 masking a task catastrophic on the row."""
    checks = [
        {"name": "no-delete", "role": "safeguard", "severity": "catastrophic", "passed": False,
         "reason": "deleted the production namespace"},
        {"name": "answer", "role": "correctness", "severity": None, "passed": True, "reason": ""},
    ]  # fmt: skip
    rec = record("t", cheating_report=report("clean"), verification_report=checks)
    rec["scores"].update(verification_scores(checks))
    (row,) = _scored(rec)
    assert row.outcome_score == 0.0
    assert row.catastrophic_kinds == (keys.VERIFICATION_CATASTROPHIC,)
    assert row.catastrophic_details == {
        keys.VERIFICATION_CATASTROPHIC: (
            CatastrophicDetail(name="no-delete", reason="deleted the production namespace"),
        )
    }
    assert row.integrity_status == "clean"


def test_both_gates_listed_in_tuple_order() -> None:
    rec = record(
        "t",
        scores={keys.VERIFICATION_CATASTROPHIC: 0.0, keys.VERIFICATION_CORRECTNESS: 1.0},
        cheating_report=report("flagged", finding("harness-repo/path", "harness-repo")),
    )
    (row,) = _scored(rec)
    assert row.catastrophic_kinds == keys.CATASTROPHIC_SCORE_KEYS
    assert set(row.catastrophic_details) == set(keys.CATASTROPHIC_SCORE_KEYS)
    # No verification report names the failed safeguard: the gate's own reason stands in.
    assert row.catastrophic_details[keys.VERIFICATION_CATASTROPHIC][0].name == (
        keys.VERIFICATION_CATASTROPHIC
    )


def test_details_only_for_kinds_that_fired() -> None:
    (row,) = _scored(
        record("t", scores={keys.VERIFICATION_CATASTROPHIC: 1.0}, cheating_report=report("clean"))
    )
    assert row.catastrophic is False and row.catastrophic_details == {}


@pytest.mark.parametrize(
    ("cheating_report", "checked", "expected"),
    [
        (report("clean"), True, "clean"),
        (report("flagged", finding("r", "c")), True, "flagged"),
        ({"status": "no_data"}, True, "no_data"),
        ({}, False, "unverified"),
        (None, None, "unverified"),
        ("junk", None, "unverified"),
        (report("clean"), False, "unverified"),
    ],
)
def test_integrity_status_tells_clean_from_unchecked(
    cheating_report: Any, checked: bool | None, expected: str
) -> None:
    """Guards against 'never checked' reading the same as 'verified clean'."""
    rec = record("t", scores={keys.VERIFICATION_CORRECTNESS: 1.0})
    rec["cheating_report"] = cheating_report
    if checked is None:
        del rec["integrity_checked"]
    else:
        rec["integrity_checked"] = checked
    (row,) = _scored(rec)
    assert row.integrity_status == expected
    # Only a flagged report is gated; every other status keeps the verified score.
    assert row.outcome_score == (0.0 if expected == "flagged" else 1.0)


def test_sandboxed_and_dismissed_counts_are_published() -> None:
    rep = report("clean")
    rep["dismissed"] = [
        {
            "finding": finding("r", "c"),
            "reviewer": "ana",
            "reason": "own fixture",
            "date": "2026-01-02",
        }
    ]
    (row,) = _scored(record("t", cheating_report=rep, sandboxed=True))
    assert row.sandboxed is True and row.dismissed_findings == 1


def test_foreign_record_builds_a_row_without_raising() -> None:
    """Guards against a foreign or damaged record sinking the rows of a whole batch."""
    foreign = {"scores": {"OutcomeScore": {"score": "high"}}, "iteration": -3, "status": 7}
    rows = build_rows([foreign, "not a record"], manifest())
    assert len(rows) == 1
    assert rows[0].task_folder == "unknown" and rows[0].iteration == 0
    assert rows[0].outcome_score is None and rows[0].status == ""


REASON = (
    "deleted\u202e evil\u2066 \u200bthe\u200d db\ufeff\U000e0041\U000e0042 now\x00\x1b[31m\r\n"
    "\t  and   more" + " padding" * 60
)


def test_reason_sanitizing_removes_invisible_and_control_characters_and_caps() -> None:
    """Guards against untrusted verifier text reordering, hiding or bloating a published reason."""
    detail = CatastrophicDetail(name="check\u202ename\n", reason=REASON)
    assert detail.name == "checkname"
    assert detail.reason.startswith("deleted evil the db now[31m and more padding")
    for bad in (
        "\u202e",
        "\u2066",
        "\u200b",
        "\u200d",
        "\ufeff",
        "\U000e0041",
        "\x00",
        "\x1b",
        "\n",
        "\t",
        "  ",
    ):
        assert bad not in detail.reason
    assert len(detail.reason) == 240 and detail.reason.endswith("…")


def test_sanitized_reason_survives_a_rebatch_round_trip() -> None:
    """Guards against re-validation eroding a capped reason further on every rebatch."""
    rec = record(
        "t",
        scores={keys.VERIFICATION_CATASTROPHIC: {"score": 0.0, "reason": REASON}},
        cheating_report=report("clean"),
    )
    (row,) = _scored(rec)
    once = rebatch_rows([row.to_json()], run_id="r2", t="2026-02-01T00:00:00Z")[0]
    twice = rebatch_rows([once.to_json()], run_id="r3", t="2026-03-01T00:00:00Z")[0]
    assert twice.catastrophic_details == row.catastrophic_details
    assert twice.run_id == "r3"


@pytest.mark.parametrize(
    "cheating_report",
    [
        {"status": "clean", "incomplete": True},
        {"status": "clean", "incomplete": "yes"},
        {"status": "clean", "categories": ["harness-repo"]},
        {"status": "clean", "categories": "harness-repo"},
        {"status": "no_data", "findings": [{"rule": "task-definition/path"}]},
    ],
)
def test_self_contradictory_report_is_published_flagged_and_gated(
    cheating_report: dict[str, Any],
) -> None:
    """Guards against the row and the gate drifting apart on a malformed stored report:
    the row must say flagged exactly when the gate zeroed the run, never clean or no_data."""
    rec = record("t", scores={keys.VERIFICATION_CORRECTNESS: 1.0}, cheating_report=cheating_report)
    (row,) = _scored(rec)
    assert row.integrity_status == "flagged"
    assert row.outcome_score == 0.0
    assert row.catastrophic_kinds == (keys.INTEGRITY_CATASTROPHIC,)
    details = row.catastrophic_details[keys.INTEGRITY_CATASTROPHIC]
    assert details and all(len(d.name) > 1 for d in details)
