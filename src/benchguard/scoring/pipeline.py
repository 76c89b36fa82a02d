"""Scoring a batch of records in place: judge (optional), integrity gate, outcome.

Order matters and is fixed: judged sub-scores first (so the composite can read them),
then the integrity gate from the stored verdict (not for a scan that only a shortage
of the machine left incomplete: ``record.infrastructure``), then the finalizer, then the
no-credit rule (an errored or interrupted run scores 0.0 with its error as reason; every
zero is decided in ``scoring/zeroes.py``). Verification
scores are the harness's to write (``verification.verification_scores``) before this
runs. Each record is scored on its own: a failure is recorded on that record (under
``scoring_errors``) and returned, and the batch goes on.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from benchguard.record import scores as score_keys
from benchguard.record.infrastructure import infrastructure_reason
from benchguard.scoring import zeroes
from benchguard.scoring.integrity import excused_by_infrastructure, integrity_entry
from benchguard.scoring.judge import Judge, NullJudge
from benchguard.scoring.keys import INTEGRITY_CATASTROPHIC, OUTCOME_SCORE
from benchguard.scoring.outcome import OutcomeInputError, finalize_outcome

SCORING_ERRORS_KEY = "scoring_errors"


def record_label(index: int, record: Any) -> str:
    """``record 3 (task-folder#1)``: how errors name a record."""
    if not isinstance(record, dict):
        return f"record {index}"
    folder = record.get("folder") or record.get("name") or "?"
    iteration = record.get("iteration", "?")
    return f"record {index} ({folder}#{iteration})"


def score_records(records: Sequence[Any], *, judge: Judge | None = None) -> list[str]:
    """Apply judge, gate and finalizer to every record in place; return the errors.

    A record that is not an object is reported and left alone. With ``judge=None`` the
    null judge is used: the deterministic gates and the composite still apply.
    """
    active_judge: Judge = judge if judge is not None else NullJudge()
    errors: list[str] = []
    for index, record in enumerate(records):
        label = record_label(index, record)
        if not isinstance(record, dict):
            errors.append(f"{label}: is {type(record).__name__}, not an object; not scored")
            continue
        record_errors = score_record(record, judge=active_judge)
        errors.extend(f"{label}: {message}" for message in record_errors)
    return errors


def score_record(record: MutableMapping[str, Any], *, judge: Judge) -> list[str]:
    """Score one record in place; return its errors (also stored on the record)."""
    errors: list[str] = []
    scores = record.get("scores")
    if not isinstance(scores, dict):
        if scores is not None:
            errors.append(f"scores was {type(scores).__name__}, not an object; started afresh")
        scores = {}
        record["scores"] = scores
    errors.extend(_apply_judge(record, scores, judge))
    # The gate never raises, but a guard here keeps that promise local: an exception
    # must not skip the finalizer below.
    try:
        report = record.get("cheating_report")
        gate = integrity_entry(report)
        if gate is not None and excused_by_infrastructure(report, infrastructure_reason(record)):
            gate = None
    except Exception as exc:  # pragma: no cover - integrity_entry is total
        errors.append(f"integrity gate failed: {exc}")
        gate = None
    if gate is None:
        scores.pop(INTEGRITY_CATASTROPHIC, None)
    else:
        scores[INTEGRITY_CATASTROPHIC] = gate
    try:
        finalize_outcome(scores)
    except OutcomeInputError as exc:
        scores.pop(OUTCOME_SCORE, None)
        errors.append(f"no outcome: {exc}")
    no_credit = zeroes.no_credit_entry(record.get("status"), record.get("error"), scores)
    if no_credit is not None:
        scores[OUTCOME_SCORE] = no_credit
    record[SCORING_ERRORS_KEY] = errors
    return errors


def no_credit_entry(record: Mapping[str, Any], scores: Mapping[str, Any]) -> dict[str, Any] | None:
    """``zeroes.no_credit_entry`` of a stored record's status and error (kept for
    callers of the old name)."""
    return zeroes.no_credit_entry(record.get("status"), record.get("error"), scores)


def _apply_judge(
    record: MutableMapping[str, Any], scores: dict[str, Any], judge: Judge
) -> list[str]:
    try:
        judged = dict(judge.judge(record))
    except Exception as exc:  # a judge failure costs the judged keys, never the gates
        return [f"judge {judge.name!r} failed: {type(exc).__name__}: {exc}"]
    errors = []
    for key in sorted(judged):
        if key == OUTCOME_SCORE or key in score_keys.CATASTROPHIC_SCORE_KEYS:
            errors.append(f"judge {judge.name!r} may not write {key}; ignored")
        else:
            scores[key] = judged[key]
    return errors
