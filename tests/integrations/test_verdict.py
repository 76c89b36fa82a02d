"""The one verdict every integration reports: ``auto`` recognises the benchmark from
the run itself; a named profile is used as named; a bad name fails early."""

from __future__ import annotations

from typing import Any

import pytest

from benchguard.errors import BenchguardError
from benchguard.integrations.verdict import profile_rules, scan_run


def _run(*commands: str) -> dict[str, Any]:
    return {
        "input": "Make the tests pass.",
        "output": "done",
        "trajectory": [
            {"name": "bash", "args": {"cmd": c}, "result": "", "status": "completed"}
            for c in commands
        ],
    }


def test_auto_adds_the_benchmark_the_run_shows() -> None:
    verdict = scan_run(_run("cat /tests/test_outputs.py"), "auto", format_name="inspect")
    assert set(verdict.profile.split("+")) >= {"inspect", "terminal-bench"}
    assert verdict.status == "flagged" and "harbor-tests/path" in verdict.rules


def test_auto_keeps_the_format_s_own_profile() -> None:
    verdict = scan_run(_run("cat ~/inspect-logs/a.eval"), "auto", format_name="inspect")
    assert "inspect" in verdict.profile.split("+")
    # inspect's own rule fires; the generic prior-results rule (every profile) may too
    assert "prior-logs/path" in verdict.rules
    assert set(verdict.rules) <= {"prior-logs/path", "prior-run-leftovers/results-file"}


def test_a_named_profile_is_used_as_named() -> None:
    # A terminal-bench-only name (solution.sh): Harbor's /tests is in every profile
    # since detector v16, so it would not show which profile ran.
    verdict = scan_run(_run("cat /app/solution.sh"), "inspect", format_name="inspect")
    assert verdict.profile == "inspect" and verdict.status == "clean"
    named = scan_run(_run("cat /app/solution.sh"), "terminal-bench", format_name="inspect")
    assert named.status == "flagged"


def test_an_unknown_profile_fails_before_any_run() -> None:
    with pytest.raises(BenchguardError, match="no-such-profile"):
        profile_rules("no-such-profile")
