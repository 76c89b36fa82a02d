"""Which profiles fit a log: ``--profile auto`` (the default for ``scan`` and ``score``)
and the union of repeated ``--profile`` values.

``auto`` recognises the benchmark from the log itself and combines the matching
profiles with the generic one (reward tampering and benchmark seeking, in every
benchmark). It reads a bounded head of the file (``workflows._log_head``: never the
whole of a large log; an archive's members decompressed in bounded reads) and the
format the importers detected; every choice carries the reason it was made, and
the scan's summary prints them. When nothing is recognised the project's default
profile (``benchguard``) stands in, so an unknown log is never scanned with less than
before ``auto`` existed.

A union keeps every rule of every named profile, in the order named. Two profiles can
carry a rule with one id (``harness-repo/path`` in several): when the two agree on
everything but their patterns, the second's patterns are appended to the first's (one
rule, one id, both layouts); otherwise the second is kept as ``<id>@<profile>``.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import re2
import regex

from benchguard.detection.models import Rule
from benchguard.detection.rules import (
    DEFAULT_PROFILE,
    RulesetError,
    load_extra_rules,
    load_profile,
    profile_names,
)

AUTO = "auto"
GENERIC_PROFILE = "generic"
# Format (as the importers name it) -> the profile its framework's material needs.
FORMAT_PROFILES: dict[str, tuple[str, str]] = {
    "inspect": ("inspect", "an Inspect log"),
    "verifiers": ("verifiers", "a verifiers trace"),
    "swe-agent": ("swe-bench", "a SWE-agent trajectory"),
    "mini-swe-agent": ("swe-bench", "a mini-swe-agent trajectory"),
    "atif": ("terminal-bench", "a Harbor ATIF trajectory"),
}

# Signs of each benchmark in the log's text: (profile, pattern, what it shows). Each
# pattern is a layout or an id shape only that benchmark uses, never a word.
# Each sign: (profile, a literal the text must hold, the pattern, what it shows). The
# literal is tested first (a C substring search), so the pattern runs only where it can
# match: a log's head is up to megabytes, and most signs are absent.
_SIGNS: tuple[tuple[str, str, str, str], ...] = (
    ("swe-bench", "/testbed", r"(?<![\w/])/testbed\b", "the /testbed checkout"),
    ("swe-bench", '"instance_id"', r'"instance_id"\s*:', "SWE-bench instance ids"),
    (
        "swe-bench",
        "__",
        r"(?<![\w.-])[A-Za-z][\w.-]{0,60}__[A-Za-z][\w.-]{0,60}-\d{1,6}(?![\w.-])",
        "a SWE-bench instance id (owner__repo-N)",
    ),
    (
        "terminal-bench",
        "test_outputs.py",
        r"(?<![\w.-])tests/test_outputs\.py\b",
        "Terminal-Bench tests/test_outputs.py",
    ),
    (
        "terminal-bench",
        ".sh",
        r"(?<![\w.-])(?:solution\.sh|run-tests\.sh)\b",
        "solution.sh / run-tests.sh",
    ),
    # Inspect and Harbor name tasks and datasets with an underscore (terminal_bench_2).
    ("terminal-bench", "terminal", r"(?<![\w.-])terminal[-_]bench\b", "the terminal-bench name"),
    (
        "terminal-bench",
        "/tests/",
        r"(?<![\w/.-])/tests/[\w.-]+\.(?:py|sh)\b",
        "a /tests/ grader script",
    ),
    ("devops-bench", "devops", r"(?<![\w.-])devops[-_]bench\b", "the devops-bench layout"),
    (
        "devops-bench",
        "",
        r"(?<![\w.-])(?:bench\.env|matrix-runs)\b",
        "devops-bench's bench.env / matrix-runs",
    ),
    (
        "inspect",
        '"eval"',
        r'"eval"\s*:\s*\{[^{}]{0,2000}"task"\s*:',
        "an Inspect eval header (task name)",
    ),
    ("inspect", "inspect_", r"(?<![\w.-])inspect_(?:ai|evals)\b", "Inspect task modules"),
    ("verifiers", "outputs/evals", r"(?<![\w.-])outputs/evals\b", "vf-eval outputs"),
    (
        "benchguard",
        '"',
        r'"(?:scan_context|integrity_checked|cheating_report)"\s*:',
        "benchguard results",
    ),
    ("benchguard", "benchguard", r"(?<![\w.-])benchguard\b", "the benchguard layout"),
)
# Literals for the signs whose own literal is too common to help.
_ANY_OF: dict[str, tuple[str, ...]] = {
    "devops-bench's bench.env / matrix-runs": ("bench.env", "matrix-runs"),
    "benchguard results": ('"scan_context"', '"integrity_checked"', '"cheating_report"'),
}


@dataclass(frozen=True)
class ProfileChoice:
    """The profiles a scan used, why each was chosen, and their combined rules."""

    names: tuple[str, ...]
    reasons: tuple[str, ...]
    rules: tuple[Rule, ...]

    def describe(self) -> str:
        """One line for the summary: ``swe-bench (the /testbed checkout), generic (...)``."""
        return ", ".join(
            f"{name} ({reason})" for name, reason in zip(self.names, self.reasons, strict=True)
        )


def has_generic() -> bool:
    return GENERIC_PROFILE in profile_names()


def resolve_profiles(
    names: Sequence[str],
    *,
    text: str = "",
    format_name: str | None = None,
    extra_rules: Path | None = None,
) -> ProfileChoice:
    """The union of ``names`` (``auto`` expanded for a log whose head is ``text``, of
    ``format_name``), then the extra rules. Empty ``names`` means ``auto``.
    :class:`RulesetError` for an unknown profile or a bad rules file."""
    chosen: list[tuple[str, str]] = []
    for name in names or (AUTO,):
        if name == AUTO:
            chosen.extend(recognise(text, format_name))
        else:
            chosen.append((name, "named"))
    if has_generic():
        chosen.append((GENERIC_PROFILE, "every benchmark"))
    unique: dict[str, str] = {}
    for name, reason in chosen:
        unique.setdefault(name, reason)
    rules = _union_of(tuple(unique))
    if extra_rules is not None:
        extras = load_extra_rules(Path(extra_rules))
        taken = {rule.id for rule in rules}
        for rule in extras:
            if rule.id in taken:
                raise RulesetError(
                    f"{extra_rules}: id {rule.id!r} duplicates a rule of the chosen profiles"
                )
        rules += extras
    return ProfileChoice(tuple(unique), tuple(unique.values()), rules)


def recognise(text: str, format_name: str | None) -> list[tuple[str, str]]:
    """The profiles whose benchmark a log shows (``text``: its head, as the workflow
    read it, bounded), each with the first sign seen; the default profile when none is
    recognised. Pure."""
    found: dict[str, str] = {}
    if format_name in FORMAT_PROFILES:
        profile, why = FORMAT_PROFILES[format_name]
        found[profile] = why
    present = _present_needles(text)
    for profile, literal, pattern, why in _SIGNS:
        if profile in found:
            continue
        needles = _ANY_OF.get(why, (literal,))
        if not any(needle in present for needle in needles):
            continue
        if _compiled(pattern).search(text):
            found[profile] = why
    if not found:
        return [(DEFAULT_PROFILE, "no benchmark recognised: the default profile")]
    order = {name: i for i, name in enumerate(profile_names())}
    return sorted(found.items(), key=lambda item: (order.get(item[0], len(order)), item[0]))


def _needles() -> tuple[str, ...]:
    return tuple(
        dict.fromkeys(n for _, literal, _, why in _SIGNS for n in _ANY_OF.get(why, (literal,)))
    )


@functools.lru_cache(maxsize=1)
def _needle_set() -> tuple[re2.Set, tuple[str, ...]]:
    """Every sign's literals in one RE2 Set: one pass over a head of megabytes says
    which occur, where a substring search per literal read it some twenty times."""
    options = re2.Options()
    options.log_errors = False
    needles = _needles()
    compiled = re2.Set.SearchSet(options)
    for needle in needles:
        compiled.Add(re2.escape(needle))
    compiled.Compile()
    return compiled, needles


def _present_needles(text: str) -> frozenset[str]:
    """The literals of :data:`_SIGNS` that ``text`` holds (exactly ``needle in text``:
    a literal occurs in a text when its UTF-8 bytes occur in the text's)."""
    try:
        data = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: the substring tests decide
        return frozenset(n for n in _needles() if n in text)
    compiled, needles = _needle_set()
    return frozenset(needles[hit] for hit in compiled.Match(data) or ())


def _union_of(names: tuple[str, ...]) -> tuple[Rule, ...]:
    """The union for ``names``; built-in unions remembered, so files with one choice
    share rule objects (and the detector's plan for them)."""
    if all(name in profile_names() for name in names):
        return _builtin_union(names)
    return union_rules((name, load_profile(name)) for name in names)


@functools.lru_cache(maxsize=64)
def _builtin_union(names: tuple[str, ...]) -> tuple[Rule, ...]:
    return union_rules((name, load_profile(name)) for name in names)


def union_rules(profiles: Iterable[tuple[str, tuple[Rule, ...]]]) -> tuple[Rule, ...]:
    """Every rule of every profile, in order; same-id rules merged (see the module doc)."""
    merged: dict[str, Rule] = {}
    for profile, rules in profiles:
        for rule in rules:
            kept = merged.get(rule.id)
            if kept is None:
                merged[rule.id] = rule
            elif kept == rule:
                continue
            elif _same_but_patterns(kept, rule):
                patterns = tuple(dict.fromkeys(kept.patterns + rule.patterns))
                merged[rule.id] = kept.model_copy(update={"patterns": patterns})
            else:
                alias = f"{rule.id}@{profile}"
                if alias not in merged:
                    merged[alias] = rule.model_copy(update={"id": alias})
    return tuple(merged.values())


def _same_but_patterns(a: Rule, b: Rule) -> bool:
    return a.model_copy(update={"patterns": b.patterns, "description": b.description}) == b


@functools.lru_cache(maxsize=64)
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern)


__all__ = [
    "AUTO",
    "FORMAT_PROFILES",
    "GENERIC_PROFILE",
    "ProfileChoice",
    "recognise",
    "resolve_profiles",
    "union_rules",
]
