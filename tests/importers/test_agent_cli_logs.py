"""Real logs of the pinned agent CLIs (Claude Code 2.1.332, Codex 0.171.0), produced
by running them against the fake model servers of tests/agent_clis on a session that
reads a task definition, then answers.

Each must be recognised by content, yield the tool call as a step with its tool named,
fill the record's input with the prompt, and be flagged by the detector.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchguard.detection.detector import scan_record
from benchguard.detection.rules import load_profile
from benchguard.importers import codex
from benchguard.importers.claude_code import parse_stream_json
from benchguard.importers.registry import detect_format, import_path

LOGS = Path(__file__).parent / "fixtures" / "agent_clis"
PROMPT = "Add up the integers in numbers.txt and write the total to answer.txt."
CHEAT = "cat /srv/bench/tasks/sum-numbers/task.yaml"


@pytest.mark.parametrize(
    ("name", "fmt", "tool"),
    [
        ("claude-code-2.1.332-stream.jsonl", "claude-code", "Bash"),
        ("claude-code-2.1.332-session.jsonl", "claude-code", "Bash"),
        ("codex-0.171.0-exec.jsonl", "codex", "exec_command"),
        ("codex-0.171.0-rollout.jsonl", "codex", "exec_command"),
    ],
)
def test_real_cli_logs_are_detected_read_and_flagged(name: str, fmt: str, tool: str) -> None:
    """Guards against a CLI's own log being unreadable ("unknown log format") or read
    without the step and tool that touched the material."""
    path = LOGS / name
    assert detect_format(path) == fmt
    imported = import_path(path)
    [record] = imported.records
    steps = record["trajectory"]
    assert steps[0]["name"] == tool
    assert CHEAT in json.dumps(steps[0]["args"])
    assert steps[1]["status"] == "completed"
    assert record["output"] == "The total is 137."
    # Neither stdout stream carries the prompt (the harness fills it from the task);
    # the session files do.
    assert record["input"] == ("" if "exec" in name or "stream" in name else PROMPT)
    assert record["import_errors"] == [], record["import_errors"]
    report = scan_record(record, load_profile("benchguard"))
    assert report.status == "flagged"
    assert any(f.trajectory_index == 0 and f.tool == tool for f in report.findings)


def test_codex_exec_stream_keeps_a_killed_command_as_called() -> None:
    """Guards against a command that never completed (the agent was killed) vanishing."""
    lines = (LOGS / "codex-0.171.0-exec.jsonl").read_text("utf-8").splitlines()
    started = [line for line in lines if '"item.started"' in line]
    parsed = codex.parse_exec_json([lines[0], started[0]])
    assert parsed.trajectory[0]["status"] == "called"
    assert CHEAT in parsed.trajectory[0]["args"]["cmd"]
    assert any("turn.completed" in e for e in parsed.errors)


def test_unknown_types_are_counted_and_reported_never_dropped_silently() -> None:
    """Guards against a newer CLI's message types disappearing without a trace."""
    rollout = (LOGS / "codex-0.171.0-rollout.jsonl").read_text("utf-8").splitlines()
    novel = [
        json.dumps({"timestamp": "t", "type": "hologram", "payload": {}}),
        json.dumps({"timestamp": "t", "type": "hologram", "payload": {}}),
        json.dumps({"timestamp": "t", "type": "response_item", "payload": {"type": "teleport"}}),
    ]
    parsed = codex.parse_rollout([*rollout, *novel])
    assert any("'hologram'" in e and "2 line(s)" in e for e in parsed.errors), parsed.errors
    assert any("'teleport'" in e for e in parsed.errors), parsed.errors
    stream = (LOGS / "claude-code-2.1.332-stream.jsonl").read_text("utf-8").splitlines()
    parsed = parse_stream_json(
        [*stream, json.dumps({"type": "rate_limit_event", "session_id": "s"})]
    )
    assert any("'rate_limit_event'" in e for e in parsed.errors), parsed.errors
    assert parsed.trajectory[0]["name"] == "Bash"
