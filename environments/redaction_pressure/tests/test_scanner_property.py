"""The scanner agrees with the regex engine, whatever syntax a rule uses (issue 12, part 2).

The scanner skips a rule on a record when the record lacks every literal the analyser
says each match requires. A wrong literal (``\\101`` read as a backreference plus ``1``
instead of the character ``A``) silently skips a rule that would match, and a reply
scores as if it had redacted nothing. Guards: patterns drawn from the whole syntax the
``regex`` module accepts, run by the scanner and by a plain ``regex.sub`` chain over
generated records; whenever the scanner accepts the rules, both outputs are equal.
"""

from __future__ import annotations

import json

import regex
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from redaction_pressure.records import LabelledRecord
from redaction_pressure.rules import parse_reply
from redaction_pressure.scanner import scan_records

# Characters that make case folding, Unicode classes and octal escapes matter.
_TEXT_ALPHABET = "abcxyzABCXYZ019_-.: \n\t\x00\x08\x0bé\u00c9ßẞſKKİı\u0100ǿ😀[]{}()\\/|*+?^$#"


def _escape_literal(char: str) -> str:
    return "\\" + char if char in "\\^$.|?*+()[]{}#" else char


_literal = st.sampled_from(_TEXT_ALPHABET).map(_escape_literal)
_escape = st.one_of(
    st.sampled_from(
        [
            r"\d",
            r"\D",
            r"\w",
            r"\W",
            r"\s",
            r"\S",
            r"\X",
            r"\t",
            r"\n",
            r"\r",
            r"\f",
            r"\v",
            r"\a",
            r"\b",
            r"\B",
            r"\A",
            r"\Z",
            r"\z",
            r"\G",
            r"\m",
            r"\M",
            r"\0",
            r"\00",
            r"\012",
            r"\101",
            r"\141",
            r"\1011",
            r"\777",
            r"\400",
            r"\377",
            r"\x41",
            r"\x0a",
            r"\u00e9",
            r"\U0001F600",
            r"\u017f",
            r"\p{L}",
            r"\pL",
            r"\P{Lu}",
            r"\p{Script=Latin}",
            r"\p{Nd}",
            r"\-",
            r"\.",
            r"\#",
            r"\ ",
            r"\N{LATIN SMALL LETTER A}",
        ]
    ),
    st.sampled_from([r"\K", r"\Q", r"\R", r"\e", r"\8"]),  # refused by the analyser
    # Octal, hex and \\u escapes of characters the records hold, so they match.
    st.sampled_from([c for c in _TEXT_ALPHABET if 0o100 <= ord(c) <= 0o777]).map(
        lambda c: f"\\{ord(c):03o}"
    ),
    st.sampled_from([c for c in _TEXT_ALPHABET if ord(c) < 0x100]).map(
        lambda c: f"\\x{ord(c):02x}"
    ),
    st.sampled_from(_TEXT_ALPHABET).map(lambda c: f"\\U{ord(c):08x}"),
)
_class_item = st.one_of(
    st.sampled_from(list("abcxyzAXZ019_-é")),
    st.sampled_from([r"a-z", r"A-Z", r"0-9", r"\d", r"\s", r"\w", r"\W", r"[:alpha:]"]),
    st.sampled_from([r"[:^digit:]", r"\]", r"\[", r"\-", r"\101", r"\x41", r"\u00e9", r"\b"]),
    st.sampled_from([r"\p{L}", r"\n", r"\t", r"\0", r"\012", r"\\", "^", "&&", "--"]),
)
_char_class = st.builds(
    lambda negate, items: "[" + ("^" if negate else "") + "".join(items) + "]",
    st.booleans(),
    st.lists(_class_item, min_size=1, max_size=4),
)
_atom = st.one_of(_literal, _escape, _char_class, st.sampled_from([".", "^", "$"]))
_quantifier = st.one_of(
    st.just(""),
    st.sampled_from(["*", "+", "?", "{2}", "{1,3}", "{,2}", "{2,}", "{0}", "{1}"]),
).flatmap(lambda q: st.sampled_from([q, q + "?", q + "+"]) if q else st.just(q))
_GROUP_HEADS = [
    "(",
    "(?:",
    "(?>",
    "(?P<g>",
    "(?<h>",
    "(?=",
    "(?!",
    "(?<=",
    "(?<!",
    "(?i:",
    "(?s:",
    "(?m:",
    "(?-i:",
    "(?i-s:",
]
_REFUSED_GROUP_HEADS = ["(?x:", "(?V1:", "(?|", "(?#"]


