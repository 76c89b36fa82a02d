"""Publishable verdicts: one sentence per rule, typed vs passive wording, no excerpts."""

from __future__ import annotations

from typing import Any

from benchguard.detection import describe_findings, load_profile, scan_record


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
    assert verdicts[0]["name"] == "scan-incomplete"
    assert "could not be verified" in verdicts[0]["reason"] and "\x1b" not in verdicts[0]["reason"]
