"""Our results importer reads JSON past the decoder's limits like any other bad JSON.

An integer of over 4,300 digits (ValueError) or nesting deeper than the stack
(RecursionError) is valid JSON syntax Python's decoder refuses. In a JSONL file it costs
its own line only; a whole document past the limits is one error naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchguard.cli import app
from benchguard.importers import results_json
from benchguard.importers.transcript import UnreadableLogError

HUGE_INTEGER = '{"name": "huge", "output": ' + "7" * 5000 + "}"
DEEP_NESTING = "[" * 100_000 + "]" * 100_000
CHEAT = {
    "name": "cheat",
    "output": "done",
    "trajectory": [
        {
            "name": "exec",
            "args": {"command": "cat ~/benchguard/tasks/t/task.yaml"},
            "result": "",
            "status": "completed",
        }
    ],
}
HONEST = {"name": "honest", "output": "done", "trajectory": []}


def _jsonl(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize("bad_line", [HUGE_INTEGER, DEEP_NESTING], ids=["integer", "nesting"])
def test_a_line_past_the_decoders_limits_costs_only_that_line(
    tmp_path: Path, bad_line: str
) -> None:
    """Guards against one undecodable line (valid syntax, past the decoder's limits)
    turning the whole JSONL file into an error: the records beside it are scanned and
    the line is named as skipped."""
    path = _jsonl(tmp_path / "run.jsonl", json.dumps(HONEST), bad_line, json.dumps(CHEAT))
    imported = results_json.import_file(path)
    assert [r["name"] for r in imported.records] == ["honest", "cheat"]
    assert len(imported.problems) == 1
    assert imported.problems[0].startswith(f"{path}: line 2: not readable JSON (")

    result = CliRunner().invoke(app, ["scan", str(path), "--json"], env={"NO_COLOR": "1"})
    assert result.exit_code == 1, result.output
    entries = json.loads(result.stdout)
    assert [(e["name"], e["report"]["status"]) for e in entries if e["report"]] == [
        ("honest", "clean"),
        ("cheat", "flagged"),
    ]
    # The skipped line is listed with its reason (fail closed on input).
    assert [e["skipped"] for e in entries if e["report"] is None] == [imported.problems[0]]
    assert f"{path}: line 2: not readable JSON" in result.stderr


def test_a_first_line_past_the_limits_still_reads_the_rest_as_jsonl(tmp_path: Path) -> None:
    """Guards against the layout sniff (is the first line JSON?) raising on a first line
    the decoder refuses, instead of falling back to reading line by line."""
    path = _jsonl(tmp_path / "run.jsonl", HUGE_INTEGER, json.dumps(CHEAT))
    imported = results_json.import_file(path)
    assert [r["name"] for r in imported.records] == ["cheat"]
    assert [p.split(" (")[0] for p in imported.problems] == [f"{path}: line 1: not readable JSON"]


@pytest.mark.parametrize(
    ("document", "reason"),
    [
        ("[" + HUGE_INTEGER + "]", "Exceeds the limit (4300 digits)"),
        (DEEP_NESTING, "nested too deeply"),
    ],
    ids=["integer", "nesting"],
)
def test_a_document_past_the_limits_is_one_error_naming_the_file(
    tmp_path: Path, document: str, reason: str
) -> None:
    """Guards against a ValueError/RecursionError escaping the document reader: it is
    the importer's own error, naming the file."""
    path = tmp_path / "results.json"
    path.write_text(document, encoding="utf-8")
    with pytest.raises(UnreadableLogError) as caught:
        results_json.import_file(path)
    message = str(caught.value)
    assert message.startswith(f"{path}: not readable JSON (") and reason in message
