"""Publishable verdicts: one sentence per rule, typed vs passive wording, no excerpts."""

from __future__ import annotations

from typing import Any

import pytest

from benchguard.detection import Rule, describe_findings, load_profile, scan_record
from benchguard.detection.detector import TRANSCRIPT_TRUNCATED_REASON
from benchguard.detection.summary import INCOMPLETE_SENTENCE, TRUNCATED_SENTENCE


def _finding(
    rule: str, field: str, step: int | None, tool: str | None = "exec", **extra: Any
) -> dict[str, Any]:
    return {
        "rule": rule,
        "category": rule.split("/")[0],
        "material": extra.pop("material", "task definition"),
        "evidence": extra.pop("evidence", "the path"),
        "severity": extra.pop("severity", "high"),
        "pattern": "x",
        "field": field,
        "trajectory_index": step,
        "tool": tool,
        "excerpt": "SECRET-EXCERPT",
        **extra,
    }


def _report(*findings: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {
        "status": "flagged",
        "categories": sorted({f["category"] for f in findings}),
        "findings": list(findings),
        **extra,
    }


def test_typed_read_lists_tools_and_steps_with_more_and_passive_counts() -> None:
    verdicts = describe_findings(
        _report(
            *[_finding("task-definition/path", "args", i, "view_file") for i in range(5)],
            _finding("task-definition/path", "result", 7),
            _finding("task-definition/path", "output", None, None),
        )
    )
    assert verdicts == [
        {
            "name": "task-definition/path",
            "reason": "task definition: read by the agent — view_file at step 0, view_file at step 1, "
            "view_file at step 2 (+2 more reads, +2 passive sightings)",
        }
    ]


def test_sighting_only_wording_for_tool_output_and_final_output() -> None:
    tool = describe_findings(
        _report(
            _finding(
                "harness-repo/path", "result", 2, "run_command", material="benchmark repo checkout"
            )
        )
    )
    assert (
        tool[0]["reason"]
        == "benchmark repo checkout: the path appeared in run_command output at step 2"
    )
    final = describe_findings(
        _report(_finding("scoring-code/path", "output", None, None, material="scoring code"))
    )
    assert final[0]["reason"] == "scoring code: the path appeared in the run's final output"


def test_typed_access_outranks_a_higher_severity_sighting() -> None:
    verdicts = describe_findings(
        _report(
            _finding("results-dir/path", "result", 0, severity="high"),
            _finding("harness-repo/path", "args", 3, severity="medium"),
        )
    )
    assert [v["name"] for v in verdicts] == ["harness-repo/path", "results-dir/path"]


def test_no_excerpt_reaches_a_verdict_end_to_end() -> None:
    """Excerpts may hold answer keys; the published verdict never quotes them."""
    record = {
        "output": "x",
        "trajectory": [
            {
                "name": "exec",
                "args": {"command": "cat /tmp/x"},
                "result": "expected_output: ANSWER-KEY-42",
            }
        ],
    }
    report = scan_record(record, load_profile("devops-bench"))
    verdicts = describe_findings(report)
    assert verdicts and "ANSWER-KEY-42" not in repr(verdicts)
    assert "SECRET-EXCERPT" not in repr(describe_findings(_report(_finding("a/b", "args", 0))))


def test_clean_no_data_and_junk_give_nothing_or_fallbacks() -> None:
    assert describe_findings({"status": "clean", "findings": []}) == []
    assert describe_findings({"status": "no_data"}) == []
    assert describe_findings("garbage") == []  # type: ignore[arg-type]
    legacy = {
        "status": "flagged",
        "categories": ["results-dir", "harness-repo"],
        "findings": [{"category": "x"}],
    }
    assert describe_findings(legacy) == [{"name": "x", "reason": ""}]
    assert describe_findings({"status": "flagged", "categories": ["b", "a"]}) == [
        {"name": "a", "reason": ""},
        {"name": "b", "reason": ""},
    ]


def test_malformed_severity_tool_and_step_do_not_crash() -> None:
    verdicts = describe_findings(
        _report(
            _finding("a/x", "args", "three", tool=["not", "str"], severity=5),  # type: ignore[arg-type]
            _finding("b/y", "result", True, tool=None, severity=None),  # type: ignore[arg-type]
        )
    )
    assert [v["name"] for v in verdicts] == ["a/x", "b/y"]
    assert verdicts[0]["reason"] == "task definition: read by the agent — a tool"


def test_incomplete_scan_is_named_in_the_verdict() -> None:
    verdicts = describe_findings(
        {
            "status": "flagged",
            "categories": ["scan-incomplete"],
            "findings": [],
            "incomplete": True,
            "incomplete_reason": "budget\x1b[31m",
        }
    )
    assert verdicts == [{"name": "scan-incomplete", "reason": INCOMPLETE_SENTENCE}]
    assert "could not be verified" in verdicts[0]["reason"]


FINGERPRINT_LINE = "expected_output: ANSWER-KEY-42"


def test_fingerprint_pattern_in_incomplete_reason_is_never_published() -> None:
    """Guards against the detector's incomplete note, which quotes a pattern prefix (for a
    fingerprint rule: a line of a leftover answer file), reaching catastrophicDetails."""
    rule_id = "leftover/answers.txt/content"
    verdicts = describe_findings(
        {
            "status": "flagged",
            "categories": ["scan-incomplete"],
            "findings": [],
            "dynamic_rules": [{"id": rule_id, "patterns": [FINGERPRINT_LINE]}],
            "incomplete": True,
            "incomplete_reason": f"rule {rule_id!r} pattern {FINGERPRINT_LINE!r} ran out of "
            "the record's time budget on the result surface of step 3",
        }
    )
    assert FINGERPRINT_LINE not in repr(verdicts) and "ANSWER-KEY" not in repr(verdicts)
    assert verdicts == [
        {
            "name": "scan-incomplete",
            "reason": f"{INCOMPLETE_SENTENCE} (rules involved: {rule_id})",
        }
    ]


def test_rule_mention_inside_a_quoted_pattern_is_not_published() -> None:
    """Guards against a leftover-file line shaped like "rule 'SECRET'" smuggling its text
    out as a rule id: only ids the report or a built-in profile defines are named."""
    verdicts = describe_findings(
        {
            "status": "flagged",
            "incomplete": True,
            "incomplete_reason": "rule 'task-definition/path' pattern \"rule 'ANSWER-42'\" "
            "ran out of the record's time budget",
        }
    )
    assert "ANSWER-42" not in repr(verdicts)
    assert verdicts[-1]["reason"] == f"{INCOMPLETE_SENTENCE} (rules involved: task-definition/path)"


def test_unusable_fingerprint_pattern_never_reaches_the_verdict_end_to_end() -> None:
    """Guards against a real detector note quoting a leftover-file line: a fingerprint
    rule whose pattern cannot run makes the scan incomplete, and the note names it."""
    rule = Rule(
        id="leftover/answers.txt/content",
        category="leftover",
        material="leftover file",
        patterns=(f"{FINGERPRINT_LINE}|",),  # matches the empty string: unusable
    )
    record = {"output": "x", "trajectory": [{"name": "exec", "args": {"command": "ls"}}]}
    report = scan_record(record, [], dynamic_rules=[rule])
    assert report.incomplete and FINGERPRINT_LINE in (report.incomplete_reason or "")
    verdicts = describe_findings(report)
    assert FINGERPRINT_LINE not in repr(verdicts)
    assert verdicts[-1]["name"] == "scan-incomplete"
    assert "leftover/answers.txt/content" in verdicts[-1]["reason"]


@pytest.mark.parametrize(
    ("report", "names"),
    [
        ({"status": "no_data", "findings": [_finding("a/x", "args", 0)]}, ["a/x"]),
        ({"status": "clean", "categories": ["harness-repo"]}, ["harness-repo"]),
        ({"status": "clean", "categories": "harness-repo"}, ["harness-repo"]),
        ({"status": "clean", "incomplete": "yes"}, ["scan-incomplete"]),
        ({"status": "weird", "findings": [_finding("a/x", "args", 0)]}, ["a/x"]),
        ({"status": "weird"}, []),
    ],
)
def test_self_contradictory_reports_are_described_like_flagged(
    report: dict[str, Any], names: list[str]
) -> None:
    """Guards against a report the gate fails closed on publishing no reason at all."""
    assert [v["name"] for v in describe_findings(report)] == names


def test_a_cut_transcript_is_published_as_such_without_quoting_the_note() -> None:
    """Guards the wording of a harness cut: the reader learns why, the note stays private."""
    report = {
        "status": "flagged",
        "categories": ["scan-incomplete"],
        "incomplete": True,
        "incomplete_reason": f"{TRANSCRIPT_TRUNCATED_REASON}; secret answer line",
    }
    [verdict] = describe_findings(report)
    assert verdict == {"name": "scan-incomplete", "reason": TRUNCATED_SENTENCE}
