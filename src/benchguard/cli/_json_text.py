"""Indented JSON for stdout: ``json.dumps(value, indent=2, ensure_ascii=False)``,
written by orjson when it writes the very same text.

With an indent, :mod:`json` encodes in pure Python, which was a tenth of a large
``scan --format json``. orjson's two-space indent writes the same separators, escapes
and key order for plain values; it writes floats in another spelling (``1e-5``, not
``1e-05``) and refuses integers past 64 bits, lone surrogates and non-string keys. So
orjson is used only for a value made of dicts with string keys, lists, strings,
integers orjson takes, booleans and ``None`` (floats included in none of it), and
:mod:`json` writes everything else, as before.
"""

from __future__ import annotations

import json
from typing import Any

import orjson

_INT_MIN, _INT_MAX = -(2**63), 2**64 - 1


def indented_json(value: Any) -> str:
    """The text of ``json.dumps(value, indent=2, ensure_ascii=False)``."""
    if _plain(value):
        try:
            return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")
        except orjson.JSONEncodeError:  # a lone surrogate, too deep: json words it
            pass
    return json.dumps(value, indent=2, ensure_ascii=False)


def _plain(value: Any) -> bool:
    stack = [value]
    while stack:
        item = stack.pop()
        kind = type(item)
        if kind is str or kind is bool or item is None:
            continue
        if kind is int:
            if not _INT_MIN <= item <= _INT_MAX:
                return False
        elif kind is dict:
            for key, child in item.items():
                if type(key) is not str:
                    return False
                stack.append(child)
        elif kind is list:
            stack.extend(item)
        else:  # floats, tuples, subclasses, anything json would turn by other rules
            return False
    return True
