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

from hypothesis import example, given, settings
from hypothesis import strategies as st

from benchguard.record.edge import StepWindow, _plain_step
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


# Steps as tools write them: ASCII or not, argument values strings or not.
_plain_values = st.fixed_dictionaries(
    {
        "name": _text | st.sampled_from(["exec", "read_file"]),
        "args": st.dictionaries(_text, _text | _leaf, max_size=3),
    },
    optional={
        "result": st.none() | _text,
        "status": st.sampled_from(["called", "completed", "error", "ok"]),
    },
)


@settings(max_examples=400, deadline=None)
@given(_plain_values | _steps)
def test_the_plain_step_path_matches_the_general_path(step: Any) -> None:
    notes = _Notes()
    plain = _plain_step(step, notes)
    if plain is None:
        assert notes.chars == 0  # declined before counting anything
        return
    general = _notes_of(step, _parse_any_step)
    assert _same(plain, general[0])
    assert (notes.chars, notes.result()) == general[1:]
    assert plain["args"] is not step["args"]  # a copy: the edge never shares its input


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=40), max_size=12),
    st.integers(min_value=0, max_value=4),
    st.integers(min_value=0, max_value=60),
)
@example([30, 30, 30, 30], 4, 60)  # the head fills by bytes after the extension
def test_a_window_extended_at_once_equals_one_added_step_by_step(
    sizes: list[int], head_steps: int, head_bytes: int
) -> None:
    limits = {"head_steps": head_steps, "tail_steps": 3, "head_bytes": head_bytes, "tail_bytes": 50}
    one: StepWindow[int] = StepWindow(**limits)
    for index, size in enumerate(sizes):
        one.add(index, size)
    many: StepWindow[int] = StepWindow(**limits)
    half = len(sizes) // 2
    many.extend(list(range(half)), sizes[:half])  # then one at a time: the counts carry
    for index in range(half, len(sizes)):
        many.add(index, sizes[index])
    assert (many.steps(), many.seen, many.dropped, many.problem()) == (
        one.steps(),
        one.seen,
        one.dropped,
        one.problem(),
    )
