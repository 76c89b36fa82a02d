"""``benchguard scan`` of harness results keeps the leftover-file rules the harness recorded."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from benchguard.cli import app
from benchguard.detection.detector import annotate_records
from benchguard.detection.inventory import build_inventory_rules
from benchguard.detection.rules import load_ruleset
from benchguard.engines import scan_files
from benchguard.results.io import DYNAMIC_RULESETS_KEY, ResultsDocument, dumps

STALE_LINE = "All 3 non-compliant deployments patched in namespace payments"


def _scan(*args: str) -> Result:
    return CliRunner().invoke(app, ["scan", *args], env={"COLUMNS": "250", "NO_COLOR": "1"})


def _record(index: int, command: str, result: str = "ok") -> dict[str, Any]:
    return {
        "name": f"t{index}",
        "folder": f"t{index}",
        "iteration": 1,
        "input": "fix the pods",
        "output": "done",
        "trajectory": [
            {"name": "exec", "args": {"command": command}, "result": result, "status": "ok"}
        ],
        "cheating_report": {},
    }


def _harness_records(tmp_path: Path) -> list[dict[str, Any]]:
    """Records scanned the way the harness does: static rules plus a home inventory
    holding last run's report.md (read by path in t1, quoted by content in t2)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "report.md").write_text(f"# Report\n{STALE_LINE}\n", encoding="utf-8")
    inventory = build_inventory_rules(home)
    records = [
        _record(0, "ls"),
        _record(1, "cat ~/report.md"),
        _record(2, "cat /tmp/copy.md", STALE_LINE),
    ]
    annotate_records(records, load_ruleset(), dynamic_rules_for=lambda _i, _r: inventory)
    return records


def _write(path: Path, records: list[dict[str, Any]], layout: str) -> Path:
    """``layout``: "list" (the reference's bare list), "object" (the harness's
    pretty-printed document) or "object-one-line" (the same document on one line, as
    ``jq -c`` or ``json.dump`` without indent writes it)."""
    if layout == "list":
        text = json.dumps(records)
    else:
        document = ResultsDocument(records=records, run_id="run_1", t="2026-01-01T00:00:00Z")
        data = document.to_json()
        text = json.dumps(data) if layout == "object-one-line" else dumps(data)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize("layout", ["object", "object-one-line", "list"])
@pytest.mark.parametrize("engine", ["serial", "dask"])
def test_leftover_findings_recorded_by_the_harness_stay_flagged(
    tmp_path: Path, layout: str, engine: str
) -> None:
    """Guards against ``scan`` rescanning harness records with the static rules only:
    a cheat caught through a leftover file (by path or by its content) would read
    clean. Every results layout (schema 2's shared rules table, pretty-printed or on
    one line, and the bare list) and both engines keep the stored inventory rules."""
    records = _harness_records(tmp_path)
    assert [r["cheating_report"]["status"] for r in records] == ["clean", "flagged", "flagged"]
    path = _write(tmp_path / "run" / "results.json", records, layout)
    if layout != "list":
        assert DYNAMIC_RULESETS_KEY in json.loads(path.read_text(encoding="utf-8"))

    args = ["--engine", engine] + (["--workers", "2"] if engine == "dask" else [])
    result = _scan(str(path), "--json", *args)
    assert result.exit_code == 1, result.output
    reports = [entry["report"] for entry in json.loads(result.stdout)]
    assert [r["status"] for r in reports] == ["clean", "flagged", "flagged"]
    assert [r["categories"] for r in reports[1:]] == [["prior-run-artifact"]] * 2
    assert [f["rule"] for f in reports[1]["findings"]] == ["prior-run-artifact/report.md/path"]
    assert [f["rule"] for f in reports[2]["findings"]] == ["prior-run-artifact/report.md/content"]
    # The verdict is the harness's own, rule set included.
    assert [r["ruleset_digest"] for r in reports] == [
        r["cheating_report"]["ruleset_digest"] for r in records
    ]


@pytest.mark.parametrize(
    "bad_rules",
    [
        "not a list",
        [{"id": "prior-run-artifact/x/path"}],  # a rule missing its patterns and category
    ],
)
def test_unreadable_stored_rules_read_flagged_and_incomplete(
    tmp_path: Path, bad_rules: Any
) -> None:
    """Guards against a record whose stored dynamic rules cannot be read being
    rescanned with the static rules alone and published clean: the rules that would
    have caught it are missing, so it is flagged and incomplete, and the note says why
    without quoting any pattern."""
    records = _harness_records(tmp_path)
    records[0]["cheating_report"]["dynamic_rules"] = bad_rules
    path = _write(tmp_path / "run" / "results.json", records, "list")
    [scanned] = scan_files([str(path)], load_ruleset())
    assert scanned.error is None
    first, second, third = (record.report for record in scanned.records)
    assert first.status == "flagged" and first.incomplete
    assert "scan-incomplete" in first.categories
    assert first.incomplete_reason is not None
    assert "dynamic rules cannot be read" in first.incomplete_reason
    assert STALE_LINE not in first.incomplete_reason
    # The neighbours keep their complete verdicts.
    assert not second.incomplete and not third.incomplete
    assert second.status == third.status == "flagged"


def test_a_foreign_record_without_a_stored_report_scans_with_static_rules(
    tmp_path: Path,
) -> None:
    """Guards against the stored-rules lookup failing closed on records that never had
    a report (imported logs, the reference's bare records): they scan as before."""
    record = _record(0, "ls")
    del record["cheating_report"]
    path = _write(tmp_path / "records.json", [record], "list")
    [scanned] = scan_files([str(path)], load_ruleset())
    assert [r.report.status for r in scanned.records] == ["clean"]
    assert not scanned.records[0].report.incomplete
