"""JSON past the decoder's limits is bad input naming the file, never a traceback."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from benchguard.cli import app
from benchguard.results.io import ResultsFileError, read_json

# Valid JSON syntax that Python's decoder refuses: an integer of over 4,300 digits
# (ValueError) and nesting deeper than the interpreter's stack (RecursionError).
HUGE_INTEGER = '[{"folder": "t", "iteration": ' + "7" * 5000 + "}]"
DEEP_NESTING = "[" * 100_000 + "]" * 100_000
BAD_JSON = {"huge-integer": HUGE_INTEGER, "deep-nesting": DEEP_NESTING}
MESSAGES = {"huge-integer": "JSON beyond what can be read", "deep-nesting": "nested too deeply"}


def _invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "200", "NO_COLOR": "1"})


def _record() -> dict[str, Any]:
    return {
        "name": "t",
        "folder": "t",
        "iteration": 0,
        "input": "rotate the logs",
        "output": "done",
        "trajectory": [
            {"name": "exec", "args": {"command": "ls"}, "result": "ok", "status": "completed"}
        ],
        "scores": {"VerificationCorrectness": 1.0},
        "cheating_report": {},
    }


def _tree(root: Path, kind: str) -> tuple[Path, Path]:
    """A good run and, beside it, a run whose results.json the decoder refuses."""
    good, bad = root / "a_good" / "results.json", root / "b_bad" / "results.json"
    for path in (good, bad):
        path.parent.mkdir(parents=True)
    good.write_text(json.dumps([_record()]), encoding="utf-8")
    bad.write_text(BAD_JSON[kind], encoding="utf-8")
    return good, bad


@pytest.mark.parametrize("kind", sorted(BAD_JSON))
def test_read_json_names_the_file(tmp_path: Path, kind: str) -> None:
    """Guards against a ValueError/RecursionError escaping the results reader."""
    path = tmp_path / "results.json"
    path.write_text(BAD_JSON[kind], encoding="utf-8")
    with pytest.raises(ResultsFileError) as caught:
        read_json(path)
    assert str(caught.value).startswith(f"{path}: ")
    assert MESSAGES[kind] in str(caught.value)


@pytest.mark.parametrize("kind", sorted(BAD_JSON))
def test_score_reports_the_file_and_scores_the_others(tmp_path: Path, kind: str) -> None:
    """Guards against one undecodable results.json in a tree crashing ``score`` with a
    traceback and abandoning every other run: it is named, exit 2, the rest written."""
    good, bad = _tree(tmp_path / "runs", kind)
    result = _invoke("score", str(tmp_path / "runs"))
    assert result.exit_code == 2, result.output
    assert f"{bad}: " in result.stderr and MESSAGES[kind] in result.stderr
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert (good.parent / "rows.json").is_file()
    assert sorted(p.name for p in bad.parent.iterdir()) == ["results.json"]


@pytest.mark.parametrize("kind", sorted(BAD_JSON))
def test_dismiss_on_an_undecodable_results_file_is_exit_2(tmp_path: Path, kind: str) -> None:
    """Guards against ``dismiss`` tracing back instead of naming the file."""
    _, bad = _tree(tmp_path / "runs", kind)
    result = _invoke(
        "dismiss", str(bad), "--task", "t", "--iteration", "0", "--rule", "x/path",
        "--reviewer", "ana", "--reason", "told to",
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert f"{bad}: " in result.stderr and MESSAGES[kind] in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert not (bad.parent / "dismissals.yaml").exists()


@pytest.mark.parametrize("kind", sorted(BAD_JSON))
def test_leaderboard_and_aggregate_name_an_undecodable_rows_file(tmp_path: Path, kind: str) -> None:
    """Guards against a rows.json past the decoder's limits crashing the publication
    commands: ``leaderboard`` refuses it by name (exit 2); ``aggregate`` names it as
    skipped and still merges the good rows."""
    good, _ = _tree(tmp_path / "runs", kind)
    assert _invoke("score", str(good)).exit_code == 0
    bad_rows = tmp_path / "runs" / "c_rows" / "rows.json"
    bad_rows.parent.mkdir()
    bad_rows.write_text(BAD_JSON[kind], encoding="utf-8")

    board = _invoke("leaderboard", str(good.parent / "rows.json"), str(bad_rows))
    assert board.exit_code == 2, board.output
    assert f"{bad_rows}: " in board.stderr and MESSAGES[kind] in board.stderr
    assert board.exception is None or isinstance(board.exception, SystemExit)

    out = tmp_path / "merged"
    merged = _invoke("aggregate", str(tmp_path / "runs"), "-o", str(out))
    assert f"{bad_rows}: " in merged.stderr and MESSAGES[kind] in merged.stderr
    assert merged.exception is None or isinstance(merged.exception, SystemExit)
    rows = json.loads((out / "rows.json").read_text(encoding="utf-8"))
    assert [row["taskFolder"] for row in rows] == ["t"]
