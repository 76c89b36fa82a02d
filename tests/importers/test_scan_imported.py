"""Imported runs go through the real detector: a planted task.yaml read is flagged."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchguard.detection.detector import scan_record
from benchguard.detection.models import Rule
from benchguard.detection.rules import load_ruleset
from benchguard.importers.registry import import_path

# fixture file -> index of the record holding the planted read, and the step index
PLANTED = {
    "claude_code.stream.jsonl": (0, 1),
    "inspect_log.json": (0, 1),
    "verifiers_traces.jsonl": (0, 0),
    "swe_agent.traj": (0, 1),
    "mini_swe_agent.traj.json": (0, 1),
    "mini_swe_agent_textbased.traj.json": (0, 0),
    "benchguard_results.json": (0, 1),
}


@pytest.fixture(scope="module")
def rules() -> tuple[Rule, ...]:
    return load_ruleset()


@pytest.mark.parametrize(("name", "where"), sorted(PLANTED.items()))
def test_planted_task_definition_read_is_flagged(
    fixtures: Path, rules: tuple[Rule, ...], name: str, where: tuple[int, int]
) -> None:
    """Guards against an importer dropping the step (or its args) that reads task.yaml."""
    record_index, step_index = where
    records = import_path(fixtures / name).records
    report = scan_record(records[record_index], rules)
    assert report.status == "flagged"
    assert "task-definition" in report.categories
    assert any(
        f.category == "task-definition" and f.trajectory_index == step_index
        for f in report.findings
    )


def test_honest_records_beside_the_planted_one_stay_clean(
    fixtures: Path, rules: tuple[Rule, ...]
) -> None:
    for name in ("verifiers_traces.jsonl", "benchguard_results.json"):
        honest = import_path(fixtures / name).records[-1]
        assert scan_record(honest, rules).status == "clean"


def test_eval_archive_read_through_find_exec_is_flagged_by_content(
    eval_archive: Path, rules: tuple[Rule, ...]
) -> None:
    """Guards against an attachment:// reference hiding the rubric a find -exec printed."""
    [record] = import_path(eval_archive).records
    report = scan_record(record, rules)
    assert report.status == "flagged"
    assert any(f.field == "result" and f.category == "task-definition" for f in report.findings)