def _sequences(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    piece = st.builds(lambda a, q: a + q, st.one_of(_atom, inner), _quantifier)
    return st.lists(piece, min_size=1, max_size=4).map("".join)


_pattern_body = st.recursive(
    _sequences(st.nothing()),
    lambda inner: st.one_of(
        st.builds(lambda head, body: head + body + ")", st.sampled_from(_GROUP_HEADS), inner),
        st.builds(lambda h, b: h + b + ")", st.sampled_from(_REFUSED_GROUP_HEADS), inner),
        st.builds(lambda a, b: a + "|" + b, inner, inner),
        _sequences(inner),
        st.builds(lambda body, ref: body + ref, inner, st.sampled_from([r"\1", r"(?P=g)", r"\2"])),
    ),
    max_leaves=6,
)
_pattern = st.builds(
    lambda flags, body: flags + body,
    st.sampled_from(["", "", "(?i)", "(?s)", "(?m)", "(?im)", "(?x)"]),
    _pattern_body,
)
_rule = st.fixed_dictionaries(
    {"pattern": _pattern, "replacement": st.sampled_from(["[REDACTED]", ""])}
)
_texts = st.lists(st.text(alphabet=_TEXT_ALPHABET, max_size=40), min_size=1, max_size=4)


def _plain_chain(rules: list[dict[str, str]], text: str) -> str:
    for rule in rules:
        text = regex.sub(rule["pattern"], rule["replacement"], text, flags=regex.VERSION0)
    return text


@settings(
    max_examples=300,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(rules=st.lists(_rule, min_size=1, max_size=2), texts=_texts)
@example(rules=[{"pattern": r"\101", "replacement": "[REDACTED]"}], texts=["xAy"])
@example(rules=[{"pattern": r"(?i)\101", "replacement": ""}], texts=["a", "A"])
@example(rules=[{"pattern": r"[\101]b", "replacement": ""}], texts=["Ab"])
@example(rules=[{"pattern": r"x\777", "replacement": ""}], texts=["x\u01ff"])
def test_scanner_equals_plain_regex_sub(rules: list[dict[str, str]], texts: list[str]) -> None:
    parsed = parse_reply(json.dumps({"rules": rules}))
    assume(parsed.valid)
    records = [LabelledRecord(index=i, kind="property", text=text) for i, text in enumerate(texts)]
    outcome = scan_records(parsed.rules, records, budget_s=30.0)
    assume(outcome.valid)  # a runtime zero-width match fails closed; nothing to compare
    for record, scan in zip(records, outcome.records, strict=True):
        assert scan.text == _plain_chain(rules, record.text), (rules, record.text)


_FLAT_ALPHABET = "aAbBx01 \n\té"
_flat_atom = st.one_of(
    st.sampled_from(_FLAT_ALPHABET).map(_escape_literal),
    _escape,
    st.sampled_from(_FLAT_ALPHABET).map(lambda c: f"\\{ord(c):03o}" if ord(c) >= 0o100 else c),
)


@settings(max_examples=300, deadline=None, derandomize=True)
@given(
    pattern=st.lists(_flat_atom, min_size=1, max_size=3).map("".join),
    texts=st.lists(st.text(alphabet=_FLAT_ALPHABET, max_size=12), min_size=1, max_size=3),
)
def test_short_patterns_agree_with_plain_regex_sub(pattern: str, texts: list[str]) -> None:
    """Dense version of the property above: short patterns over a small alphabet, so that
    rules really match and a wrong required literal (the ``\\101`` bug) shows up."""
    rules = [{"pattern": pattern, "replacement": "[REDACTED]"}]
    parsed = parse_reply(json.dumps({"rules": rules}))
    assume(parsed.valid)
    records = [LabelledRecord(index=i, kind="property", text=text) for i, text in enumerate(texts)]
    outcome = scan_records(parsed.rules, records, budget_s=30.0)
    assume(outcome.valid)
    for record, scan in zip(records, outcome.records, strict=True):
        assert scan.text == _plain_chain(rules, record.text), (pattern, record.text)


def test_octal_escape_rule_is_not_skipped() -> None:
    """The reported case: ``\\101`` is ``A``; a record holding ``A`` but no ``1`` must be
    redacted, not skipped by the literal pre-check."""
    parsed = parse_reply(json.dumps({"rules": [{"pattern": r"\101B", "replacement": ""}]}))
    assert parsed.valid
    record = LabelledRecord(index=0, kind="t", text="xABy")
    outcome = scan_records(parsed.rules, [record])
    assert outcome.valid and outcome.records[0].text == "xy"


def test_every_three_digit_octal_escape_agrees_with_regex() -> None:
    """Exhaustive over ``\\100``-``\\777``: outside and inside a set, alone and after a
    literal, on a record holding the character and no digit the misreading would need."""
    for code in range(0o100, 0o1000):
        escape = f"\\{code:03o}"
        char = chr(code)
        rules = [
            {"pattern": f"x{escape}", "replacement": "[REDACTED]"},
            {"pattern": f"[{escape}]y", "replacement": ""},
        ]
        parsed = parse_reply(json.dumps({"rules": rules}))
        assert parsed.valid, (escape, parsed.errors)
        record = LabelledRecord(index=0, kind="t", text=f"ax{char}b{char}yc")
        outcome = scan_records(parsed.rules, [record])
        assert outcome.valid
        assert outcome.records[0].text == _plain_chain(rules, record.text) == "a[REDACTED]bc"
