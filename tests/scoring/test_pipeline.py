"""score_records: judge, gate and finalizer applied per record, never aborting the batch."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchguard.scoring import keys
from benchguard.scoring.judge import NullJudge, judge_or_null
from benchguard.scoring.pipeline import SCORING_ERRORS_KEY, score_records


def _record(folder: str, scores: dict[str, Any], report: Any) -> dict[str, Any]:
    return {"folder": folder, "iteration": 0, "scores": scores, "cheating_report": report}


FLAGGED = {"status": "flagged", "categories": ["task-definition"], "findings": [{"rule": "r"}]}
CLEAN = {"status": "clean", "categories": [], "findings": []}


def test_batch_scores_each_record_and_survives_a_bad_one() -> None:
    """Guards against one malformed record aborting the whole batch."""
    records: list[Any] = [
        _record("honest", {keys.VERIFICATION_CORRECTNESS: 1.0}, CLEAN),
        _record("broken", {keys.VERIFICATION_CORRECTNESS: 4.0}, CLEAN),
        "not a record",
        _record("cheat", {keys.VERIFICATION_CORRECTNESS: 1.0}, FLAGGED),
    ]
    errors = score_records(records)
    assert records[0]["scores"][keys.OUTCOME_SCORE]["score"] == 1.0
    assert records[0]["scores"][keys.INTEGRITY_CATASTROPHIC]["score"] == 1.0
    assert keys.OUTCOME_SCORE not in records[1]["scores"]
    assert records[1][SCORING_ERRORS_KEY] and "outside [0, 1]" in records[1][SCORING_ERRORS_KEY][0]
    assert records[3]["scores"][keys.OUTCOME_SCORE]["score"] == 0.0
    assert [e.split(":")[0] for e in errors] == ["record 1 (broken#0)", "record 2"]


def test_rescoring_removes_a_stale_gate() -> None:
    """A report that became no_data must not keep an old IntegrityCatastrophic."""
    record = _record("t", {keys.VERIFICATION_CORRECTNESS: 1.0}, FLAGGED)
    score_records([record])
    record["cheating_report"] = {"status": "no_data"}
    score_records([record])
    assert keys.INTEGRITY_CATASTROPHIC not in record["scores"]
    assert record["scores"][keys.OUTCOME_SCORE]["score"] == 1.0


def test_non_object_scores_are_replaced_and_reported() -> None:
    record = _record("t", "oops", FLAGGED)  # type: ignore[arg-type]
    errors = score_records([record])
    assert record["scores"][keys.OUTCOME_SCORE]["score"] == 0.0
    assert "scores was str" in errors[0]


class _CrashingJudge:
    name = "crashing"

    def judge(self, record: Mapping[str, Any]) -> Mapping[str, Any]:
        raise RuntimeError("provider down")


class _OverreachingJudge:
    name = "overreaching"

    def judge(self, record: Mapping[str, Any]) -> Mapping[str, Any]:
        return {keys.INTEGRITY_CATASTROPHIC: 1.0, keys.JUDGED_CORRECTNESS: 0.5}


def test_a_crashing_judge_leaves_the_gates_in_force() -> None:
    """Guards against a judge failure aborting scoring and with it the deterministic gates."""
    record = _record("cheat", {keys.VERIFICATION_CORRECTNESS: 1.0}, FLAGGED)
    errors = score_records([record], judge=_CrashingJudge())
    assert record["scores"][keys.OUTCOME_SCORE]["score"] == 0.0
    assert "provider down" in errors[0]


def test_a_judge_cannot_write_a_gate() -> None:
    """Guards against a model-backed judge overriding a deterministic gate."""
    record = _record("cheat", {}, FLAGGED)
    errors = score_records([record], judge=_OverreachingJudge())
    assert record["scores"][keys.INTEGRITY_CATASTROPHIC]["score"] == 0.0
    assert record["scores"][keys.JUDGED_CORRECTNESS] == 0.5
    assert record["scores"][keys.OUTCOME_SCORE]["score"] == 0.0
    assert any("may not write IntegrityCatastrophic" in e for e in errors)


def test_unbuildable_judge_falls_back_to_null_and_still_gates() -> None:
    """Guards against a bad provider or missing key sinking scoring for the batch."""
    cases: tuple[tuple[str, dict[str, str]], ...] = (("nonsense", {}), ("openai", {}))
    for provider, env in cases:
        judge, why = judge_or_null(provider, env)
        assert isinstance(judge, NullJudge)
        assert why is not None and "deterministic gates still apply" in why
        record = _record("cheat", {keys.VERIFICATION_CORRECTNESS: 1.0}, FLAGGED)
        assert score_records([record], judge=judge) == []
        assert record["scores"][keys.OUTCOME_SCORE]["score"] == 0.0
