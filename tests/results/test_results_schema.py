"""results.json written by older versions still reads; nothing written is lax JSON."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from benchguard.records import parse_record
from benchguard.results.io import RESULTS_SCHEMA_VERSION, dumps, read_results
from benchguard.results.rows import Manifest, build_rows


@pytest.mark.parametrize("schema", [None, 1, 2, 3, RESULTS_SCHEMA_VERSION])
def test_older_results_files_read_and_build_rows(tmp_path: Path, schema: int | None) -> None:
    # A schema-2 record: no started_at/finished_at/record_errors, no "interrupted".
    record = {"name": "t", "folder": "t", "iteration": 1, "status": "success", "scores": {}}
    document: dict[str, object] = {"run_id": "r", "t": "2026-01-01T00:00:00Z", "records": [record]}
    if schema is not None:
        document["schema_version"] = schema
    path = tmp_path / "results.json"
    path.write_text(json.dumps(document), "utf-8")
    read = read_results(path)
    [parsed] = [parse_record(r) for r in read.records]
    assert parsed.to_json(complete=False) == record
    rows = build_rows(read.records, Manifest(run_id="r", t="t", setup_id="s"))
    assert rows[0].task_folder == "t" and rows[0].error == ""


def test_a_newer_schema_is_refused_by_name(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps({"schema_version": RESULTS_SCHEMA_VERSION + 1, "records": []}))
    with pytest.raises(ValueError, match="newer than this benchguard reads"):
        read_results(path)


def test_writing_refuses_non_finite_numbers() -> None:
    """Guards against bare NaN/Infinity tokens, which strict JSON readers reject."""
    with pytest.raises(ValueError):
        dumps({"score": math.nan})


def test_score_rewrites_a_hand_edited_file_with_nan_and_surrogates_as_strict_json(
    tmp_path: Path,
) -> None:
    """Guards against a results.json holding NaN or a lone surrogate (hand-edited, or
    written by another tool) crashing ``score`` with a traceback when it writes back."""
    from typer.testing import CliRunner

    from benchguard.cli import app

    path = tmp_path / "results.json"
    path.write_text(
        '{"schema_version": 2, "run_id": "r", "t": "2026-01-01T00:00:00Z", "records": [{'
        '"name": "t", "folder": "t", "iteration": 1, "status": "success", '
        '"output": "x \\ud800", "trajectory": [{"name": "bash", "args": {"n": NaN}}], '
        '"scores": {"VerificationCorrectness": {"score": Infinity}}}]}',
        "utf-8",
    )
    result = CliRunner().invoke(app, ["score", str(path)])
    assert result.exception is None or isinstance(result.exception, SystemExit), result.output
    assert "Traceback" not in result.output

    def refuse(token: str) -> None:
        raise AssertionError(f"non-standard JSON token {token} written")

    written = json.loads(path.read_text("utf-8"), parse_constant=refuse)
    [record] = written["records"]
    assert record["output"] == "x \ufffd"
    assert record["trajectory"][0]["args"]["n"] is None
    assert len(record["record_errors"]) == 2
