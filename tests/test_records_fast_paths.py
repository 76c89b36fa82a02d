"""The edge parser's fast paths give exactly what the general paths give.

``parse_step`` builds a step already in the ``Step`` shape directly, and
``bounded_record_dict`` does not type steps only to dump them back; both must produce the
same dicts, the same notes and the same size accounting (which decides where a long
trajectory is cut) as the general code, on well-formed and hostile steps alike.
"""

from __future__ import annotations

import json
import math
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from benchguard.records import (
    _Notes,
    _parse_any_step,
    bounded_record_dict,
    parse_record,
    parse_step,
)

_text = st.text(
    alphabet=st.sampled_from(list('ab \n"\\{}[]\u00e9\u65e5\U0001f600\ud800\udfff')), max_size=12
)
_leaf = st.none() | st.booleans() | st.integers() | st.floats() | _text
_json = st.recursive(
    _leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_text, inner, max_size=3),
    max_leaves=12,
)


def _deep(depth: int) -> Any:
    value: Any = "leaf"
    for _ in range(depth):
        value = {"k": [value]}
    return value


_step_values = st.fixed_dictionaries(
    {},
    optional={
        "name": _text | _leaf,
        "args": st.dictionaries(_text, _json, max_size=3)
        | _json
        | st.just(_deep(60))
        | st.just({"command": "cat x", "n": math.nan}),
        "result": _text | _json,
        "status": st.sampled_from(["called", "completed", "error", "ok", ""]) | _leaf,
    },
)
_steps = _step_values | st.dictionaries(_text, _json, max_size=5) | _json


def _notes_of(step: Any, parse: Any) -> tuple[Any, int, list[str]]:
    notes = _Notes()
    parsed = parse(step, notes, "trajectory[0]")
    return parsed, notes.chars, notes.result()


def _same(a: Any, b: Any) -> bool:
    # NaN never equals itself: compare the JSON texts (NaN is replaced before output).
    return json.dumps(a, sort_keys=False) == json.dumps(b, sort_keys=False)


@settings(max_examples=400, deadline=None)
@given(_steps)
def test_parse_step_matches_the_general_path(step: Any) -> None:
    fast = _notes_of(step, parse_step)
    general = _notes_of(step, _parse_any_step)
    assert _same(fast[0], general[0])
    assert fast[1:] == general[1:]


@settings(max_examples=200, deadline=None)
@given(
    st.lists(_steps, max_size=6),
    st.dictionaries(
        st.sampled_from(["name", "output", "input", "status", "iteration", "extra", "errors"]),
        _json,
        max_size=4,
    ),
)
def test_bounded_record_dict_matches_typed_steps_dumped(steps: list[Any], rest: Any) -> None:
    raw = {**rest, "trajectory": steps}
    assert _same(bounded_record_dict(raw), parse_record(raw).to_json(complete=False))
