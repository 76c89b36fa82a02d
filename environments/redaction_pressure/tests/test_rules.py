"""The reply contract: what parses, what is refused, and with which error."""

from __future__ import annotations

import json

import pytest
import regex

from redaction_pressure.records import LabelledRecord, LabelledSpan
from redaction_pressure.reward import score_reply
from redaction_pressure.rules import (
    MAX_EXPANDED_SIZE,
    MAX_PATTERN_CHARS,
    MAX_RULES,
    PatternError,
    analyse_pattern,
    parse_reply,
)

SECRET = "ghp_" + "A1b2C3d4E5" * 3 + "f6G7h8"
GOOD = {"pattern": r"ghp_[A-Za-z0-9]{36}", "replacement": "[REDACTED]"}


def _record() -> LabelledRecord:
    text = f"GITHUB_TOKEN={SECRET}\nok\n"
    start = text.index(SECRET)
    span = LabelledSpan(start=start, end=start + len(SECRET), label="secret", family="github")
    return LabelledRecord(index=7, kind="env", text=text, spans=(span,))


def _reply(*rules: object) -> str:
    return json.dumps({"rules": list(rules)})


def _with_bad(rule: object) -> str:
    """A reply that would score 1.0 but for one bad rule after the good one."""
    return _reply(GOOD, rule)


def test_the_good_rule_alone_scores_one() -> None:
    """Anchors the table below: each bad reply differs from a perfect one by one fault."""
    assert score_reply(_reply(GOOD), [_record()]).reward == 1.0


MALFORMED = [
    ("", "reply: empty"),
    ("   \n ", "reply: empty"),
    ('{"rules": [', "reply: malformed JSON"),
    ("{'rules': []}", "reply: malformed JSON"),
    ('[{"pattern": "a", "replacement": ""}]', "expected a JSON object"),
    ('"rules"', "expected a JSON object"),
    ('Here are my rules: {"rules": []}', "expected a JSON object"),
    (_reply(GOOD) + " thanks!", "reply: text after the JSON object"),
    (_reply(GOOD) + _reply(GOOD), "reply: text after the JSON object"),
    ('{"rules": [], "rules": []}', "duplicate key 'rules'"),
    ('{"rules": [], "notes": "x"}', "reply: unknown top-level key 'notes'"),
    ("{}", "reply: missing key 'rules'"),
    ('{"rules": {"pattern": "a"}}', "rules: must be a list of rule objects, got object"),
    ('{"rules": null}', "rules: must be a list of rule objects, got null"),
    (_reply(*[GOOD] * (MAX_RULES + 1)), f"rules: 25 rules, at most {MAX_RULES}"),
    ("Sure:\n```json\n" + _reply(GOOD) + "\n```", "reply: text outside the code fence"),
    ("```json\n" + _reply(GOOD) + "\n```\nHope this helps", "reply: text after the closing"),
    ("```json\n" + _reply(GOOD) + "\n```\n```json\n{}\n```", "fence lines; exactly one"),
    ("```json\n" + _reply(GOOD), "reply: the code fence is not closed"),
    ("```python\n" + _reply(GOOD) + "\n```", "the opening fence line must be"),
    ("```json " + _reply(GOOD) + "```", "the opening fence line must be"),
    ("x" * 70_000, "characters, at most 65536"),
    ('{"rules": ' + "[" * 60_000, "reply: JSON nested too deeply"),
    ('{"rules": ' + "9" * 5_000 + "}", "a number is too long to read"),
    ('{"rules": [{"pattern": "a", "replacement": "", "n": ' + "1" * 5_000 + "}]}", "too long"),
]

