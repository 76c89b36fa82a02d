"""Translate a Python rule regex into an RE2 regex that matches a superset of its text.

The prefilter must never miss: if the exact pattern (``regex``, IGNORECASE|MULTILINE)
matches a surface, its relaxed form must match the same surface, and also the surface
joined with others by ``\\n``. The translation walks the stdlib parse tree and:

* drops what RE2 cannot run or what only narrows a match: lookarounds, ``\\b``/``\\B``,
  backreference constraints (replaced by "anything"), atomic grouping;
* maps ``\\A``/``\\Z`` to line anchors (a surface starts and ends at a line break in
  the joined text);
* turns repeat counts into ``?``/``*``/``+`` (looser, and keeps RE2 programs small);
* writes every character class out explicitly instead of trusting RE2's own case
  folding and its ASCII-only ``\\w``/``\\d``/``\\s``: ASCII membership is computed
  exactly (with case folding), and any class that could match a non-ASCII character
  admits every non-ASCII character. ASCII letters whose Python case folding reaches
  outside ASCII (i, k, s) carry those partners explicitly.

Anything unexpected raises :class:`Unrelaxable`; such a pattern is then checked on
every surface by the exact engine (slower, never wrong).
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

# The stdlib regex parser: private but stable since 3.11; it is typed Any here.
sre_parser: Any = importlib.import_module("re._parser")
C: Any = importlib.import_module("re._constants")

_NON_ASCII = "\\x{80}-\\x{10ffff}"
_ANY = "[\\x{0}-\\x{10ffff}]"

# Non-ASCII characters that case-insensitive matching (stdlib ``re`` or ``regex``)
# treats as equal to an ASCII letter. A test re-derives this table by brute force.
ASCII_CASE_PARTNERS: dict[str, str] = {
    "i": "\u0130\u0131",
    "k": "\u212a",
    "s": "\u017f",
}

_ASCII_WORD = frozenset(chr(c) for c in range(128) if chr(c).isalnum() or chr(c) == "_")
_ASCII_DIGIT = frozenset("0123456789")
_ASCII_SPACE = frozenset(chr(c) for c in range(128) if chr(c).isspace())
_ASCII = frozenset(chr(c) for c in range(128))

_CATEGORY_ASCII: dict[Any, frozenset[str]] = {
    C.CATEGORY_DIGIT: _ASCII_DIGIT,
    C.CATEGORY_NOT_DIGIT: _ASCII - _ASCII_DIGIT,
    C.CATEGORY_SPACE: _ASCII_SPACE,
    C.CATEGORY_NOT_SPACE: _ASCII - _ASCII_SPACE,
    C.CATEGORY_WORD: _ASCII_WORD,
    C.CATEGORY_NOT_WORD: _ASCII - _ASCII_WORD,
}

_REPEATS = (C.MAX_REPEAT, C.MIN_REPEAT, C.POSSESSIVE_REPEAT)


class Unrelaxable(ValueError):
    """The pattern uses something this translator does not model."""


def relax(pattern: str) -> str:
    """The RE2 superset pattern of ``pattern``; ``""`` means "matches everywhere"."""
    try:
        parsed = sre_parser.parse(pattern, re.IGNORECASE | re.MULTILINE)
    except (re.error, RecursionError, OverflowError) as exc:
        raise Unrelaxable(str(exc)) from None
    return _seq(list(parsed), ignore_case=True)


def relax_literal(text: str) -> str:
    """``relax(re.escape(text))`` without parsing: one cached class per character.

    An escaped literal parses to one ``LITERAL`` node per character, so its relaxed
    form is the concatenation of the characters' relaxed forms (a test checks this on
    every character up to U+07FF and the case-folding traps).
    """
    return "".join(_relaxed_char(char) for char in text)


@functools.lru_cache(maxsize=8192)
def _relaxed_char(char: str) -> str:
    return _class_text(*_literal_members(ord(char), True))


# Relaxed forms of generated patterns, given by the code that builds them (inventory
# rules: one home prefix plus an escaped name or line). Parsing thousands of them one
# by one is most of a large home's first-scan cost; the forms are identical.
# Process-wide, as a memo keyed by the pattern's own text, bounded at _MAX_REMEMBERED
# and cleared whole past it: an entry is a fact about that text alone (what relax()
# would derive, tests/detection/test_inventory_cache.py), so it cannot make a verdict
# depend on anything but the scan's inputs, and a miss only costs the parse. Owning it
# in the detector needs the generated rules to carry their relaxed forms into the plan
# (not done).
_REMEMBERED: dict[str, str] = {}
_MAX_REMEMBERED = 200_000


def remember_relaxed(pattern: str, relaxed: str) -> str:
    """Record ``relaxed`` as the relaxed form of ``pattern``; returns ``pattern``.

    Only for patterns whose form is derived exactly (a tested concatenation of
    :func:`relax` and :func:`relax_literal` parts), never as an approximation.
    """
    if len(_REMEMBERED) >= _MAX_REMEMBERED:
        _REMEMBERED.clear()
    _REMEMBERED[pattern] = relaxed
    return pattern


def remembered_relaxed(pattern: str) -> str | None:
    return _REMEMBERED.get(pattern)


def _seq(items: list[tuple[Any, Any]], *, ignore_case: bool) -> str:
    return "".join(_node(op, av, ignore_case=ignore_case) for op, av in items)


def _node(op: Any, av: Any, *, ignore_case: bool) -> str:
    if op is C.LITERAL:
        return _class_text(*_literal_members(av, ignore_case))
    if op is C.NOT_LITERAL:
        return _negated([(C.LITERAL, av)], ignore_case=ignore_case)
    if op is C.ANY:
        return _ANY
    if op is C.IN:
        return _in(av, ignore_case=ignore_case)
    if op is C.BRANCH:
        return "(?:" + "|".join(_seq(list(alt), ignore_case=ignore_case) for alt in av[1]) + ")"
    if op is C.SUBPATTERN:
        _group, add_flags, del_flags, sub = av
        scoped = ignore_case
        if add_flags & re.IGNORECASE:
            scoped = True
        if del_flags & re.IGNORECASE:
            scoped = False
        return "(?:" + _seq(list(sub), ignore_case=scoped) + ")"
    if op is C.ATOMIC_GROUP:
        return "(?:" + _seq(list(av), ignore_case=ignore_case) + ")"
    if op in _REPEATS:
        low, high, sub = av
        body = _seq(list(sub), ignore_case=ignore_case)
        if not body or high == 0:
            return ""
        if low == 1 and high == 1:
            return "(?:" + body + ")"
        if low == 0:
            return "(?:" + body + (")?" if high == 1 else ")*")
        return "(?:" + body + ")+"
    if op is C.AT:
        if av in (C.AT_BEGINNING, C.AT_BEGINNING_STRING, C.AT_BEGINNING_LINE):
            return "(?m:^)"
        if av in (C.AT_END, C.AT_END_STRING, C.AT_END_LINE):
            return "(?m:$)"
        if av in (C.AT_BOUNDARY, C.AT_NON_BOUNDARY):
            return ""
        raise Unrelaxable(f"anchor {av}")
    if op in (C.ASSERT, C.ASSERT_NOT):
        return ""
    if op is C.GROUPREF:
        return _ANY + "*"
    if op is C.GROUPREF_EXISTS:
        _group, yes, no = av
        alternatives = [_seq(list(yes), ignore_case=ignore_case)]
        alternatives.append(_seq(list(no), ignore_case=ignore_case) if no is not None else "")
        return "(?:" + "|".join(alternatives) + ")"
    raise Unrelaxable(f"regex construct {op}")


def _literal_members(code: int, ignore_case: bool) -> tuple[set[str], bool]:
    """(ASCII members, admits non-ASCII) of one literal character, superset-safe."""
    char = chr(code)
    if code < 128:
        members = {char}
        if ignore_case:
            members |= {char.lower(), char.upper()}
        partners = ASCII_CASE_PARTNERS.get(char.lower(), "") if ignore_case else ""
        return members | set(partners), False
    if not ignore_case:
        return {char}, False
    ascii_partners = {
        c
        for c in _ASCII
        if c.lower() in ASCII_CASE_PARTNERS and char in ASCII_CASE_PARTNERS[c.lower()]
    }
    return ascii_partners, True


def _item_ascii(op: Any, av: Any, ignore_case: bool) -> tuple[set[str], bool]:
    if op is C.LITERAL:
        members, non_ascii = _literal_members(av, ignore_case)
        return {m for m in members if ord(m) < 128}, non_ascii or any(
            ord(m) >= 128 for m in members
        )
    if op is C.RANGE:
        low, high = av
        members = {chr(c) for c in range(low, min(high, 127) + 1)}
        if ignore_case:
            members |= {c.swapcase() for c in members}
            for letter, partners in ASCII_CASE_PARTNERS.items():
                if any(low <= ord(p) <= high for p in partners):
                    members |= {letter, letter.upper()}
        return members, high >= 128
    if op is C.CATEGORY:
        if av not in _CATEGORY_ASCII:
            raise Unrelaxable(f"category {av}")
        return set(_CATEGORY_ASCII[av]), True
    raise Unrelaxable(f"class item {op}")


def _in(items: list[tuple[Any, Any]], *, ignore_case: bool) -> str:
    if items and items[0][0] is C.NEGATE:
        return _negated(items[1:], ignore_case=ignore_case)
    members: set[str] = set()
    non_ascii = False
    for op, av in items:
        item_members, item_non_ascii = _item_ascii(op, av, ignore_case)
        members |= item_members
        non_ascii = non_ascii or item_non_ascii
    # Case partners of ASCII letters in the class (ı, İ, ſ, K) are non-ASCII members.
    extra = "".join(
        ASCII_CASE_PARTNERS[m.lower()]
        for m in sorted(members)
        if ignore_case and m.lower() in ASCII_CASE_PARTNERS
    )
    return _class_text(members | set(extra), non_ascii)


def _negated(items: list[tuple[Any, Any]], *, ignore_case: bool) -> str:
    """A negated class: exact on ASCII when every item is ASCII, else anything."""
    excluded: set[str] = set()
    for op, av in items:
        if op is C.LITERAL and av < 128:
            excluded |= {chr(av).lower(), chr(av).upper()} if ignore_case else {chr(av)}
        elif op is C.RANGE and av[1] < 128:
            span = {chr(c) for c in range(av[0], av[1] + 1)}
            excluded |= span | ({c.swapcase() for c in span} if ignore_case else set())
        elif op is C.CATEGORY and av in _CATEGORY_ASCII:
            excluded |= _CATEGORY_ASCII[av]
        else:
            return _ANY
    return _class_text(set(_ASCII) - excluded, True)


def _class_text(members: set[str], non_ascii: bool) -> str:
    if not members and not non_ascii:
        raise Unrelaxable("a class that matches nothing")
    parts = [m if m.isascii() and m.isalnum() else f"\\x{{{ord(m):x}}}" for m in sorted(members)]
    if non_ascii:
        parts.append(_NON_ASCII)
    return "[" + "".join(parts) + "]"
