"""A multi-pattern prefilter: which rule patterns *can* match a piece of text.

Every distinct pattern of a ruleset is relaxed into an RE2 superset (see ``_relax``)
and all of them go into RE2 Sets. One Set call over a whole chunk of surfaces answers
"which patterns might match here" at hundreds of MB/s; the exact engine then runs only
those patterns, only on the surfaces the Set names. A pattern RE2 cannot take is
reported as a candidate everywhere, so the prefilter can cost speed but never a match.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

import re2

from benchguard.detection._relax import Unrelaxable, relax, remembered_relaxed
from benchguard.detection._shipped_relaxed import shipped_forms

# RE2 program memory per Set. A Set that does not fit is split in two, recursively.
_SET_MAX_MEM = 64 << 20
_MIN_SPLIT = 1


def _options() -> re2.Options:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = _SET_MAX_MEM
    return options


@dataclass(frozen=True)
class Prefilter:
    """Candidate lookup for a fixed list of distinct pattern strings (ids = positions)."""

    patterns: tuple[str, ...]
    sets: tuple[tuple[re2.Set, tuple[int, ...]], ...]
    always: frozenset[int]
    index: dict[str, int]

    def candidates(self, text: str) -> frozenset[int]:
        """Ids of the patterns that might match ``text`` (a superset of those that do)."""
        try:
            data = text.encode("utf-8")
        except UnicodeEncodeError:
            data = None
        return self.candidates_in(data)

    def candidates_in(self, data: bytes | None) -> frozenset[int]:
        """:meth:`candidates` of text already encoded to UTF-8; ``None`` for text with
        lone surrogates, which RE2 cannot read: every pattern is then a candidate and the
        exact engine decides."""
        if data is None:
            return frozenset(range(len(self.patterns)))
        found: set[int] = set(self.always)
        for compiled, ids in self.sets:
            hits = compiled.Match(data)
            if hits:
                found.update(ids[hit] for hit in hits)
        return frozenset(found)

    def narrowed(self, ids: frozenset[int]) -> tuple[re2.Set, tuple[int, ...]] | None:
        """One Set of just the relaxed forms of ``ids`` (patterns the Sets hold), with
        the pattern id of each of its entries; ``None`` when one has no relaxed form or
        RE2 refuses the Set. Each entry matches on its own merits, as in the full Sets,
        so this Set names exactly the ``ids`` the full ones would name."""
        ordered = tuple(sorted(ids))
        texts = tuple(relaxed_form(self.patterns[pattern_id]) for pattern_id in ordered)
        if any(text is None for text in texts):
            return None
        compiled = _narrow_set(cast("tuple[str, ...]", texts))
        return None if compiled is None else (compiled, ordered)

    def extended(self, extra: tuple[str, ...]) -> Prefilter:
        """This prefilter plus ``extra`` (patterns it lacks) in Sets of their own.

        Grouping never changes a pattern's candidates (each relaxed form is matched on
        its own merits), so the result answers exactly as a fresh build over all the
        patterns would, without recompiling the Sets already built.
        """
        added = build_prefilter(extra)
        offset = len(self.patterns)
        return Prefilter(
            patterns=self.patterns + extra,
            sets=self.sets
            + tuple((compiled, tuple(i + offset for i in ids)) for compiled, ids in added.sets),
            always=self.always | {i + offset for i in added.always},
            index={**self.index, **{p: i + offset for p, i in added.index.items()}},
        )


@functools.lru_cache(maxsize=64)
def build_prefilter(patterns: tuple[str, ...]) -> Prefilter:
    """Relax and compile ``patterns`` into as few RE2 Sets as fit their memory budget."""
    relaxed: list[tuple[int, str]] = []
    always: set[int] = set()
    for index, pattern in enumerate(patterns):
        text = relaxed_form(pattern)
        if text is None:
            always.add(index)
        else:
            relaxed.append((index, text))
    sets: list[tuple[re2.Set, tuple[int, ...]]] = []
    _compile_sets(relaxed, sets, always, _options())
    return Prefilter(
        patterns=patterns,
        sets=tuple(sets),
        always=frozenset(always),
        index={pattern: position for position, pattern in enumerate(patterns)},
    )


@functools.lru_cache(maxsize=65536)
def relaxed_form(pattern: str) -> str | None:
    """The pattern's RE2 superset, or ``None`` when it must run everywhere."""
    known = remembered_relaxed(pattern)
    if known is not None:
        # Built from parts that each compile; should the Set still refuse it, the
        # split below isolates it and it runs everywhere (slower, never wrong).
        return known or None
    shipped = shipped_forms()
    if pattern in shipped:
        # Derived once by derive() below for a shipped pattern (_shipped_relaxed).
        return shipped[pattern]
    return derive(pattern)


def derive(pattern: str) -> str | None:
    """:func:`relaxed_form` worked out from the pattern's text alone."""
    try:
        text = relax(pattern)
        if not text:
            return None
        re2.compile(text, _options())
    except (Unrelaxable, re2.error, RecursionError):
        return None
    return text


@functools.lru_cache(maxsize=256)
def _narrow_set(texts: tuple[str, ...]) -> re2.Set | None:
    """``texts`` (relaxed forms) in one Set with the full Sets' options; ``None`` if RE2
    refuses it. A function of the texts alone, so it is cached by them."""
    compiled = re2.Set.SearchSet(_options())
    try:
        for text in texts:
            compiled.Add(text)
        compiled.Compile()
    except re2.error:
        return None
    return compiled


def _compile_sets(
    group: Sequence[tuple[int, str]],
    out: list[tuple[re2.Set, tuple[int, ...]]],
    always: set[int],
    options: re2.Options,
) -> None:
    if not group:
        return
    compiled = re2.Set.SearchSet(options)
    try:
        for _, text in group:
            compiled.Add(text)
        compiled.Compile()
    except re2.error:
        if len(group) <= _MIN_SPLIT:
            always.update(index for index, _ in group)
            return
        middle = len(group) // 2
        _compile_sets(group[:middle], out, always, options)
        _compile_sets(group[middle:], out, always, options)
        return
    out.append((compiled, tuple(index for index, _ in group)))
