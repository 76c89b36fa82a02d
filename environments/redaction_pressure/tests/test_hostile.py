"""Hostile rules: catastrophic backtracking, compile bombs, budget sharing.

The timed assertions here are the ones the issue demands (an interruption bound); their
margins are generous because ``regex`` times calls in process CPU seconds, which a
loaded shared machine stretches in wall-clock terms.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
import time

import pytest

from redaction_pressure.records import LabelledRecord, LabelledSpan
from redaction_pressure.reward import score_reply
from redaction_pressure.rules import parse_reply

BUDGET_S = 0.4
MARGIN_S = 4.0
"""Wall-clock slack over the budget: CPU contention can stretch a CPU-timed regex call."""

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
    assert score_reply(_reply(), _records(), budget_s=BUDGET_S).reward == 1.0


@pytest.mark.parametrize(
    "pattern",
    [
        r"(.|.)+[\t\v]{2}",
        r"(\S|\S)+[\t\v]",
        r"([^\n]|.)+[\t\v]{2}",
        r"(?:.|[^\n])+[\t\v]",
    ],
)
def test_catastrophic_backtracking_is_interrupted_within_the_budget(pattern: str) -> None:
    """Guards against an exponential rule hanging scoring or still earning reward.

    ``regex`` optimises the textbook ``(a+)+$`` and ``(\\S+\\s?)+Z{3}`` (required
    literal check), so these canaries use duplicated alternatives, which it does not.
    """
    started = time.perf_counter()
    result = score_reply(_reply(pattern), _records(), budget_s=BUDGET_S)
    elapsed = time.perf_counter() - started
    assert elapsed <= BUDGET_S + MARGIN_S
    assert (result.valid, result.reward) == (False, 0.0)
    assert result.errors[0].startswith("rules[1]: ")
    assert "episode budget of 0.4 CPU seconds exhausted" in result.errors[0]


def test_issue_example_stays_within_the_budget() -> None:
    """The issue's ``(\\S+\\s?)+Z{3}``: whatever ``regex`` does with it, it is bounded."""
    started = time.perf_counter()
    result = score_reply(_reply(r"(\S+\s?)+Z{3}"), _records(), budget_s=BUDGET_S)
    assert time.perf_counter() - started <= BUDGET_S + MARGIN_S
    assert result.valid is False or result.reward == 1.0


def test_per_call_timeouts_do_not_add_up() -> None:
    """Guards the shared budget: many hostile rules over many records still cost one budget.

    With a fresh per-call timeout, 4 rules x 6 records would take 24 budgets.
    """
    hostile = [r"(.|.)+[\t\v]{2}", r"(\S|\S)+[\t\v]", r"(?:.|[^\n])+[\t\v]", r"([^\n]|.)+\v"]
    started = time.perf_counter()
    result = score_reply(_reply(*hostile), _records(6), budget_s=BUDGET_S)
    elapsed = time.perf_counter() - started
    assert elapsed <= BUDGET_S + MARGIN_S
    assert result.valid is False
    assert len(result.errors) == 1


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