BAD_RULES = [
    ("not an object", "rules[1]: must be an object with keys pattern and replacement, got string"),
    ({"pattern": "x", "replacement": "", "flags": "i"}, "rules[1]: unknown key 'flags'"),
    ({"pattern": "x"}, "rules[1]: missing key 'replacement'"),
    ({"replacement": ""}, "rules[1]: missing key 'pattern'"),
    ({"pattern": 5, "replacement": ""}, "rules[1].pattern: must be a string, got number"),
    ({"pattern": ["x"], "replacement": ""}, "rules[1].pattern: must be a string, got array"),
    ({"pattern": "(ghp_)x", "replacement": r"\1"}, 'rules[1].replacement: must be "[REDACTED]"'),
    ({"pattern": "x", "replacement": "<secret>"}, 'rules[1].replacement: must be "[REDACTED]"'),
    ({"pattern": "x", "replacement": None}, "got null"),
    ({"pattern": "", "replacement": ""}, "rules[1].pattern: empty pattern"),
    ({"pattern": "x" * (MAX_PATTERN_CHARS + 1), "replacement": ""}, "at most 1024"),
    ({"pattern": "(", "replacement": ""}, "rules[1].pattern: unterminated group"),
    ({"pattern": "a)", "replacement": ""}, "rules[1].pattern: unbalanced ')'"),
    ({"pattern": "[z-a]", "replacement": ""}, "rules[1].pattern: invalid regex"),
    ({"pattern": "*a", "replacement": ""}, "nothing to repeat"),
    ({"pattern": "a**", "replacement": ""}, "multiple repeat"),
    ({"pattern": "x*", "replacement": ""}, "rules[1].pattern: can match the empty string"),
    ({"pattern": "x?|y", "replacement": ""}, "can match the empty string"),
    ({"pattern": r"\b", "replacement": ""}, "can match the empty string"),
    ({"pattern": "(?=ghp_)", "replacement": ""}, "can match the empty string"),
    ({"pattern": "(x?)\\1", "replacement": ""}, "can match the empty string"),
    ({"pattern": "((a{1000}){1000}){5}", "replacement": ""}, "expanded size 5005005"),
    ({"pattern": "[a-z]{1,6000}", "replacement": ""}, "is over the cap of 5000"),
    ({"pattern": "a{1000000}", "replacement": ""}, "repeat count 1000000 is over"),
    ({"pattern": "a{e<=1}", "replacement": ""}, r"a literal '{' must be escaped as \{"),
    ({"pattern": "x{", "replacement": ""}, "a literal '{' must be escaped"),
    ({"pattern": "(?x)a b", "replacement": ""}, "unsupported group syntax"),
    ({"pattern": "(?#note)a", "replacement": ""}, "unsupported group syntax"),
    ({"pattern": "(a(?R)?b)", "replacement": ""}, "unsupported group syntax"),
    ({"pattern": "(?|(a)|(b))", "replacement": ""}, "unsupported group syntax"),
    ({"pattern": "(a)?(?(1)b|c)", "replacement": ""}, "unsupported group syntax"),
    ({"pattern": "(?V1)[a--b]", "replacement": ""}, "unsupported group syntax"),
    ({"pattern": r"ghp_\Kx", "replacement": ""}, r"unsupported escape \K"),
    ({"pattern": r"\Qa.b\E", "replacement": ""}, r"unsupported escape \Q"),
    ({"pattern": "[[a]", "replacement": ""}, r"a literal '[' inside a set must be escaped as \["),
    ({"pattern": r"\x4g", "replacement": ""}, r"\x needs exactly 2 hex digits"),
    ({"pattern": "a\\", "replacement": ""}, "the pattern ends with a backslash"),
    ({"pattern": "(" * 40 + "a" + ")" * 40, "replacement": ""}, "groups nested deeper than 32"),
]


@pytest.mark.parametrize(("reply", "expected"), MALFORMED, ids=[m[1] for m in MALFORMED])
def test_malformed_reply_has_validity_zero_and_its_error(reply: str, expected: str) -> None:
    """Guards against a malformed reply being scored (or crashing the scorer)."""
    result = score_reply(reply, [_record()])
    assert (result.valid, result.reward, result.recall, result.clean) == (False, 0.0, 0.0, False)
    assert len(result.errors) == 1
    assert expected in result.errors[0]


@pytest.mark.parametrize(("rule", "expected"), BAD_RULES, ids=[b[1] for b in BAD_RULES])
def test_bad_rule_has_validity_zero_and_its_error(rule: object, expected: str) -> None:
    """Guards against a bad rule riding along with a perfect one: the whole reply fails."""
    result = score_reply(_with_bad(rule), [_record()])
    assert (result.valid, result.reward, result.precision, result.clean) == (
        False,
        0.0,
        0.0,
        False,
    )
    assert any(expected in error for error in result.errors), result.errors
    assert all(error.startswith("rules[1]") for error in result.errors)


def test_every_bad_rule_is_reported_at_once() -> None:
    reply = _reply({"pattern": "x*", "replacement": ""}, GOOD, {"pattern": 1, "replacement": ""})
    parsed = parse_reply(reply)
    assert parsed.rules == ()
    assert parsed.rule_count == 3
    assert [error.split(":")[0] for error in parsed.errors] == [
        "rules[0].pattern",
        "rules[2].pattern",
    ]


@pytest.mark.parametrize(
    "reply",
    [
        _reply(GOOD),
        "\n  " + _reply(GOOD) + "\n\n",
        json.dumps({"rules": [GOOD]}, indent=2),
        "```json\n" + _reply(GOOD) + "\n```",
        "```JSON\n" + json.dumps({"rules": [GOOD]}, indent=2) + "\n```\n",
        "```\n" + _reply(GOOD) + "\n```",
        "  ```json\r\n" + _reply(GOOD) + "\r\n```  ",
    ],
)
def test_accepted_reply_forms(reply: str) -> None:
    assert score_reply(reply, [_record()]).reward == 1.0


