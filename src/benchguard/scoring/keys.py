"""Compatibility re-exports: the score keys live in ``benchguard.record.scores``.

Code that reads the extension point at run time (``CATASTROPHIC_SCORE_KEYS``) reads it
from ``benchguard.record.scores``; these names stay so existing imports keep working.
"""

from __future__ import annotations

from benchguard.record.scores import (
    CATASTROPHIC_SCORE_KEYS,
    CORRECTNESS_SOURCE_KEYS,
    INTEGRITY_CATASTROPHIC,
    JUDGED_CORRECTNESS,
    JUDGED_RECOVERABLE,
    OUTCOME_SCORE,
    RECOVERABLE_SOURCE_KEYS,
    SCORING_VERSION,
    VERIFICATION_CATASTROPHIC,
    VERIFICATION_CORRECTNESS,
    VERIFICATION_RECOVERABLE,
)

__all__ = [
    "CATASTROPHIC_SCORE_KEYS",
    "CORRECTNESS_SOURCE_KEYS",
    "INTEGRITY_CATASTROPHIC",
    "JUDGED_CORRECTNESS",
    "JUDGED_RECOVERABLE",
    "OUTCOME_SCORE",
    "RECOVERABLE_SOURCE_KEYS",
    "SCORING_VERSION",
    "VERIFICATION_CATASTROPHIC",
    "VERIFICATION_CORRECTNESS",
    "VERIFICATION_RECOVERABLE",
]
