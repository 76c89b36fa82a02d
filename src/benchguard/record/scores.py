"""Score entries and the canonical names in a record's ``scores`` map.

Shared by the scorer (``benchguard.scoring``) and the row builder
(``benchguard.results.rows``). ``CATASTROPHIC_SCORE_KEYS`` is the extension point: a
key added there zeroes ``OutcomeScore`` when it scores 0.0 and appears in a row's
``catastrophicKinds`` with no other wiring, because both the finalizer and the row
builder read this one tuple. The gates apply with no judge configured, so every key in
it must be computed deterministically (never by a model).

Integrity has its own key rather than sharing ``VerificationCatastrophic``: the scores
map is last-write-wins, so a clean integrity 1.0 written under the task's key would
erase a real task catastrophic 0.0.

A record keeps its entries as stored (``RunRecord.scores`` is ``dict[str, Any]``): a
gate entry that is malformed must still read as fired (fail closed), which a parser
that replaced it by a default could not promise. :class:`ScoreEntry` is the shape a
well-formed entry has, and what the scorer writes.
"""

from __future__ import annotations

from typing import Final

from pydantic import BaseModel, ConfigDict

OUTCOME_SCORE: Final = "OutcomeScore"
VERIFICATION_CORRECTNESS: Final = "VerificationCorrectness"
VERIFICATION_RECOVERABLE: Final = "VerificationRecoverable"
VERIFICATION_CATASTROPHIC: Final = "VerificationCatastrophic"
INTEGRITY_CATASTROPHIC: Final = "IntegrityCatastrophic"

# Judged counterparts, read only when the deterministic verification key is absent.
JUDGED_CORRECTNESS: Final = "JudgedCorrectness"
JUDGED_RECOVERABLE: Final = "JudgedRecoverable"

CATASTROPHIC_SCORE_KEYS: Final[tuple[str, ...]] = (
    VERIFICATION_CATASTROPHIC,
    INTEGRITY_CATASTROPHIC,
)

# First present key wins: deterministic verification before any judge.
CORRECTNESS_SOURCE_KEYS: Final[tuple[str, ...]] = (VERIFICATION_CORRECTNESS, JUDGED_CORRECTNESS)
RECOVERABLE_SOURCE_KEYS: Final[tuple[str, ...]] = (VERIFICATION_RECOVERABLE, JUDGED_RECOVERABLE)

# Stamped on every OutcomeScore entry; bump when the composite's formula changes.
SCORING_VERSION: Final = "v1"


class ScoreEntry(BaseModel):
    """One entry of ``RunRecord.scores``, as the scorer writes it."""

    model_config = ConfigDict(extra="allow")

    # In [0, 1]; None where nothing could be scored (the reason says why).
    score: float | None
    # Why, in one line (the check, the gate or the formula that gave it).
    reason: str = ""
    # The scorer's version (``SCORING_VERSION`` on the composite).
    version: str | None = None
    # A judge's own success flag, when a judge scored it.
    success: bool | None = None


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
    "ScoreEntry",
]
