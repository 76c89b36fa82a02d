"""Hostile rules: catastrophic backtracking and compile bombs are refused statically;
the CPU backstop, if it ever fires, is the environment's error."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
import regex

from redaction_pressure.records import LabelledRecord, LabelledSpan
from redaction_pressure.reward import score_reply
from redaction_pressure.rules import CompiledRule, parse_reply
from redaction_pressure.scanner import scan_records

SECRET = "ghp_Q7rT2mK9xW4vB8nL1pZ6cD3fH5jY0sA2uE9o"
GOOD = {"pattern": r"ghp_[A-Za-z0-9]{36}", "replacement": "[REDACTED]"}
# Ordinary log text with no tab or vertical tab: the canaries below must fail to match
# after trying exponentially many ways, on every line.
LOG_LINE = (
    "GET /api/v1/users?page=2 HTTP/1.1 host=app.internal user-agent=curl/8.4 "
    "status=200 latency=12ms request_id=7f3a9c\n"
)


def _records(count: int = 3) -> list[LabelledRecord]:
    records = []
    for index in range(count):
        text = LOG_LINE * 3 + f"token={SECRET}\n"
        start = text.index(SECRET)
        span = LabelledSpan(start=start, end=start + len(SECRET), label="secret", family="gh")
        records.append(LabelledRecord(index=index, kind="log", text=text, spans=(span,)))
    return records


def _reply(*patterns: str) -> str:
    rules = [GOOD, *({"pattern": p, "replacement": "[REDACTED]"} for p in patterns)]
    return json.dumps({"rules": rules})


def test_good_rules_alone_score_one() -> None:
    """Anchors the tests below: the hostile rule is what zeroes the reward."""
    assert score_reply(_reply(), _records()).reward == 1.0


@pytest.mark.parametrize(
    "pattern",
    [
        r"(.|.)+[\t\v]{2}",
        r"(\S|\S)+[\t\v]",
        r"([^\n]|.)+[\t\v]{2}",
        r"(?:.|[^\n])+[\t\v]",
        r"(a|aa)+$",
        r"(?:\S|\S\S)+\s$",
        r"(\w+\s?)+$",
        r"\S+\S+[\t\v]",
        r".*=.*=.*[\t\v]",
        r"[\s\S]{0,15}[\s\S]{0,15}[\t\v]",
        r"[\s\S]+[\t\v]",
    ],
)
def test_catastrophic_backtracking_is_refused_before_it_runs(pattern: str) -> None:
    """Guards a reward that no clock decides (reward schema 0.4.0): an exponential or
    polynomial rule is refused by the static analysis, the same on every machine, and
    never reaches the matcher.

    ``regex`` optimises the textbook ``(a+)+$``, so the canaries also use duplicated
    alternatives, which it does not.
    """
    result = score_reply(_reply(pattern), _records())
    assert (result.valid, result.reward, result.environment_error) == (False, 0.0, False)
    assert result.errors[0].startswith("rules[1].pattern: ")
    assert "backtrack" in result.errors[0]
    assert result.matches == 0 and result.budget_used_s == 0.0


def test_issue_example_is_refused() -> None:
    """The issue's ``(\\S+\\s?)+Z{3}``: a repeat inside a repeated group."""
    result = score_reply(_reply(r"(\S+\s?)+Z{3}"), _records())
    assert result.valid is False
    assert "nested quantifiers" in result.errors[0]


def test_backstop_firing_is_the_environments_error_not_the_replys() -> None:
    """Guards the distinction: if the far-off CPU backstop ever fires (here forced with a
    rule that skips the analysis and a tiny backstop), the outcome says the environment
    failed, not that the reply was invalid."""
    rule = CompiledRule(
        index=0,
        pattern=r"(.|.)+[\t\v]{2}",
        replacement="",
        compiled=regex.compile(r"(.|.)+[\t\v]{2}", regex.VERSION0),
        required_literals=None,
        literals_ignore_case=False,
    )
    outcome = scan_records([rule], _records(6), budget_s=0.2)
    assert outcome.environment_error and not outcome.valid
    assert len(outcome.errors) == 1
    assert outcome.errors[0].startswith("environment: the CPU backstop of 0.2 s fired")


@pytest.mark.parametrize(
    "bomb",
    [
        "((a{1000}){1000}){5}",
        "(?:a{1000}){1000}",
        "((a{100}){100}){100}",
        "(?:x{99}|y{99}){99}",
        "[{](?:(?:a{1000}){1000})",
        "(?i:(?:\\w{500}){500})",
    ],
)
def test_compile_bomb_is_refused_before_compiling(bomb: str) -> None:
    """Guards against regex.compile's unbounded time and memory on nested counted repeats."""
    parsed = parse_reply(_reply(bomb))
    assert parsed.rules == ()
    assert "refused before compiling" in parsed.errors[0]


@pytest.mark.slow
def test_compile_bomb_is_refused_quickly_with_bounded_memory() -> None:
    """Measures in a fresh interpreter: compiling the bomb naively costs seconds and ~1.5 GB."""
    probe = textwrap.dedent(
        """
        import json, resource, time
        from redaction_pressure.reward import score_reply
        from redaction_pressure.records import LabelledRecord
        record = LabelledRecord(index=0, kind="log", text="a" * 100)
        # Warm imports with a harmless reply: warming with the bomb itself would leave its
        # compiled pattern in regex's cache and hide the cost the refusal avoids.
        score_reply(json.dumps({"rules": []}), [record])
        reply = json.dumps({"rules": [{"pattern": "((a{1000}){1000}){5}", "replacement": ""}]})
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        result = score_reply(reply, [record])
        elapsed = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(json.dumps({"elapsed": elapsed, "rss_kib": after - before,
                          "valid": result.valid, "errors": list(result.errors)}))
        """
    )
    completed = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True
    )
    report = json.loads(completed.stdout)
    assert report["valid"] is False
    assert "expanded size" in report["errors"][0]
    assert report["elapsed"] < 1.0
    assert report["rss_kib"] < 50 * 1024