def test_empty_rule_list_is_valid_and_scores_nothing() -> None:
    result = score_reply('{"rules": []}', [_record()])
    assert (result.valid, result.reward, result.rules) == (True, 0.0, 0)


@pytest.mark.parametrize(
    "pattern",
    [
        r"(?i)password\s*[:=]\s*\S+",
        r"(?<=Bearer )[A-Za-z0-9]{32,44}",
        r"-----BEGIN (?:[A-Z]+ )?PRIVATE KEY-----[\s\S]{1,4000}?-----END",
        r"(?P<k>x)(?P=k)",
        r"(?<name>ab)",
        r"(?>a+)b",
        r"a++b",
        r"[[:alpha:]][[:^digit:]]",
        r"[]a][^]b]",
        r"\p{Lu}\pL\N{DIGIT ONE}",
        r"\x41\u0042\U00000043\0",
        r"\{\}[{}]}",
        r"(?s:.)(?m:^a$)",
        r"a{,3}b",
    ],
)
def test_accepted_dialect_compiles(pattern: str) -> None:
    parsed = parse_reply(_reply({"pattern": pattern, "replacement": ""}))
    assert parsed.errors == ()
    assert parsed.rules[0].compiled.pattern == pattern


@pytest.mark.parametrize(
    ("pattern", "size"),
    [
        ("abc", 3),
        ("a{10}", 10),
        ("(?:ab){10}", 30),
        ("(?:a{10}){10}", 110),
        ("[a-z]{2,40}", 40),
        ("a+b*", 2),
        ("x{3,}", 3),
    ],
)
def test_expanded_size_multiplies_nested_repeats(pattern: str, size: int) -> None:
    assert analyse_pattern(pattern).expanded_size == size


def test_expanded_size_cap_is_exact_at_the_boundary() -> None:
    assert analyse_pattern(f"a{{{MAX_EXPANDED_SIZE}}}").expanded_size == MAX_EXPANDED_SIZE
    with pytest.raises(PatternError, match="over the cap"):
        analyse_pattern(f"a{{{MAX_EXPANDED_SIZE + 1}}}")


@pytest.mark.parametrize(
    ("pattern", "literals", "ignore_case"),
    [
        (r"ghp_[A-Za-z0-9]{36}", ("ghp_",), False),
        (r"(?:ghp|gho)_\w+", ("gho", "ghp"), False),
        (r"(?<=token=)\w+", ("token=",), False),
        (r"(?i)Bearer \S+", ("bearer ",), True),
        (r"a?b\w", ("b",), False),
        (r"[ab]\w", None, False),
        (r"(?!ghp_)\w+", None, False),
        (r"(?i)é\w", None, True),
    ],
)
def test_required_literals(
    pattern: str, literals: tuple[str, ...] | None, ignore_case: bool
) -> None:
    shape = analyse_pattern(pattern)
    assert (shape.required_literals, shape.literals_ignore_case) == (literals, ignore_case)


LITERAL_PATTERNS = [
    r"ghp_[A-Za-z0-9]{4}",
    r"(?:ab|cd)e",
    r"x(?=yz)",
    r"(?<=k=)v+",
    r"(?i)AbC",
    r"(?i:k)ey\d",
    r"a(?:bc)+d",
    r"a[0-9]?bc",
    r"(?:q|r)(?:s|t)u",
]
TEXTS = [
    "ghp_abcd",
    "GHP_abcd",
    "abe cde",
    "xyz",
    "k=vvv",
    "aBc",
    "KEY1 kEy2",
    "abcbcd",
    "a1bc abc",
    "qsu rtu",
    "nothing",
    "",
    "K\u212aey1",  # a Kelvin sign: case-folds to k in regex
]


@pytest.mark.parametrize("pattern", LITERAL_PATTERNS)
def test_required_literals_never_hide_a_match(pattern: str) -> None:
    """Guards the scanner's prefilter: skipping a rule must never skip a real match."""
    shape = analyse_pattern(pattern)
    compiled = regex.compile(pattern, regex.VERSION0)
    assert shape.required_literals is not None
    for text in TEXTS:
        if compiled.search(text) is None:
            continue
        if shape.literals_ignore_case:
            if not text.isascii():
                continue  # the scanner never prefilters non-ASCII text case-insensitively
            haystack = text.lower()
        else:
            haystack = text
        assert any(literal in haystack for literal in shape.required_literals), text
