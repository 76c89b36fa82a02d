from __future__ import annotations

import json
from pathlib import Path

from benchguard.importers.claude_code import import_file, parse_stream_json


def test_calls_results_and_answer_come_from_their_documented_fields(fixtures: Path) -> None:
    parsed = parse_stream_json((fixtures / "claude_code.stream.jsonl").read_text().splitlines())
    assert parsed.errors == []
    assert [s["name"] for s in parsed.trajectory] == ["Bash", "Read", "Grep"]
    assert parsed.trajectory[0]["args"]["command"] == "ls -la"
    assert parsed.trajectory[0]["result"].startswith("total 8")
    # tool_result content given as a list of text blocks is flattened to its text
    assert "verification_spec:" in parsed.trajectory[1]["result"]
    assert parsed.trajectory[1]["args"] == {
        "file_path": "/home/agent/benchguard/tasks/fix-login/task.yaml"
    }
    assert parsed.trajectory[2]["status"] == "error"
    assert parsed.output == "Fixed the login handler."
    assert parsed.metadata["model"] == "claude-sonnet-4-5-20250929"


def test_bad_lines_are_reported_by_number_and_never_raise() -> None:
    """Guards against one corrupt line hiding the readable steps around it."""
    good_call = {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
            ],
        },
    }
    good_result = {
        "type": "user",
        "message": {
            "role": "user",
            "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "a.txt"}],
        },
    }
    lines = [
        json.dumps(good_call),
        "{not json",
        "[1, 2]",
        json.dumps({"type": "telemetry"}),
        json.dumps({"type": "assistant", "message": "oops"}),
        json.dumps(good_result),
    ]
    parsed = parse_stream_json(lines)
    assert parsed.trajectory == [
        {"name": "Bash", "args": {"command": "ls"}, "result": "a.txt", "status": "completed"}
    ]
    joined = "\n".join(parsed.errors)
    for number in (2, 3, 4, 5):
        assert f"line {number}:" in joined
    assert "line 1:" not in joined and "line 6:" not in joined
    assert any("no final result line" in e for e in parsed.errors)


def test_call_without_result_is_kept_as_called() -> None:
    """Guards against dropping a call whose result never arrived (killed run)."""
    line = json.dumps(
        {
            "type": "assistant",
            "message": {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t9",
                        "name": "Bash",
                        "input": {"command": "cat ~/bench.env"},
                    }
                ],
            },
        }
    )
    parsed = parse_stream_json([line])
    assert parsed.trajectory[0]["status"] == "called"
    assert parsed.trajectory[0]["result"] is None


def test_import_file_builds_one_record_with_source(fixtures: Path) -> None:
    path = fixtures / "claude_code.stream.jsonl"
    [record] = import_file(path).records
    assert record["name"] == "5f2c8a4e-1b7d-4c1e-9a51-0d6f3b2e7a10"
    assert record["source"]["format"] == "claude-code"
    assert record["source"]["path"] == str(path)
    assert len(record["trajectory"]) == 3


def test_a_line_past_the_json_decoders_limits_costs_only_itself() -> None:
    """Guards against a syntactically valid line the decoder refuses (an integer of
    thousands of digits, nesting deeper than the stack) raising out of the parser and
    losing every readable step of the transcript."""
    call = {
        "type": "assistant",
        "message": {
            "role": "assistant",
            "content": [
                {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}}
            ],
        },
    }
    huge_number = '{"type": "user", "n": ' + "9" * 5000 + "}"
    deep = "[" * 100_000 + "]" * 100_000
    parsed = parse_stream_json([huge_number, deep, json.dumps(call)])
    assert [s["args"] for s in parsed.trajectory] == [{"command": "ls"}]
    assert [e.split(":")[0] for e in parsed.errors[:2]] == ["line 1", "line 2"]
    assert "not readable JSON" in parsed.errors[0]
