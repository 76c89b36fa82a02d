"""Consequence and composition: the integrity gate and the outcome composite.

``keys`` names every score; ``integrity`` turns a stored verdict into
``IntegrityCatastrophic``; ``verification`` turns check results into the verification
scores; ``outcome`` composes ``OutcomeScore``; ``pipeline`` applies them to records.
"""

from __future__ import annotations

from benchguard.scoring.integrity import integrity_entry
from benchguard.scoring.judge import Judge, JudgeUnavailable, NullJudge, build_judge, judge_or_null
from benchguard.scoring.keys import CATASTROPHIC_SCORE_KEYS, SCORING_VERSION
from benchguard.scoring.outcome import (
    OutcomeInputError,
    compute_outcome_v1,
    finalize_outcome,
    fired_catastrophic_keys,
    outcome_entry,
)
from benchguard.scoring.pipeline import score_record, score_records
from benchguard.scoring.verification import failed_catastrophic_details, verification_scores

__all__ = [
    "CATASTROPHIC_SCORE_KEYS",
    "SCORING_VERSION",
    "Judge",
    "JudgeUnavailable",
    "NullJudge",
    "OutcomeInputError",
    "build_judge",
    "compute_outcome_v1",
    "failed_catastrophic_details",
    "finalize_outcome",
    "fired_catastrophic_keys",
    "integrity_entry",
    "judge_or_null",
    "outcome_entry",
    "score_record",
    "score_records",
    "verification_scores",
]
