"""Flattening untrusted text before it reaches a reason, a row or a leaderboard page.

Agents can influence verifier reasons and stored reports, so text from them may carry
bidi overrides (which reorder what a reader sees), zero-width and tag-block characters
(invisible payloads), or control characters. They are removed; all whitespace,
line breaks included, collapses to single spaces; the result is capped.
"""

from __future__ import annotations

import re
import unicodedata

DEFAULT_CAP = 240
_ELLIPSIS = "…"

# Categories removed outright: control, format (bidi, zero-width, tag block are all Cf),
# surrogates, private use.
_REMOVED_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co"})
_WHITESPACE = re.compile(r"\s+")


def _keep(char: str) -> str:
    if char.isspace():
        return " "
    if unicodedata.category(char) in _REMOVED_CATEGORIES:
        return ""
    return char


def sanitize_text(text: str, *, cap: int = DEFAULT_CAP) -> str:
    """Return ``text`` with invisible and control characters removed, whitespace
    collapsed, and at most ``cap`` characters (``cap - 1`` plus an ellipsis).

    Idempotent: sanitizing an already sanitized text returns it unchanged, so a row
    that is re-validated many times keeps its reason.
    """
    flattened = "".join(_keep(char) for char in text)
    collapsed = _WHITESPACE.sub(" ", flattened).strip()
    if len(collapsed) > cap:
        return collapsed[: cap - 1].rstrip() + _ELLIPSIS
    return collapsed
