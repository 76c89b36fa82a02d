"""The text a record offers to the rules: three surfaces, normalized the same way always.

* ``args``: each trajectory entry's arguments, JSON-dumped (quotes inside a command
  appear escaped, newlines as ``\\n``); values JSON cannot dump fall back to ``str()``;
* ``result``: each entry's result; a string passes through, ``None`` is empty, anything
  structured is JSON-dumped;
* ``output``: the record's final output, normalized like a result, scanned once with
  no step and no tool.

A structured value's text is its JSON dump followed by its string leaves, each on its
own line with its real line breaks (see :func:`as_text`). The dump alone would hide a
file read into ``{"stdout": ...}`` from every line-anchored pattern (its line breaks
are escaped ``\\n``) and from every left-bounded one (``cat \\<newline>bench.env``
dumps as ``...\\nbench.env``, a word character before the name).

Only dict entries of the trajectory count; ``trajectory_index`` numbers them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from benchguard.detection.models import ScanField

# Characters kept either side of a match in a finding's excerpt.
EXCERPT_RADIUS = 80
# Longest stretch of the match itself kept in an excerpt, so a greedy user pattern
# cannot copy a whole tool result into the report.
EXCERPT_MATCH_CHARS = 240


# ``json.dumps(value, ensure_ascii=False, default=str)`` without building an encoder per
# call (twice per trajectory step: that construction was a third of the dump's cost).
_ENCODER = json.JSONEncoder(ensure_ascii=False, default=str)


@dataclass(frozen=True, slots=True)
class Surface:
    field: ScanField
    trajectory_index: int | None
    tool: str | None
    text: str


def as_text(value: Any) -> str:
    """A surface's text: str as is, ``None`` empty, anything else JSON plus its leaves.

    Structured values read as their JSON dump (``str()`` when JSON cannot dump them),
    then, when the dump succeeded, a line break and the value's string leaves joined by
    line breaks, in document order (dict insertion order, list order): deterministic,
    and never longer than the dump, since a leaf's JSON form is at least as long as the
    leaf. Keys are not repeated; they read as typed in the dump.
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    try:
        # ensure_ascii=False so a non-ASCII path in args reads as typed, not as \\u escapes.
        dumped = _ENCODER.encode(value)
    except (TypeError, ValueError, RecursionError):
        try:
            return str(value)
        except Exception:
            return object.__repr__(value)
    leaves = string_leaves(value)
    if not leaves:
        return dumped
    return dumped + "\n" + "\n".join(leaves)


def string_leaves(value: Any) -> list[str]:
    """The string values inside ``value`` (dict values and list items, not keys), in order.

    Iterative with an explicit stack, so depth is no problem; only called on values
    ``json.dumps`` accepted, which rules out cycles.
    """
    leaves: list[str] = []
    stack: list[Any] = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            leaves.append(item)
        elif isinstance(item, dict):
            # Only what json.dumps walks (dict, list, tuple): anything else was dumped
            # through str() and is not a leaf.
            stack.extend(reversed(list(item.values())))
        elif isinstance(item, list | tuple):
            stack.extend(reversed(item))
    return leaves


def dict_entries(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """The trajectory's dict entries, in order; anything else is skipped."""
    trajectory = record.get("trajectory")
    if not isinstance(trajectory, list | tuple):
        return []
    return [entry for entry in trajectory if isinstance(entry, Mapping)]


def tool_name(entry: Mapping[str, Any]) -> str | None:
    name = entry.get("name")
    if name is None:
        return None
    return name if isinstance(name, str) else as_text(name)


def entry_surfaces(index: int, entry: Mapping[str, Any]) -> tuple[Surface, Surface]:
    tool = tool_name(entry)
    args = entry.get("args")
    return (
        Surface("args", index, tool, as_text(args if args else {})),
        Surface("result", index, tool, as_text(entry.get("result"))),
    )


def output_surface(record: Mapping[str, Any]) -> Surface:
    return Surface("output", None, None, as_text(record.get("output")))


def has_no_data(entries: list[Mapping[str, Any]], record: Mapping[str, Any]) -> bool:
    """No dict entry and a raw output that is missing, blank, ``{}`` or ``[]``."""
    if entries:
        return False
    output = record.get("output")
    if output is None:
        return True
    if isinstance(output, str):
        return not output.strip()
    if isinstance(output, Mapping | list | tuple):
        return len(output) == 0
    return False


def excerpt(text: str, start: int, end: int) -> str:
    """±EXCERPT_RADIUS characters around a match, whitespace runs collapsed."""
    end = min(end, start + EXCERPT_MATCH_CHARS)
    window = text[max(0, start - EXCERPT_RADIUS) : end + EXCERPT_RADIUS]
    return " ".join(window.split())
