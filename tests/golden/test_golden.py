"""Golden tests: what other tools and scripts read stays byte for byte what main wrote.

Every fixture and results file under tests/ scans to the same ``scan --json`` output
and the same ``scan -o`` summary, scores to the same results.json text, rows and
manifest, and a results file reads and writes back to the same bytes. Records written
by older versions (schema 1 and the reference's list layout, reports carrying their
dynamic rules inline) keep being read and scanned with those rules. The expected files
were written by ``tests/golden/regenerate.py`` from main before the record package
moved; when a change of output is intended, regenerate and say why in the commit.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .cases import (
    GOLDEN,
    inputs,
    results_inputs,
    rewrite_case,
    run_shape_case,
    scan_case,
    scan_summary_case,
    score_case,
    score_round_trip,
    slug,
)

_HINT = "if the change is intended, run tests/golden/regenerate.py and say why in the commit"


def _expected(name: str) -> Any:
    return json.loads((GOLDEN / name).read_text("utf-8"))


def test_every_input_has_a_golden_file() -> None:
    """A fixture added to tests/ without a golden file is not guarded: regenerate."""
    names = {f"scan/{slug(p)}.json" for p in inputs()} | {f"score/{slug(p)}.json" for p in inputs()}
    missing = sorted(n for n in names if not (GOLDEN / n).is_file())
    assert not missing, f"{missing}: {_HINT}"


@pytest.mark.parametrize("relative", inputs())
def test_scan_json_is_unchanged(relative: str) -> None:
    assert scan_case(relative) == _expected(f"scan/{slug(relative)}.json"), _HINT


@pytest.mark.parametrize("relative", inputs())
def test_score_writes_the_same_files(relative: str) -> None:
    assert score_case(relative) == _expected(f"score/{slug(relative)}.json"), _HINT


@pytest.mark.parametrize("relative", results_inputs())
def test_a_results_file_rewrites_to_the_same_bytes(relative: str) -> None:
    assert rewrite_case(relative) == _expected(f"rewrite/{slug(relative)}.json"), _HINT


@pytest.mark.parametrize("relative", results_inputs())
def test_what_score_wrote_reads_back_byte_identical(relative: str) -> None:
    assert score_round_trip(relative)


@pytest.mark.parametrize(
    "name", ["results_v1_inline.json", "results_list_inline.json", "results_v4_table.json"]
)
def test_old_records_are_scanned_with_their_stored_dynamic_rules(name: str) -> None:
    """Guards against a reader that drops a stored report's dynamic rules (inline in
    schema 1 and the list layout, by reference in schema 2+): the leftover read in the
    first record is found by the home-inventory rule the report carries (since detector
    version 11 the generic leftover families also name ``~/old-run/answers.txt``)."""
    out = scan_case(f"tests/golden/inputs/{name}")
    first = out["stdout"][0]["report"]
    assert out["exit_code"] == 1 and first["status"] == "flagged"
    assert "prior-run-artifact/old-run/path" in [f["rule"] for f in first["findings"]]


def test_scan_summary_is_unchanged() -> None:
    summary = scan_summary_case()
    assert summary == _expected("scan_summary.json"), _HINT
    for entry in summary["summary"]["files"]:
        assert {"format", "error", "problems", "records"} <= set(entry)


def test_the_run_directory_keeps_its_shape() -> None:
    """The shapes scripts read from ``run_*/``: keys may be added, none removed or
    reordered; ``run --quiet`` prints the run directory as its last line."""
    shape = run_shape_case()
    expected = _expected("run_shape.json")
    assert shape["exit_code"] == 0 and shape["last_line_is_the_run_dir"]
    assert shape["run_dir_name"] == expected["run_dir_name"]
    assert set(expected["layout"]) <= set(shape["layout"]), _HINT
    for key, keys in expected.items():
        if isinstance(keys, list) and key != "layout":
            kept = [k for k in shape[key] if k in keys]
            assert kept == keys, f"{key}: {_HINT}"
    # The keys the issue names as read by other tools, whatever the golden file says.
    assert {"runId", "plannedRuns", "notRun"} <= set(shape["manifest"])
    assert {"run_id", "records"} <= set(shape["results"])
    needed = {"folder", "iteration", "status", "input", "cheating_report", "sandboxed"}
    assert needed <= set(shape["results.records[]"])
    row_keys = {"taskFolder", "iteration", "status", "integrityStatus", "outcomeScore", "runId"}
    assert row_keys <= set(shape["rows[]"])
