"""``json.loads`` semantics at orjson's speed, for every whole value an importer decodes.

orjson decodes; whatever it refuses or could read differently from :mod:`json` (NaN
and Infinity, lone surrogates, a BOM or another encoding, integers past 64 bits, which
orjson would turn into floats) is decoded again with :mod:`json`, so a value is exactly
what ``json.loads`` gives and an error is worded as ``json.loads`` words it.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

# An integer literal of 19 digits or more may be past 64 bits, which orjson decodes as
# a float: such text is decoded by json. Digits map to "0", the rest to a space, and a
# run is found with bytes.find (both in C, several times faster than a regex search).
_DIGITS_ONLY = bytes(0x30 if 0x30 <= byte <= 0x39 else 0x20 for byte in range(256))
_LONG_RUN = b"0" * 19
_DIGIT_SLICE = 1 << 20


def loads_like_json(data: bytes | memoryview) -> Any:
    """``json.loads(data)``, decoded by orjson when it is sure to agree.

    Raises what ``json.loads`` raises (``JSONDecodeError``, ``ValueError`` past its
    integer limit, ``RecursionError``, ``UnicodeDecodeError``)."""
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(bytes(data))
    if _has_long_digits(data):
        return json.loads(bytes(data))
    return value


def loads_text_like_json(text: str) -> Any:
    """``json.loads(text)`` for a value already held as text (a tool call's JSON-encoded
    arguments, a line of a transcript), decoded by orjson when it is sure to agree; any
    doubt, and every error, goes to ``json.loads(text)`` itself."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates
        return json.loads(text)
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return json.loads(text)
    if _has_long_digits(data):
        return json.loads(text)
    return value


def _has_long_digits(data: bytes | memoryview) -> bool:
    if type(data) is bytes and len(data) <= _DIGIT_SLICE:
        # Most values are small (a line, a call's arguments): one translate, no slicing.
        return data.translate(_DIGITS_ONLY).find(_LONG_RUN) >= 0
    # A slice at a time (overlapping by a run's length), so the translated copy stays
    # small however large the value.
    view = memoryview(data)
    step = _DIGIT_SLICE
    overlap = len(_LONG_RUN) - 1
    for start in range(0, max(len(view), 1), step):
        piece = bytes(view[start : start + step + overlap]).translate(_DIGITS_ONLY)
        if piece.find(_LONG_RUN) >= 0:
            return True
    return False
