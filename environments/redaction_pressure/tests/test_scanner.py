"""The scanner: rule chaining, exact character provenance, and its bounds."""

from __future__ import annotations

import json
import random

import pytest
import regex

from redaction_pressure.records import LabelledRecord
from redaction_pressure.rules import CompiledRule, parse_reply
from redaction_pressure.scanner import MAX_MATCHES, scan_records


def _rules(*rules: tuple[str, str]) -> tuple[CompiledRule, ...]:
    parsed = parse_reply(
        json.dumps({"rules": [{"pattern": p, "replacement": r} for p, r in rules]})
    )
    assert parsed.errors == ()
    return parsed.rules


def _record(text: str, index: int = 0) -> LabelledRecord:
    return LabelledRecord(index=index, kind="log", text=text)


def _reference(rules: tuple[CompiledRule, ...], text: str) -> tuple[str, set[int]]:
    """Per-character provenance, the slow obvious way: one source index (or None) per char."""
    origin: list[int | None] = list(range(len(text)))
    for rule in rules:
        spans = [m.span() for m in rule.compiled.finditer(text)]
        for start, end in reversed(spans):
            origin[start:end] = [None] * len(rule.replacement)
            text = text[:start] + rule.replacement + text[end:]
    return text, {i for i in origin if i is not None}


def _kept_indices(kept: tuple[tuple[int, int], ...]) -> set[int]:
    return {i for start, end in kept for i in range(start, end)}


def test_later_rule_inside_inserted_text_removes_no_source_characters() -> None:
    """Guards against counting the letters of an inserted [REDACTED] as removed source text."""
    text = "key=SECRET1 and RED"
    rules = _rules((r"SECRET\d", "[REDACTED]"), ("REDACTED", ""), (r"\[\]", ""))
    scan = scan_records(rules, [_record(text)]).records[0]
    assert scan.text == "key= and RED"
    assert scan.kept == ((0, 4), (11, 19))


def test_match_spanning_source_and_inserted_text() -> None:
    """A match across an inserted block and source characters removes only the source ones."""
    text = "aaXbb"
    rules = _rules(("X", "[REDACTED]"), (r"a\[RED", ""))
    scan = scan_records(rules, [_record(text)]).records[0]
    assert scan.text == "aACTED]bb"
    assert scan.kept == ((0, 1), (3, 5))


def test_deletion_joins_neighbours_for_later_rules() -> None:
    """After an "" replacement, a later rule can match across the join; both sides count."""
    text = "xxabcyy"
    rules = _rules(("abc", ""), ("xyy", ""))
    scan = scan_records(rules, [_record(text)]).records[0]
    assert scan.text == "x"
    assert scan.kept == ((0, 1),)


def test_records_are_independent_and_ordered() -> None:
    records = [_record("a1 b2", 3), _record("no match", 4), _record("c3", 9)]
    outcome = scan_records(_rules((r"[a-c]\d", "[REDACTED]")), records)
    assert [s.record_index for s in outcome.records] == [3, 4, 9]
    assert [s.text for s in outcome.records] == ["[REDACTED] [REDACTED]", "no match", "[REDACTED]"]
    assert outcome.records[1].kept == ((0, 8),)
    assert outcome.matches == 3


ALPHABET = "abAB[]RED_ -"
RANDOM_PATTERNS = [
    "a+",
    "b",
    "[ab]{2}",
    "RED",
    r"\]",
    r"\[R",
    "A[^ ]+",
    "(?<=a)b",
    "a(?=B)",
    "(?i)ab",
    "D_",
    "E",
    r"\w\W",
    "-+ ",
]


@pytest.mark.parametrize("seed", range(40))
def test_provenance_matches_a_per_character_reference(seed: int) -> None:
    """Guards the segment bookkeeping against off-by-one errors over random chains."""
    rng = random.Random(seed)
    text = "".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 60)))
    chosen = [
        (rng.choice(RANDOM_PATTERNS), rng.choice(["[REDACTED]", ""]))
        for _ in range(rng.randint(1, 6))
    ]
    rules = _rules(*chosen)
    expected_text, expected_kept = _reference(rules, text)
    scan = scan_records(rules, [_record(text)]).records[0]
    assert scan.text == expected_text
    assert _kept_indices(scan.kept) == expected_kept
    assert all(a < b for a, b in scan.kept)
    assert all(scan.kept[i][1] < scan.kept[i + 1][0] for i in range(len(scan.kept) - 1))


