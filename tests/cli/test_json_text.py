"""``scan``/``score`` JSON on stdout is written by orjson where it writes the same
text as ``json.dumps(value, indent=2, ensure_ascii=False)``; for any value the text
must be exactly that."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from benchguard.cli._json_text import _plain, indented_json

_TEXT = st.text(
    alphabet=st.characters(min_codepoint=0, max_codepoint=0x10FFFF, exclude_categories=["Cs"]),
    max_size=8,
) | st.sampled_from(["\x00\x1f\x7f\u2028\u2029", '"\\/', "é日\U0001f600", "\ud800"])
_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**70), max_value=2**70)
    | st.floats(allow_nan=False)
    | _TEXT
)
_VALUES = st.recursive(
    _SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(_TEXT, inner, max_size=4) | st.tuples(inner)
    ),
    max_leaves=16,
)


@settings(max_examples=600, deadline=None)
@given(_VALUES)
def test_the_text_is_json_dumps_text(value: Any) -> None:
    assert indented_json(value) == json.dumps(value, indent=2, ensure_ascii=False)


def test_a_report_like_value_takes_the_fast_path() -> None:
    value = [{"file": "a.json", "report": {"status": "clean", "findings": [], "scanned": {}}}]
    assert _plain(value)
    assert indented_json(value) == json.dumps(value, indent=2, ensure_ascii=False)
    assert not _plain([1.5]) and not _plain({1: "x"}) and not _plain([2**64])
