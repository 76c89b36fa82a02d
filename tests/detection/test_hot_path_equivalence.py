"""Fast paths of the scan's per-step work answer exactly as the general code they
skip (the general code is restated here as the reference)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from benchguard.detection import seeking
from benchguard.detection.shell import command_strings


def _general_maybe_search_command(args: Any) -> bool:
    if isinstance(args, Mapping):
        values = [
            v for k, v in args.items() if isinstance(k, str) and k.lower() in seeking._COMMAND_KEYS
        ]
    else:
        values = [args]
    return any(
        seeking._FETCH_PROGRAM.search(text) is not None
        for value in values
        for text in command_strings(value)
    )


_TEXT = st.sampled_from(["ls -la", "curl -s x?q=a", "echo wget", "cat f", "", "W3M url"])
_KEYS = st.sampled_from(["command", "CMD", "path", "code", "content", "Script", "keystrokes"])
_VALUES = st.recursive(
    st.one_of(_TEXT, st.integers(), st.none()),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_KEYS, inner, max_size=3),
    max_leaves=8,
)


@settings(max_examples=400, deadline=None)
@given(st.one_of(st.dictionaries(_KEYS, _VALUES, max_size=4), _VALUES))
def test_search_command_fast_path_equals_the_general_walk(args: Any) -> None:
    assert seeking._maybe_search_command(args) == _general_maybe_search_command(args)
