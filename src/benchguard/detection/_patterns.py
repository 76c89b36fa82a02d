"""Rule regexes: load-time safety checks and the exact matching engine.

Rule patterns come from users' YAML, so they are untrusted. Two bounds apply:

* at load time, :func:`check_pattern` rejects what could hurt before any text is seen:
  over-long patterns, repeat counts that make the ``regex`` compiler expand the program
  into hundreds of megabytes, patterns that match the empty string (they would flag
  every record), and anything stdlib ``re`` or ``regex`` cannot compile;
* at scan time the exact engine is ``regex`` with a per-call ``timeout`` computed from
  the record's deadline, so catastrophic backtracking ends the scan of that record
  (reported as incomplete) instead of hanging the batch.
"""

from __future__ import annotations

import functools
import importlib
import re
from typing import Any

import regex

# The stdlib regex parser: private but stable since 3.11; it is typed Any here.
sre_parser: Any = importlib.import_module("re._parser")
sre_constants: Any = importlib.import_module("re._constants")

# Flags every rule pattern is matched with (the reference's IGNORECASE | MULTILINE).
MATCH_FLAGS = regex.IGNORECASE | regex.MULTILINE
STDLIB_MATCH_FLAGS = re.IGNORECASE | re.MULTILINE

# Longest pattern a rule may carry. Generated fingerprints stay far below it.
MAX_PATTERN_CHARS = 1024
# Largest single repeat count ({n} / {m,n}); RE2 uses the same limit.
MAX_REPEAT_COUNT = 1000
# Largest product of nested bounded repeat counts: (?:a{1000}){1000} takes the
# ``regex`` compiler 0.35 s and ~270 MB, while 10,000 compiles in about a millisecond.
MAX_NESTED_REPEAT_PRODUCT = 10_000

# Probes for zero-width matches: a pattern that matches nothing but position would
# flag every record it scans.
_EMPTY_MATCH_PROBES = ("", "x y\n", "\n")


# Patterns built by this package from escaped literals (inventory and material rules).
# They are safe by construction, so the costly load-time checks are skipped for them;
# the exact engine still compiles them lazily, only when the prefilter names them.
# Process-wide, keyed by the pattern's text, bounded at _MAX_TRUSTED and cleared whole
# past it. It cannot change a verdict: the same text read from a file is the same
# escaped literal (safe whoever wrote it), and every pattern the builders trust passes
# the check it skips (tests/detection/test_inventory_cache.py), so a miss after a clear
# only runs that check. Owning it in the detector needs the generated rules to carry
# the mark into the plan (a field on ``record.rules.Rule``: not done).
_TRUSTED: set[str] = set()
_MAX_TRUSTED = 200_000


def trust_generated(pattern: str) -> str:
    """Record ``pattern`` as generated from escaped text; returns it unchanged."""
    if len(_TRUSTED) >= _MAX_TRUSTED:
        _TRUSTED.clear()
    _TRUSTED.add(pattern)
    return pattern


def is_trusted(pattern: str) -> bool:
    return pattern in _TRUSTED


class PatternError(ValueError):
    """A rule pattern that is not allowed; the message says why."""


def check_pattern(pattern: str) -> None:
    """Raise :class:`PatternError` unless ``pattern`` is safe to compile and scan with."""
    if not isinstance(pattern, str) or not pattern:
        raise PatternError("must be a non-empty string")
    if len(pattern) > MAX_PATTERN_CHARS:
        raise PatternError(f"is {len(pattern)} characters long; the limit is {MAX_PATTERN_CHARS}")
    try:
        # stdlib parsing never expands repeats, so it is a cheap, safe first gate.
        parsed = sre_parser.parse(pattern, STDLIB_MATCH_FLAGS)
    except (re.error, OverflowError, RecursionError) as exc:
        raise PatternError(f"is not a valid regex: {exc}") from None
    product = _max_repeat_product(list(parsed), 1)
    if product > MAX_NESTED_REPEAT_PRODUCT:
        raise PatternError(
            f"nests repeat counts to a product of {product}; the limit is "
            f"{MAX_NESTED_REPEAT_PRODUCT}"
        )
    try:
        compiled = exact_pattern(pattern)
    except (regex.error, OverflowError, RecursionError) as exc:
        raise PatternError(f"is not a valid regex: {exc}") from None
    for probe in _EMPTY_MATCH_PROBES:
        try:
            hits = compiled.finditer(probe, timeout=0.5)
            if any(m.start() == m.end() for m in hits):
                raise PatternError("can match the empty string, so it would flag every record")
        except TimeoutError:
            raise PatternError("takes too long on a tiny probe string") from None


@functools.lru_cache(maxsize=8192)
def pattern_problem(pattern: str) -> str | None:
    """Why :func:`check_pattern` rejects ``pattern``, or ``None``; cached per process."""
    try:
        check_pattern(pattern)
    except PatternError as exc:
        return str(exc)
    return None


def _max_repeat_product(items: list[tuple[Any, Any]], outer: int) -> int:
    """The largest product of bounded repeat counts along any nesting path."""
    worst = outer
    for op, av in items:
        if op in (
            sre_constants.MAX_REPEAT,
            sre_constants.MIN_REPEAT,
            sre_constants.POSSESSIVE_REPEAT,
        ):
            low, high, sub = av
            bound = low if high == sre_constants.MAXREPEAT else high
            if bound > MAX_REPEAT_COUNT:
                raise PatternError(f"repeats {bound} times; the limit is {MAX_REPEAT_COUNT}")
            worst = max(worst, _max_repeat_product(list(sub), outer * max(bound, 1)))
        else:
            for child in _children(op, av):
                worst = max(worst, _max_repeat_product(child, outer))
    return worst


def _children(op: Any, av: Any) -> list[list[tuple[Any, Any]]]:
    if op is sre_constants.BRANCH:
        return [list(alt) for alt in av[1]]
    if op is sre_constants.SUBPATTERN:
        return [list(av[3])]
    if op in (sre_constants.ASSERT, sre_constants.ASSERT_NOT):
        return [list(av[1])]
    if op is sre_constants.ATOMIC_GROUP:
        return [list(av)]
    if op is sre_constants.GROUPREF_EXISTS:
        return [list(av[1])] + ([list(av[2])] if av[2] is not None else [])
    return []


@functools.lru_cache(maxsize=4096)
def exact_pattern(pattern: str) -> regex.Pattern[str]:
    """The compiled exact matcher for a (checked) rule pattern, cached per process."""
    return regex.compile(pattern, MATCH_FLAGS)
