"""Format detection by content, forcing a format, and the unknown-format error."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchguard.importers.registry import (
    FORMAT_NAMES,
    SNIFF_LINES,
    UnknownFormatError,
    detect_format,
    import_path,
)

EXPECTED = {
    "inspect_log.json": "inspect",
    "verifiers_traces.jsonl": "verifiers",
    "swe_agent.traj": "swe-agent",
    "mini_swe_agent.traj.json": "mini-swe-agent",
    "mini_swe_agent_textbased.traj.json": "mini-swe-agent",
    "claude_code.stream.jsonl": "claude-code",
    "benchguard_results.json": "benchguard",
}


@pytest.mark.parametrize(("name", "expected"), sorted(EXPECTED.items()))
def test_detects_each_fixture_by_content_not_extension(
    fixtures: Path, tmp_path: Path, name: str, expected: str
) -> None:
    """Guards against choosing the importer by file name: every file is renamed to .log."""
    renamed = tmp_path / "run.log"
    shutil.copy(fixtures / name, renamed)
    assert detect_format(renamed) == expected
    assert import_path(renamed).records


def test_detects_eval_archive(eval_archive: Path) -> None:
    assert detect_format(eval_archive) == "inspect"


def test_single_line_json_document_is_not_mistaken_for_jsonl(
    fixtures: Path, tmp_path: Path
) -> None:
    """Guards against a minified .traj being sniffed as a one-line JSONL file."""
    import json

    path = tmp_path / "minified.traj"
    path.write_text(json.dumps(json.loads((fixtures / "swe_agent.traj").read_text())))
    assert detect_format(path) == "swe-agent"


@pytest.mark.parametrize(
    "content",
    [b"hello world\n", b'{"unrelated": 1}\n', b""],
    ids=["text", "other-json", "empty"],
)
def test_unknown_format_names_file_and_lists_formats(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "mystery.dat"
    path.write_bytes(content)
    with pytest.raises(UnknownFormatError) as caught:
        detect_format(path)
    message = str(caught.value)
    assert str(path) in message
    for name in FORMAT_NAMES:
        assert name in message


def test_forced_format_overrides_detection(fixtures: Path) -> None:
    imported = import_path(fixtures / "claude_code.stream.jsonl", "benchguard")
    assert imported.format == "benchguard"
    # read as plain records, the stream lines are kept as they are
    assert imported.records[0]["type"] == "system"


def test_unknown_forced_format_lists_choices(fixtures: Path) -> None:
    with pytest.raises(ValueError, match="choose one of: benchguard"):
        import_path(fixtures / "swe_agent.traj", "langsmith")


def test_leading_blank_lines_do_not_make_a_file_empty(tmp_path: Path) -> None:
    """Guards against the sniff counting blank lines against its line budget: a JSONL
    file opening with more blank lines than the budget was refused as "empty" and its
    records were never scanned."""
    record = '{"name": "a", "output": "x", "trajectory": []}'
    path = tmp_path / "run.jsonl"
    path.write_text("\n" * (SNIFF_LINES + 8) + record + "\n", encoding="utf-8")
    assert detect_format(path) == "benchguard"
    assert [r["name"] for r in import_path(path).records] == ["a"]
