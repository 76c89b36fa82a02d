"""Every way a run's ``OutcomeScore`` becomes 0, in one place.

A run scores 0.0 for exactly these reasons, each decided here and nowhere else (the
callers only ask):

1. **A catastrophic gate fired** (:func:`gated_entry`): any key of
   ``record.scores.CATASTROPHIC_SCORE_KEYS`` scored 0.0, or holds a value that cannot
   be read (fail closed). The keys are written upstream: ``IntegrityCatastrophic`` by
   the integrity gate (``scoring/integrity.py``, from the stored verdict), a failed
   catastrophic check by ``scoring/verification.py``. A gate decides alone, before
   any other input is read, so a malformed sub-score can never lose it.
2. **The run did no creditable work** (:func:`no_credit_entry`): its status is
   ``error`` (the agent could not start, crashed, or the harness failed on it) or
   ``interrupted``, whatever its checks found: a check that passes on files an
   earlier run left is not this run's work. A gated run keeps its gate's zero.
3. **Finishing the run failed** (:func:`errored`): scanning, scoring or journaling a
   run raised; the harness marks it errored, and an outcome it was already given
   becomes the no-credit zero of 2.
4. **On a leaderboard, a run nobody could verify** (:func:`ranked_value`): the ranked
   mean counts ``no_data`` and ``unverified`` runs (and, if asked, ``review`` runs)
   as 0 under the ``zero`` policy, the default for unverified runs. The row keeps its
   own outcome; only the mean reads it as 0.

``scoring/outcome.py`` composes the outcome of a run none of these zeroes;
``scoring/pipeline.py`` applies gate, composite and no-credit in that order.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from benchguard.record import scores as score_keys
from benchguard.record.run import NO_CREDIT_STATUSES, RunRecord
from benchguard.scoring.keys import OUTCOME_SCORE, SCORING_VERSION
from benchguard.scoring.values import UnreadableScore, read_score

# -- 1. the catastrophic gates ---------------------------------------------------------


def fired_catastrophic_keys(scores: Mapping[str, Any]) -> tuple[str, ...]:
    """The catastrophic keys that fired, in ``CATASTROPHIC_SCORE_KEYS`` order.

    The tuple is read from ``record.scores`` at call time, so the finalizer and the
    row builder (which both call this) always agree on it.
    """
    return tuple(
        key for key in score_keys.CATASTROPHIC_SCORE_KEYS if key in scores and _fired(scores[key])
    )


def _fired(entry: Any) -> bool:
    try:
        return read_score(entry) == 0.0
    except UnreadableScore:
        return True


def gated_entry(scores: Mapping[str, Any], correctness_key: str | None) -> dict[str, Any] | None:
    """The ``OutcomeScore`` of a gated run (a visible 0.0 naming the gates that fired
    and the correctness it would have had), or None when no gate fired."""
    fired = fired_catastrophic_keys(scores)
    if not fired:
        return None
    return {
        "score": 0.0,
        "version": SCORING_VERSION,
        "reason": f"c={_describe_gated_correctness(scores, correctness_key)}, "
        f"rec_v=n/a, cat_v=0 ({_describe_fired(scores, fired)})",
    }


def _describe_gated_correctness(scores: Mapping[str, Any], key: str | None) -> str:
    if key is None:
        return "n/a"
    try:
        return f"{read_score(scores[key]):.3f}"
    except UnreadableScore:
        return "invalid"


def _describe_fired(scores: Mapping[str, Any], fired: tuple[str, ...]) -> str:
    parts = []
    for key in fired:
        try:
            read_score(scores[key])
            parts.append(key)
        except UnreadableScore:
            parts.append(f"{key}: unreadable score")
    return ", ".join(parts)


# -- 2. no creditable work -------------------------------------------------------------


def no_credit_entry(
    status: object, error: object, scores: Mapping[str, Any]
) -> dict[str, Any] | None:
    """The ``OutcomeScore`` of a run that did no creditable work, else None.

    ``status`` and ``error`` are the record's (as stored: anything else than an
    ``error``/``interrupted`` status credits the run). The reason carries the error.
    A gated run keeps its gate's zero (and reason): None.
    """
    if status not in NO_CREDIT_STATUSES or fired_catastrophic_keys(scores):
        return None
    why = error if isinstance(error, str) and error else f"run {status}"
    return {"score": 0.0, "version": SCORING_VERSION, "reason": f"no credit: {why}"}


# -- 3. finishing the run failed -------------------------------------------------------


def errored(record: RunRecord, reason: str) -> RunRecord:
    """``record`` marked errored for ``reason`` (a failure while finishing it, kept
    first among its errors); an outcome it was already given becomes the no-credit
    zero."""
    update: dict[str, Any] = {
        "status": "error",
        "error": reason,
        "errors": [reason, *record.errors],
    }
    if OUTCOME_SCORE in record.scores:
        scores = dict(record.scores)
        entry = no_credit_entry("error", reason, scores)
        if entry is not None:
            scores[OUTCOME_SCORE] = entry
        update["scores"] = scores
    return record.model_copy(update=update)


# -- 4. a leaderboard's runs nobody could verify ----------------------------------------

# How a ranked mean counts a kind of run: as 0, with its own outcome, or not at all.
RankPolicy = Literal["zero", "include", "exclude"]
RANK_POLICIES: tuple[RankPolicy, ...] = ("zero", "include", "exclude")
DEFAULT_UNVERIFIED_POLICY: RankPolicy = "zero"
# Runs sent to review (only weak findings: not gated) count with their own outcome.
DEFAULT_REVIEW_POLICY: RankPolicy = "include"
# The integrity statuses of runs nobody could verify.
UNVERIFIED_STATUSES = ("no_data", "unverified")


def ranked_value(
    integrity_status: str,
    outcome: float | None,
    unverified_policy: RankPolicy,
    review_policy: RankPolicy = DEFAULT_REVIEW_POLICY,
) -> float | None:
    """What a ranked mean counts for one row: 0.0 for an unverified (or review) run
    under the ``zero`` policy, None to leave the row out (``exclude``, or a verified
    row without an outcome), else its own outcome."""
    chosen = (
        unverified_policy
        if integrity_status in UNVERIFIED_STATUSES
        else review_policy
        if integrity_status == "review"
        else None
    )
    if chosen == "zero":
        return 0.0
    if chosen == "exclude":
        return None
    return outcome


__all__ = [
    "DEFAULT_REVIEW_POLICY",
    "DEFAULT_UNVERIFIED_POLICY",
    "RANK_POLICIES",
    "UNVERIFIED_STATUSES",
    "RankPolicy",
    "errored",
    "fired_catastrophic_keys",
    "gated_entry",
    "no_credit_entry",
    "ranked_value",
]
