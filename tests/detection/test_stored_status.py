"""Stored reports read back fail-closed, the same way by the detector and the gate."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from benchguard.detection.detector import report_from_record, scan_record
from benchguard.detection.rules import load_ruleset
from benchguard.detection.stored_status import stored_status
from benchguard.scoring.integrity import gate_status

DETECTION_SRC = Path(__file__).resolve().parents[2] / "src" / "benchguard" / "detection"

_FINDING = (
    scan_record(
        {
            "trajectory": [
                {
                    "name": "exec",
                    "args": {"command": "cat ~/bench.env"},
                    "result": "",
                    "status": "ok",
                }
            ]
        },
        load_ruleset("devops-bench"),
    )
    .findings[0]
    .model_dump(mode="json")
)

MALFORMED: dict[str, dict[str, Any]] = {
    "clean-with-findings": {"status": "clean", "findings": [_FINDING]},
    "clean-with-junk-findings": {"status": "clean", "findings": [{"rule": 3}]},
    "clean-with-categories": {"status": "clean", "categories": ["results-dir"]},
    "clean-with-category-string": {"status": "clean", "categories": "results-dir"},
    "clean-with-category-dict": {"status": "clean", "categories": {"a": 1}},
    "clean-with-scalar-findings": {"status": "clean", "findings": 7},
    "clean-incomplete-string": {"status": "clean", "incomplete": "yes"},
    "clean-incomplete-one": {"status": "clean", "incomplete": 1},
    "no-data-with-findings": {"status": "no_data", "findings": [_FINDING]},
    "no-data-with-categories": {"status": "no_data", "categories": ["x"]},
    "no-data-incomplete": {"status": "no_data", "incomplete": True},
    "unknown-status-with-findings": {"status": "FLAGGED", "findings": [_FINDING]},
    "unknown-status-with-categories": {"status": None, "categories": ["x"]},
    "missing-status-incomplete": {"incomplete": True},
    "valid-model-no-data-with-categories": {
        "detector_version": 1,
        "status": "no_data",
        "categories": ["results-dir"],
    },
}


@pytest.mark.parametrize("raw", list(MALFORMED.values()), ids=list(MALFORMED))
def test_report_carrying_evidence_reads_flagged_like_the_gate(raw: dict[str, Any]) -> None:
    """Guards against the detector reading clean a stored report the gate zeroes."""
    assert gate_status(raw) == "flagged"
    report = report_from_record({"cheating_report": raw})
    assert report is not None
    assert report.status == "flagged"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ({"status": "clean"}, "clean"),
        ({"status": "clean", "findings": [], "categories": [], "incomplete": False}, "clean"),
        ({"status": "no_data", "incomplete": None}, "no_data"),
        ({"status": "weird"}, None),
        ({"status": "FLAGGED"}, None),
    ],
)
def test_reports_without_evidence_keep_their_status(
    raw: dict[str, Any], expected: str | None
) -> None:
    assert stored_status(raw) == gate_status(raw) == expected
    report = report_from_record({"cheating_report": raw})
    assert (report.status if report is not None else None) == expected


def test_incomplete_mark_names_the_scan_incomplete_category() -> None:
    report = report_from_record({"cheating_report": {"status": "clean", "incomplete": "yes"}})
    assert report is not None and report.incomplete
    assert "scan-incomplete" in report.categories


def test_detection_never_imports_scoring() -> None:
    """Guards the layering: the verdict layer must not depend on its consequence."""
    for path in sorted(DETECTION_SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                names = [node.module or ""]
            elif isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            else:
                continue
            assert not any(n.startswith("benchguard.scoring") for n in names), path
