"""A bad line never sinks a JSONL file, and the reference's record shape is read as is.

Issue 3 item 8: bad input gets an error naming the file and position while the valid
records beside it are still scanned. Issue 3 item 2: records in the reference's shape,
``{input, output, trajectory}``, are accepted as they are, whichever keys they carry.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchguard.cli import app
from benchguard.importers.registry import UnknownFormatError, detect_format, import_path
from benchguard.importers.transcript import UnreadableLogError

ENV = {"COLUMNS": "400", "NO_COLOR": "1"}
README_READ = {
    "trajectory": [
        {
            "name": "exec",
            "args": {"command": "cat ~/devops-bench/README.md"},
            "result": "",
            "status": "completed",
        }
    ]
}
REFERENCE_SHAPED = {"input": "do x", "output": "see bench.env"}


def _jsonl(path: Path, *lines: str) -> Path:
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    "bad_line",
    ["not json", '{"truncated": "rec', "[1, 2", "42", ""],
    ids=["text", "broken-object", "broken-list", "scalar", "blank"],
)
def test_bad_first_line_keeps_the_records_after_it(tmp_path: Path, bad_line: str) -> None:
    """Guards against sniffing only the first line: one bad line refused the whole file."""
    path = _jsonl(tmp_path / "run.jsonl", bad_line, json.dumps(README_READ))
    assert detect_format(path) == "benchguard"
    imported = import_path(path)
    assert imported.records == [README_READ]
    if not bad_line:
        assert imported.problems == []
        return
    [problem] = imported.problems
    assert str(path) in problem
    assert "line 1" in problem


def test_reference_shaped_jsonl_is_read_as_it_is(tmp_path: Path) -> None:
    """Guards against requiring a trajectory key: {input, output} is the reference's shape."""
    lines = _jsonl(tmp_path / "run.jsonl", json.dumps(REFERENCE_SHAPED))
    as_list = tmp_path / "run.json"
    as_list.write_text(json.dumps([REFERENCE_SHAPED]), encoding="utf-8")
    assert detect_format(lines) == detect_format(as_list) == "benchguard"
    assert import_path(lines).records == import_path(as_list).records == [REFERENCE_SHAPED]


def test_other_formats_are_still_detected_after_a_bad_first_line(
    fixtures: Path, tmp_path: Path
) -> None:
    """Guards against the wider sniff claiming another format's lines as our records."""
    for name, expected in (
        ("verifiers_traces.jsonl", "verifiers"),
        ("claude_code.stream.jsonl", "claude-code"),
    ):
        path = tmp_path / f"{expected}.log"
        path.write_text("garbage\n" + (fixtures / name).read_text(encoding="utf-8"))
        assert detect_format(path) == expected
        assert import_path(path).records


def test_an_object_in_no_format_is_still_unknown_after_a_bad_line(tmp_path: Path) -> None:
    """Guards against treating any object as a record: unrelated keys stay an error."""
    path = _jsonl(tmp_path / "run.jsonl", "not json", '{"unrelated": 1}')
    with pytest.raises(UnknownFormatError, match="keys: unrelated"):
        detect_format(path)


def test_text_with_no_json_line_is_unknown(tmp_path: Path) -> None:
    path = _jsonl(tmp_path / "notes.log", *(f"line {n}" for n in range(40)))
    with pytest.raises(UnknownFormatError, match="not JSON"):
        detect_format(path)


def test_broken_pretty_printed_document_keeps_its_json_error(tmp_path: Path) -> None:
    """Guards against a truncated results.json being read line-wise as a few ``{}`` records."""
    whole = json.dumps([{"trajectory": []}, {}, {"output": "x"}], indent=2)
    path = tmp_path / "results.json"
    path.write_text(whole[: whole.rindex("{")] + "{}\n  {\n", encoding="utf-8")
    with pytest.raises(UnreadableLogError, match="not valid JSON"):
        import_path(path, "benchguard")


def test_scan_cli_reports_the_bad_line_and_flags_the_valid_record(tmp_path: Path) -> None:
    """Guards against the CLI refusing the file (exit 2) instead of scanning what is valid."""
    path = _jsonl(tmp_path / "f.jsonl", "not json", json.dumps(README_READ))
    result = CliRunner().invoke(
        app, ["scan", str(path), "--profile", "devops-bench", "--json"], env=ENV
    )
    assert result.exit_code == 1, result.output
    entries = json.loads(result.stdout)
    [entry] = [e for e in entries if e["report"] is not None]
    assert entry["report"]["status"] == "flagged"
    [skipped] = [e for e in entries if e["report"] is None]
    assert skipped["file"] == str(path) and "line 1" in skipped["skipped"]
    assert f"{path}: line 1" in result.stderr.replace("\n", "")


def test_broken_pretty_printed_list_is_ours_and_names_its_json_error(tmp_path: Path) -> None:
    """Guards against a results list with a missing comma being sniffed line by line:
    its one-line step object matched no format, so the user was told the file is in an
    unknown format instead of where its JSON breaks."""
    step = '{"name": "exec", "args": {}, "result": "", "status": "completed"}'
    record = f'{{\n    "trajectory": [{step}]\n  }}'
    path = tmp_path / "results.json"
    path.write_text(f"[\n  {record}\n  {record}\n]\n", encoding="utf-8")
    assert detect_format(path) == "benchguard"
    with pytest.raises(UnreadableLogError, match=r"not valid JSON \(Expecting ',' delimiter"):
        import_path(path)
