"""results.json written by older versions still reads; nothing written is lax JSON."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from benchguard.records import parse_record
from benchguard.results.io import RESULTS_SCHEMA_VERSION, dumps, read_results
from benchguard.results.rows import Manifest, build_rows


@pytest.mark.parametrize("schema", [None, 1, 2, RESULTS_SCHEMA_VERSION])
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
