"""``did you mean``: the closest known name to a mistyped one, for error messages."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

# How alike two names must be (difflib's ratio) before one is suggested for the other.
CUTOFF = 0.6


def did_you_mean(value: str, known: Iterable[str]) -> str:
    """``"; did you mean 'x'?"`` naming the closest of ``known``, or ``""`` if none is
    close. Deterministic: ties go to the name first in sorted order."""
    choices = sorted(set(known))
    close = difflib.get_close_matches(value, choices, n=1, cutoff=CUTOFF)
    return f"; did you mean {close[0]!r}?" if close else ""
