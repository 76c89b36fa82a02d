"""Aggregation: rebatch, dedupe, manifests, and the historical-row round trip."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchguard.results.aggregate import aggregate, build_manifests, dedupe_latest, rebatch_rows
from benchguard.results.io import ResultsFileError, read_rows
from benchguard.results.rows import LEGACY_SCHEMA_VERSION, ResultRow

HISTORICAL_ROW: dict[str, Any] = {
    "setupId": "gemini-gemini-cli",
    "runId": "run_20250101_000000",
    "t": "2025-01-01T00:00:00Z",
    "taskFolder": "opa-remediation",
    "iteration": 0,
    "model": "gemini",
    "harness": "gemini-cli",
    "status": "success",
    "validated": True,
    "outcomeScore": 0.0,
    "correctnessScore": 1.0,
    "recoverableSafetyScore": None,
    "scoringVersion": "v1",
    "catastrophic": True,
    "tokens": {"input": 10},
}


def test_historical_row_keeps_its_catastrophic_bool() -> None:
    """Guards against deriving the bool from the list: a row written before
    catastrophicKinds existed must stay catastrophic after a rebatch."""
    (row,) = rebatch_rows([HISTORICAL_ROW], run_id="run_new", t="2026-01-01T00:00:00Z")
    assert row.catastrophic is True
    assert row.catastrophic_kinds == ()
    assert row.schema_version == LEGACY_SCHEMA_VERSION
    assert row.integrity_status == "unverified"
    data = row.to_json()
    assert data["runId"] == "run_new" and data["t"] == "2026-01-01T00:00:00Z"
    assert data["catastrophic"] is True and data["catastrophicKinds"] == []
    assert data["tokens"] == {"input": 10}  # foreign dashboard fields are kept


def test_rebatch_rejects_a_malformed_row_loudly() -> None:
    with pytest.raises(ResultsFileError, match="row 0 is invalid: setupId"):
        rebatch_rows([{"runId": "x", "t": "t", "taskFolder": "f"}], run_id="r", t="t")


def _row(setup: str, task: str, iteration: int, t: str, outcome: float) -> ResultRow:
    return ResultRow(
        setup_id=setup,
        run_id="r",
        t=t,
        task_folder=task,
        iteration=iteration,
        outcome_score=outcome,
    )


def test_dedupe_keeps_latest_per_setup_task_iteration() -> None:
    rows = [
        _row("a", "t1", 0, "2026-01-02T00:00:00Z", 0.2),
        _row("a", "t1", 0, "2026-01-01T00:00:00Z", 0.9),
        _row("a", "t1", 1, "2026-01-01T00:00:00Z", 0.5),
        _row("b", "t1", 0, "2026-01-01T00:00:00Z", 0.7),
    ]
    kept = dedupe_latest(rows)
    assert [(r.setup_id, r.iteration, r.outcome_score) for r in kept] == [
        ("a", 0, 0.2),
        ("a", 1, 0.5),
        ("b", 0, 0.7),
    ]


def test_one_manifest_per_setup_in_first_seen_order() -> None:
    rows = [_row("b", "t", 0, "x", 1.0), _row("a", "t", 0, "x", 1.0), _row("b", "u", 0, "x", 1.0)]
    manifests = build_manifests(rows, run_id="r", t="t")
    assert [m.setup_id for m in manifests] == ["b", "a"]


def _write(path: Path, data: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def test_aggregate_merges_files_into_one_batch_and_reports_bad_files(tmp_path: Path) -> None:
    """Guards against one corrupt rows.json losing every valid file beside it."""
    first = _row("a", "t1", 0, "2026-01-01T00:00:00Z", 0.4).to_json()
    newer = _row("a", "t1", 0, "2026-01-03T00:00:00Z", 0.8).to_json()
    other = _row("a", "t2", 0, "2026-01-02T00:00:00Z", 1.0).to_json()
    files = [
        _write(tmp_path / "t1-old" / "rows.json", [first]),
        _write(tmp_path / "t1-new" / "rows.json", [newer]),
        _write(tmp_path / "t2" / "rows.json", [other]),
        _write(tmp_path / "broken" / "rows.json", {"rows": "nope"}),
    ]
    _write(tmp_path / "t2" / "manifest.json", {
        "runId": "x", "t": "x", "setupId": "a", "model": "m", "harness": "h",
        "augmentation": ["sandboxed"],
    })  # fmt: skip
    result = aggregate(sorted(files), run_id="run_agg", t="2026-02-01T00:00:00Z")
    assert {(r.task_folder, r.outcome_score) for r in result.rows} == {("t1", 0.8), ("t2", 1.0)}
    assert {r.run_id for r in result.rows} == {"run_agg"}
    assert {r.t for r in result.rows} == {"2026-02-01T00:00:00Z"}
    assert [m.augmentation for m in result.manifests] == [("sandboxed",)]
    assert len(result.problems) == 1 and "broken" in result.problems[0]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("{not json", "invalid JSON at line 1 column 2"),
        ("[1]", "row 0 is int, not an object"),
        ('[{"setupId": "a"}]', "row 0 is invalid: runId: Field required"),
        ('"rows"', "expected a JSON list of rows"),
    ],
)
def test_read_rows_errors_name_file_and_problem(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "rows.json"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(ResultsFileError) as caught:
        read_rows(path)
    assert str(path) in str(caught.value) and message in str(caught.value)
