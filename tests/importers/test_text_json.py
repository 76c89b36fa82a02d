"""``loads_text_like_json`` (orjson for text already in memory: tool-call arguments,
transcript lines) must give exactly what ``json.loads`` gives, and raise what it
raises, for any text."""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from benchguard.importers._json import loads_text_like_json

_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=True, allow_infinity=True)
    | st.text(max_size=8)
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)
_NOISE = st.sampled_from(["", " ", "\ufeff", "\ud800", "x", "]", "\x00", '"\\ud800"', "1e999"])


def _outcome(text: str) -> tuple[str, Any]:
    try:
        return "value", json.dumps(json.loads(text), sort_keys=True)
    except (ValueError, RecursionError) as exc:
        return "error", (type(exc), str(exc))


def _ours(text: str) -> tuple[str, Any]:
    try:
        return "value", json.dumps(loads_text_like_json(text), sort_keys=True)
    except (ValueError, RecursionError) as exc:
        return "error", (type(exc), str(exc))


@settings(max_examples=500, deadline=None)
@given(_VALUES, _NOISE, _NOISE, st.booleans())
def test_text_decodes_as_json_loads_does(value: Any, before: str, after: str, ascii: bool) -> None:
    text = before + json.dumps(value, ensure_ascii=ascii) + after
    assert _ours(text) == _outcome(text)


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30))
def test_any_text_decodes_or_fails_as_json_loads_does(text: str) -> None:
    assert _ours(text) == _outcome(text)


def test_the_cases_orjson_reads_otherwise_go_to_json() -> None:
    assert loads_text_like_json("12345678901234567890123") == 12345678901234567890123
    assert math.isnan(loads_text_like_json("NaN"))
    assert loads_text_like_json('"\\ud800"') == "\ud800"