@pytest.mark.parametrize("seed", range(10))
def test_output_equals_a_chain_of_regex_sub(seed: int) -> None:
    """The prefilter and the search loop must not change what the rules produce."""
    rng = random.Random(1000 + seed)
    texts = ["".join(rng.choice(ALPHABET + "é\u212a") for _ in range(80)) for _ in range(5)]
    rules = _rules(*[(p, rng.choice(["[REDACTED]", ""])) for p in rng.sample(RANDOM_PATTERNS, 6)])
    outcome = scan_records(rules, [_record(t, i) for i, t in enumerate(texts)])
    for text, scan in zip(texts, outcome.records, strict=True):
        for rule in rules:
            text = rule.compiled.sub(rule.replacement, text)
        assert scan.text == text


def test_excessive_matches_fail_closed() -> None:
    """Guards against per-character rules flooding the scorer (and growing the text)."""
    outcome = scan_records(_rules(("[a-z]", "")), [_record("a" * (MAX_MATCHES + 1))])
    assert not outcome.valid
    assert outcome.records == ()
    assert f"more than {MAX_MATCHES} matches" in outcome.errors[0]


def test_match_cap_is_shared_across_records() -> None:
    records = [_record("a" * (MAX_MATCHES // 2 + 1), i) for i in range(2)]
    outcome = scan_records(_rules(("a", "")), records)
    assert "rules[0]: more than" in outcome.errors[0]


def test_replacement_growth_is_bounded_by_the_match_cap() -> None:
    """Guards against a chain that re-matches its own [REDACTED] to grow text geometrically."""
    rules = _rules(*[("[RDA]", "[REDACTED]")] * 24)
    outcome = scan_records(rules, [_record("R")])
    assert not outcome.valid
    assert "excessive matches" in outcome.errors[0]


def test_zero_width_match_at_runtime_fails_closed() -> None:
    """The backstop behind validation: a rule that matches empty anyway is an error."""
    unchecked = CompiledRule(
        index=0,
        pattern=r"\b",
        replacement="",
        compiled=regex.compile(r"\b"),
        required_literals=None,
        literals_ignore_case=False,
    )
    outcome = scan_records([unchecked], [_record("some words", 5)])
    assert outcome.errors == (
        "rules[0]: zero-width match at offset 0 of evaluation record 5; "
        "every match must remove at least one character",
    )


def test_exhausted_backstop_fails_closed_before_any_call_as_an_environment_error() -> None:
    outcome = scan_records(_rules(("a", "")), [_record("a")], budget_s=0.0)
    assert outcome.environment_error
    assert outcome.errors == (
        "environment: the CPU backstop of 0 s fired while rules[0] ran; the environment "
        "failed to score this reply (it was not judged invalid)",
    )


def test_no_rules_keep_everything() -> None:
    outcome = scan_records((), [_record("abc"), _record("")])
    assert [s.kept for s in outcome.records] == [((0, 3),), ()]
    assert outcome.valid and outcome.matches == 0


def test_backstop_is_cpu_time_not_wall_time(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards load-independence: wall time racing ahead (a busy machine) changes nothing;
    only the CPU clock can exhaust the budget."""
    import itertools
    import time

    wall = itertools.count(0.0, 100.0)
    monkeypatch.setattr(time, "perf_counter", lambda: next(wall))
    outcome = scan_records(_rules(("a", "")), [_record("banana")], budget_s=1.0)
    assert outcome.valid and outcome.records[0].text == "bnn"

    cpu = itertools.count(0.0, 0.6)
    monkeypatch.setattr(time, "process_time", lambda: next(cpu))
    outcome = scan_records(_rules(("a", "")), [_record("banana")], budget_s=1.0)
    assert not outcome.valid and "CPU backstop of 1 s fired" in outcome.errors[0]
