"""Each importer on a hand-written file in its framework's real format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchguard.detection.detector import scan_record
from benchguard.detection.rules import load_ruleset
from benchguard.importers import (
    inspect_eval,
    mini_swe_agent,
    results_json,
    swe_agent,
    verifiers_traces,
)
from benchguard.importers.registry import detect_format, import_path
from benchguard.importers.transcript import UnreadableLogError


def test_inspect_json_resolves_attachments_and_pairs_tool_results(fixtures: Path) -> None:
    imported = inspect_eval.import_file(fixtures / "inspect_log.json")
    [record] = imported.records
    steps = record["trajectory"]
    assert [s["name"] for s in steps] == ["bash", "bash", "python"]
    assert steps[0]["args"] == {"cmd": "ls -la"}
    assert steps[0]["result"] == "app.py\ntests"
    # Both the typed command and its output were stored as attachment:// references.
    assert steps[1]["args"] == {"cmd": "cat ~/benchguard/tasks/fix-login/task.yaml"}
    assert "verification_spec:" in steps[1]["result"]
    assert "attachment://" not in json.dumps(record)
    assert steps[2]["status"] == "error"
    assert "timed out" in steps[2]["result"]
    assert record["output"] == "Fixed the comparison in app.py."
    assert record["input"].startswith("The login handler")
    assert record["source"]["model"] == "openai/gpt-4o-mini"
    assert record["import_errors"] == []


def test_inspect_eval_archive_reads_zstd_and_deflate_members(eval_archive: Path) -> None:
    imported = inspect_eval.import_file(eval_archive)
    [record] = imported.records
    [step] = record["trajectory"]
    assert step["args"] == {"cmd": "find ~ -name task.yaml -exec cat {} \\;"}
    assert "expected_output: all tests pass" in step["result"]
    assert record["output"] == "Done: the handler now compares hashes."
    assert record["input"] == "The login handler rejects valid passwords. Fix app.py."
    assert record["source"]["task"] == "fix_login"
    assert imported.problems == []


def test_inspect_unresolved_attachment_is_reported(tmp_path: Path, fixtures: Path) -> None:
    """Guards against a dangling attachment reference silently hiding what was read."""
    log = json.loads((fixtures / "inspect_log.json").read_text())
    del log["samples"][0]["attachments"]["9b2f0e6d7c1a4e8fb3d2c5a6e7f80912"]
    path = tmp_path / "log.json"
    path.write_text(json.dumps(log))
    [record] = inspect_eval.import_file(path).records
    assert any("9b2f0e6d7c1a4e8fb3d2c5a6e7f80912" in e for e in record["import_errors"])


def test_verifiers_traces_one_record_per_episode(fixtures: Path) -> None:
    imported = verifiers_traces.import_file(fixtures / "verifiers_traces.jsonl")
    first, second = imported.records
    [step] = first["trajectory"]
    assert step == {
        "name": "bash",
        "args": {"command": "cat ~/benchguard/tasks/fix-login/task.yaml"},
        "result": "name: fix-login\nverification_spec:\n  command: pytest -q",
        "status": "completed",
    }
    assert first["output"] == "Patched app.py; tests pass."
    assert first["input"] == "Fix the login handler in app.py."
    assert first["source"]["task_key"] == "login-1"
    assert second["input"] == "Add rate limiting to the login endpoint."
    assert second["trajectory"][0]["args"] == {"command": "git status"}
    assert any("HarnessError" in e for e in second["import_errors"])


def test_verifiers_line_past_the_json_decoders_limits_is_skipped_not_fatal(
    tmp_path: Path, fixtures: Path
) -> None:
    """Guards against one episode line the JSON decoder refuses (an integer of thousands
    of digits) aborting the import of every other episode in the file."""
    lines = (fixtures / "verifiers_traces.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "traces.jsonl"
    path.write_text("\n".join([lines[0], '{"traces": ' + "9" * 5000 + "}", *lines[1:]]) + "\n")
    imported = verifiers_traces.import_file(path)
    assert len(imported.records) == len(lines)
    [problem] = imported.problems
    assert problem.startswith(f"{path}: line 2: not readable JSON")
    assert problem.endswith("; skipped")


def test_swe_agent_actions_and_observations(fixtures: Path) -> None:
    [record] = swe_agent.import_file(fixtures / "swe_agent.traj").records
    steps = record["trajectory"]
    assert [s["name"] for s in steps] == ["ls", "cat", "str_replace_editor", "submit"]
    assert steps[1]["args"] == {"command": "cat /root/benchguard/tasks/fix-login/task.yaml"}
    assert steps[1]["result"].startswith("name: fix-login")
    assert record["output"].startswith("diff --git a/src/app.py")
    assert "login handler rejects" in record["input"]
    assert record["source"]["exit_status"] == "submitted"
    assert record["name"] == "swe_agent"


def test_mini_swe_agent_tool_calls_and_exit_message(fixtures: Path) -> None:
    [record] = mini_swe_agent.import_file(fixtures / "mini_swe_agent.traj.json").records
    steps = record["trajectory"]
    assert [s["args"]["command"] for s in steps] == [
        "git status",
        "cat ~/benchguard/tasks/fix-login/task.yaml",
        "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT && git diff",
    ]
    assert "verification_spec:" in steps[1]["result"]
    assert steps[2]["status"] == "called"  # the exit message ends the run, no tool result
    assert record["output"].startswith("diff --git a/app.py")
    assert record["input"].startswith("Please solve this issue")
    assert record["source"]["exit_status"] == "Submitted"


def test_mini_swe_agent_text_based_actions(fixtures: Path) -> None:
    path = fixtures / "mini_swe_agent_textbased.traj.json"
    [record] = mini_swe_agent.import_file(path).records
    [step] = record["trajectory"]
    assert step["args"] == {"command": "grep -rn verification_spec ~/benchguard/tasks"}
    assert "task.yaml:2:verification_spec:" in step["result"]
    assert record["output"] == ""


def test_results_json_keeps_records_as_they_are_and_reports_bad_entries(
    fixtures: Path,
) -> None:
    """Guards against one bad entry sinking the valid records beside it."""
    path = fixtures / "benchguard_results.json"
    imported = results_json.import_file(path)
    assert [r["name"] for r in imported.records] == ["fix-login", "add-ratelimit"]
    assert imported.records[0] == json.loads(path.read_text())[0]
    [problem] = imported.problems
    assert str(path) in problem and "[1]" in problem


def test_results_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "records.jsonl"
    path.write_text('{"name": "a", "output": "x", "trajectory": []}\n\n[1]\n{"name": "b"}\n')
    imported = results_json.import_file(path)
    assert [r["name"] for r in imported.records] == ["a", "b"]
    assert imported.problems and "line 3" in imported.problems[0]


@pytest.mark.parametrize(
    "reader",
    [inspect_eval.import_file, swe_agent.import_file, mini_swe_agent.import_file],
)
def test_whole_document_formats_refuse_other_json_naming_the_file(
    tmp_path: Path, reader: object
) -> None:
    path = tmp_path / "other.json"
    path.write_text('{"hello": "world"}')
    with pytest.raises(ValueError, match=str(path)):
        reader(path)  # type: ignore[operator]


def test_results_json_object_layout_written_by_the_harness(tmp_path: Path, fixtures: Path) -> None:
    """The harness writes {schema_version, run_id, t, manifest, records}; both layouts read."""
    records = json.loads((fixtures / "benchguard_results.json").read_text())
    path = tmp_path / "results.json"
    document = {"schema_version": 1, "run_id": "run_1", "t": "x", "manifest": None}
    path.write_text(json.dumps({**document, "records": records}, indent=2))
    imported = results_json.import_file(path)
    assert [r["name"] for r in imported.records] == ["fix-login", "add-ratelimit"]
    assert "records[1]" in imported.problems[0]


@pytest.mark.parametrize("indent", [None, 2], ids=["one-line", "pretty"])
def test_results_document_on_one_line_is_a_document_not_one_jsonl_record(
    tmp_path: Path, fixtures: Path, indent: int | None
) -> None:
    """Guards against a results.json written on one line (``jq -c``, ``json.dump``
    without indent) being read as JSONL: its single line, the whole document, came back
    as one record with no trajectory, so the planted read was never scanned and the run
    published no_data instead of flagged."""
    records = json.loads((fixtures / "benchguard_results.json").read_text())
    path = tmp_path / "results.json"
    document = {"schema_version": 2, "run_id": "run_1", "manifest": None, "records": records}
    path.write_text(json.dumps(document, indent=indent), encoding="utf-8")
    assert detect_format(path) == "benchguard"
    imported = import_path(path)
    assert [r["name"] for r in imported.records] == ["fix-login", "add-ratelimit"]
    assert "records[1]" in imported.problems[0]
    reports = [scan_record(record, load_ruleset()) for record in imported.records]
    assert [r.status for r in reports] == ["flagged", "clean"]
    assert "task-definition" in reports[0].categories


@pytest.mark.parametrize(
    ("reader", "what"),
    [
        (inspect_eval.import_file, "Inspect JSON log"),
        (swe_agent.import_file, "SWE-agent trajectory"),
        (mini_swe_agent.import_file, "mini-swe-agent trajectory"),
        (results_json.import_file, "benchguard results"),
    ],
    ids=["inspect", "swe-agent", "mini-swe-agent", "benchguard"],
)
def test_whole_document_readers_name_the_json_error_and_what_they_read(
    tmp_path: Path, reader: object, what: str
) -> None:
    """Guards against a truncated log being reported without the file, the decoder's
    reason and position, or the format it was read as: the user cannot tell where to
    look or whether the wrong format was forced."""
    path = tmp_path / "cut.json"
    path.write_text('{\n  "messages": [\n', encoding="utf-8")
    with pytest.raises(UnreadableLogError) as caught:
        reader(path)  # type: ignore[operator]
    message = str(caught.value)
    assert message.startswith(f"{path}: not valid JSON (")
    assert "line 3 column 1" in message and message.endswith(f"; read as {what}")
