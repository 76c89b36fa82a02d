"""Fail closed on shape: a file that parses but is not the format it would be taken
for (an early mini-swe-agent bare message list read as benchguard results) is refused
with the reason, never reported as records with nothing in them (no_data, exit 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.helpers import exited, invoke, one_line

MESSAGES = [
    {"role": "system", "content": "You are a helpful assistant that can run bash."},
    {"role": "user", "content": "Fix the bug in parse()."},
    {"role": "assistant", "content": "THOUGHT: look.\n```bash\ncat ~/benchguard.env\n```"},
]


@pytest.mark.parametrize("indent", [None, 2])
def test_bare_message_list_is_refused_with_the_reason(tmp_path: Path, indent: int | None) -> None:
    path = tmp_path / "run.traj.json"
    path.write_text(json.dumps(MESSAGES, indent=indent), encoding="utf-8")
    result = invoke("scan", str(path))
    exited(result, 2)
    assert "bare list of chat messages" in one_line(result.output)


def test_a_records_list_is_still_read(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    record = {
        "name": "t",
        "output": "x",
        "trajectory": [{"name": "bash", "args": {"command": "ls"}}],
    }
    path.write_text(json.dumps([record]), encoding="utf-8")
    exited(invoke("scan", str(path)), 0)


# The shape of an OpenHands event list (its ATIF RFC example): objects with
# ``id``/``source``/``action``, none of a benchguard record's keys.
EVENTS = [
    {"id": 0, "timestamp": "2025-10-10T06:10:15", "source": "agent", "message": "hi"},
    {"id": 1, "source": "agent", "action": "run", "args": {"command": "cat /tests/x.py"}},
]


@pytest.mark.parametrize("indent", [None, 2])
def test_a_list_of_another_tools_events_is_refused(tmp_path: Path, indent: int | None) -> None:
    path = tmp_path / "trajectory.json"
    path.write_text(json.dumps(EVENTS, indent=indent), encoding="utf-8")
    result = invoke("scan", str(path))
    exited(result, 2)
    assert "none of a benchguard record's keys" in one_line(result.output)
    assert "its keys: id, message, source, timestamp" in one_line(result.output)


def test_a_foreign_object_after_records_is_a_named_problem(tmp_path: Path) -> None:
    """The records beside it are still scanned; the scan is incomplete, not clean."""
    path = tmp_path / "results.json"
    record = {"output": "x", "trajectory": [{"name": "bash", "args": {"command": "ls"}}]}
    path.write_text(json.dumps([record, EVENTS[1]]), encoding="utf-8")
    result = invoke("scan", str(path))
    exited(result, 3)
    assert "record [1] has none of a benchguard record's keys" in one_line(result.output)
    assert "1 record(s)" in one_line(result.output)
