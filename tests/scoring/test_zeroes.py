"""Every zero of a run is decided in ``scoring/zeroes.py``: the gate, no credit, a run
that failed while finishing, and a board's unverified runs. Each way is checked here
through the code that applies it, and no other module builds a zero outcome."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from benchguard.record import scores as keys
from benchguard.records import RunRecord
from benchguard.results.leaderboard import ranked_outcomes
from benchguard.results.rows import ResultRow
from benchguard.scoring import zeroes
from benchguard.scoring.judge import NullJudge
from benchguard.scoring.outcome import outcome_entry
from benchguard.scoring.pipeline import score_record

_PASSED = {"score": 1.0, "reason": "ok"}


def test_a_fired_gate_zeroes_the_outcome_whatever_the_correctness() -> None:
    scores = {keys.INTEGRITY_CATASTROPHIC: {"score": 0.0}, keys.VERIFICATION_CORRECTNESS: _PASSED}
    entry = outcome_entry(scores)
    assert entry is not None and entry["score"] == 0.0
    assert entry == zeroes.gated_entry(scores, keys.VERIFICATION_CORRECTNESS)
    assert entry["reason"] == "c=1.000, rec_v=n/a, cat_v=0 (IntegrityCatastrophic)"
    # An unreadable gate value fires (fail closed).
    assert zeroes.fired_catastrophic_keys({keys.VERIFICATION_CATASTROPHIC: "junk"})


def test_an_errored_or_interrupted_run_gets_no_credit_unless_gated() -> None:
    for status in ("error", "interrupted"):
        record: dict[str, Any] = {
            "status": status,
            "error": "",
            "scores": {keys.VERIFICATION_CORRECTNESS: _PASSED},
        }
        score_record(record, judge=NullJudge())
        outcome = record["scores"][keys.OUTCOME_SCORE]
        assert outcome["score"] == 0.0 and outcome["reason"] == f"no credit: run {status}"
    assert zeroes.no_credit_entry("success", None, {}) is None
    gated = {keys.INTEGRITY_CATASTROPHIC: {"score": 0.0}}
    assert zeroes.no_credit_entry("error", "boom", gated) is None


def test_a_run_that_failed_while_finishing_is_errored_with_no_credit() -> None:
    record = RunRecord(
        status="success",
        errors=["earlier"],
        scores={keys.OUTCOME_SCORE: {"score": 1.0, "reason": "c=1"}},
    )
    failed = zeroes.errored(record, "harness error while scoring: X")
    assert failed.status == "error" and failed.errors == [failed.error, "earlier"]
    assert failed.scores[keys.OUTCOME_SCORE]["score"] == 0.0
    assert record.scores[keys.OUTCOME_SCORE]["score"] == 1.0  # the input is not edited
    # A run with no outcome yet gets none (scoring will give it its zero).
    assert keys.OUTCOME_SCORE not in zeroes.errored(RunRecord(), "x").scores


def _row(integrity: str, outcome: float | None) -> ResultRow:
    return ResultRow.model_validate(
        {
            "taskFolder": "t",
            "taskName": "t",
            "iteration": 0,
            "status": "success",
            "integrityStatus": integrity,
            "outcomeScore": outcome,
            "runId": "r",
            "setupId": "s",
            "t": "2026-01-01T00:00:00Z",
        }
    )


def test_the_board_counts_unverified_runs_as_zero_by_default() -> None:
    rows = [_row("clean", 0.5), _row("no_data", 1.0), _row("unverified", 1.0), _row("review", 1.0)]
    assert ranked_outcomes(rows, zeroes.DEFAULT_UNVERIFIED_POLICY) == [0.5, 0.0, 0.0, 1.0]
    assert ranked_outcomes(rows, "exclude", "zero") == [0.5, 0.0]
    assert ranked_outcomes(rows, "include") == [0.5, 1.0, 1.0, 1.0]


def test_no_other_module_builds_a_zero_outcome() -> None:
    """Score entries of 0.0 outside zeroes.py are only the gates' own keys (the
    integrity gate, a failed check), never an ``OutcomeScore``."""
    root = Path(__file__).resolve().parents[2] / "src" / "benchguard"
    zero = re.compile(r"""["']score["']\s*:\s*0(?:\.0)?\b""")
    found = sorted(
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if zero.search(path.read_text("utf-8"))
    )
    assert found == ["scoring/integrity.py", "scoring/verification.py", "scoring/zeroes.py"]
