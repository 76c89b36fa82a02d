"""Reading one entry of a ``scores`` map, whatever shape a stored record gives it.

An entry is a bare number or an object with a numeric ``score``. A bool is never a
score (``True == 1`` would otherwise read as a passing gate).
"""

from __future__ import annotations

import math
from typing import Any


class UnreadableScore(ValueError):
    """A present score entry that is not a finite number in [0, 1]."""


def read_score(entry: Any) -> float:
    """Return the entry's score in [0, 1]; raise ``UnreadableScore`` for anything else."""
    value = entry.get("score") if isinstance(entry, dict) else entry
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise UnreadableScore(f"score is {type(value).__name__} {_show(value)}, not a number")
    number = float(value)
    if math.isnan(number) or not 0.0 <= number <= 1.0:
        raise UnreadableScore(f"score {_show(value)} is outside [0, 1]")
    return number


def read_optional_score(entry: Any) -> float | None:
    """Like ``read_score`` but ``None`` for anything unreadable (publication never raises)."""
    try:
        return read_score(entry)
    except UnreadableScore:
        return None


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 40 else text[:39] + "…"
