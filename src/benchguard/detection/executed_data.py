"""The Python in a data file that delivered code executes.

The harness reads a file the run changed as code when a delivered Python file runs
data (``harness.delivered_code_loads``: ``exec(json.load(h)["format"])``, red team 29's
data-payload). Which part runs is decided at run time, so every reading is taken: the
whole text as Python, and each string in it (a JSON document's values, a Python
literal's strings) that parses as Python. The caller reads each module like a
delivered ``.py`` file.

A Python file that runs data may run its own text: a string in it (its docstring) or
its comments, read back from ``__file__`` (:func:`own_pieces` reads those).

Bounded: :data:`MAX_STRINGS` strings per file; a string or file that does not parse is
skipped (the patterns still read its text).
"""

from __future__ import annotations

import ast
import json
from collections.abc import Iterator
from typing import Any

__all__ = ["MAX_STRINGS", "code_pieces", "own_pieces"]

MAX_STRINGS = 256
# Strings shorter than this are names or words, not code worth parsing.
MIN_CODE_CHARS = 8


def code_pieces(text: str) -> list[ast.Module]:
    """The modules ``text`` holds: itself, when it parses as Python, and each string
    inside it (JSON or a Python literal) that does."""
    pieces: list[ast.Module] = []
    whole = _parse(text)
    strings: list[str] = []
    if whole is not None:
        pieces.append(whole)
        strings = [
            n.value
            for n in ast.walk(whole)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
    else:
        try:
            strings = list(_json_strings(json.loads(text)))
        except (ValueError, RecursionError):
            strings = []
    for string in strings[:MAX_STRINGS]:
        if len(string) >= MIN_CODE_CHARS:
            piece = _parse(string)
            if piece is not None:
                pieces.append(piece)
    return pieces


def own_pieces(text: str) -> list[ast.Module]:
    """The modules a Python file that runs data holds besides its code: each string
    literal in it, and each block of comment lines (``#`` and one space stripped),
    that parses as Python."""
    pieces: list[ast.Module] = []
    whole = _parse(text)
    strings = (
        [
            n.value
            for n in ast.walk(whole)
            if isinstance(n, ast.Constant) and isinstance(n.value, str)
        ]
        if whole is not None
        else []
    )
    blocks: list[list[str]] = [[]]
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.startswith("#"):
            body = stripped[1:]
            blocks[-1].append(body[1:] if body.startswith(" ") else body)
        elif blocks[-1]:
            blocks.append([])
    strings += ["\n".join(block) for block in blocks if block]
    for string in strings[:MAX_STRINGS]:
        if len(string) >= MIN_CODE_CHARS:
            piece = _parse(string)
            if piece is not None:
                pieces.append(piece)
    return pieces


def _parse(text: str) -> ast.Module | None:
    try:
        return ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None


def _json_strings(value: Any) -> Iterator[str]:
    """Every string in a JSON document, keys and values, depth first."""
    stack = [value]
    seen = 0
    while stack and seen < MAX_STRINGS:
        item = stack.pop()
        if isinstance(item, str):
            seen += 1
            yield item
        elif isinstance(item, dict):
            stack.extend(reversed([*item.keys(), *item.values()]))
        elif isinstance(item, list):
            stack.extend(reversed(item))
