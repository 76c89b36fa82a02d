"""Reviewed dismissals: file format, applying to a verdict, and surviving rescores."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest

from benchguard.detection.detector import scan_record
from benchguard.detection.models import CheatingReport
from benchguard.detection.rules import load_ruleset
from benchguard.results.dismissals import (
    Dismissal,
    DismissalFileError,
    append_dismissal,
    apply_dismissals,
    load_dismissals,
)
from benchguard.results.rescore import unmatched_messages
from benchguard.results.rows import build_rows
from benchguard.scoring import keys

from .builders import manifest, rescore

RULES = load_ruleset("benchguard")
READ_TASK = "task-definition/path"


def _cheat_record(folder: str = "opa", iteration: int = 0) -> dict[str, Any]:
    """Reads a task definition (flagged) and writes a correct answer."""
    return {
        "folder": folder,
        "iteration": iteration,
        "input": "fix the policy",
        "output": "done",
        "status": "success",
        "validated": True,
        "trajectory": [
            {
                "name": "exec",
                "args": {"command": f"cat tasks/{folder}/task.yaml"},
                "result": "name: opa",
                "status": "completed",
            },
        ],
        "scores": {keys.VERIFICATION_CORRECTNESS: 1.0},
        "cheating_report": {},
    }


def _dismissal(**overrides: Any) -> Dismissal:
    data: dict[str, Any] = {
        "task": "opa",
        "iteration": 0,
        "rule": READ_TASK,
        "reviewer": "ana",
        "reason": "the prompt hands the agent its own task file",
        "date": "2026-01-05",
    }
    data.update(overrides)
    return Dismissal.model_validate(data)


def test_yaml_and_json_files_load(tmp_path: Path) -> None:
    yaml_file = tmp_path / "d.yaml"
    yaml_file.write_text(
        "dismissals:\n  - {task: opa, iteration: 0, rule: r, reviewer: ana, reason: ok, date: 2026-01-05}\n",
        encoding="utf-8",
    )
    json_file = tmp_path / "d.json"
    json_file.write_text(json.dumps([{"run_id": "run_1", "task": "opa", "iteration": 1, "rule": "r",
                                       "reviewer": "bo", "reason": "ok", "date": "2026-01-06"}]))  # fmt: skip
    (from_yaml,) = load_dismissals(yaml_file)
    (from_json,) = load_dismissals(json_file)
    assert from_yaml.date == dt.date(2026, 1, 5) and from_yaml.run_id is None
    assert from_json.run_id == "run_1"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("dismissals: [", "cannot parse"),
        ("dismissals: 3", "expected a list of dismissals"),
        ("oops: []", "unknown top-level field(s): oops"),
        ("- {task: opa, iteration: 0, rule: r, reviewer: ' ', reason: x, date: 2026-01-01}",
         "dismissal 0 is invalid: reviewer: Value error, must not be blank"),
        ("- {task: opa, iteration: 0, rule: r, reviewer: a, reason: x, date: someday}",
         "dismissal 0 is invalid: date"),
        ("- {task: opa, iteration: 0, rule: r, reviewer: a, reason: x, date: 2026-01-01, extra: 1}",
         "dismissal 0 is invalid: extra"),
    ],
)  # fmt: skip
def test_bad_dismissal_files_fail_clearly(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "dismissals.yaml"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DismissalFileError) as caught:
        load_dismissals(path)
    assert str(path) in str(caught.value) and message in str(caught.value)


def test_append_keeps_existing_entries(tmp_path: Path) -> None:
    path = tmp_path / "dismissals.yaml"
    append_dismissal(path, _dismissal())
    append_dismissal(path, _dismissal(reviewer="bo", run_id="run_1"))
    assert [d.reviewer for d in load_dismissals(path)] == ["ana", "bo"]


def test_dismissing_every_finding_makes_the_report_clean() -> None:
    report = scan_record(_cheat_record(), RULES)
    assert report.status == "flagged"
    updated, matched = apply_dismissals(report, [_dismissal()])
    assert matched == {READ_TASK}
    assert updated.status == "clean" and updated.findings == () and updated.categories == ()
    assert [d.finding.rule for d in updated.dismissed] == [READ_TASK]
    assert updated.dismissed[0].reviewer == "ana"


def test_dismissing_one_rule_leaves_the_others_flagged() -> None:
    """Guards against a dismissal of one rule clearing a run that also did something else."""
    record = _cheat_record()
    record["trajectory"].append(
        {
            "name": "exec",
            "args": {"command": "cat ~/benchguard/docs/scoring.md"},
            "result": "",
            "status": "completed",
        }
    )
    report = scan_record(record, RULES)
    others = {f.rule for f in report.findings} - {READ_TASK}
    assert others, "fixture must trigger a second rule"
    updated, _ = apply_dismissals(report, [_dismissal()])
    assert updated.status == "flagged"
    assert {f.rule for f in updated.findings} == others


def test_an_incomplete_scan_is_never_cleared_by_dismissals() -> None:
    """Guards against dismissing the findings of a scan that hit its bound: the
    unscanned rest could hold anything."""
    report = scan_record(_cheat_record(), RULES)
    partial = CheatingReport.model_validate(
        {**report.model_dump(), "incomplete": True, "incomplete_reason": "time budget",
         "categories": sorted({*report.categories, "scan-incomplete"})}
    )  # fmt: skip
    updated, _ = apply_dismissals(partial, [_dismissal()])
    assert updated.status == "flagged" and updated.categories == ("scan-incomplete",)


def test_dismissal_survives_rescoring_and_is_counted_on_the_row() -> None:
    """Guards against a reviewed false positive re-firing the gate on the next rescore:
    the audit trail on the report carries the dismissal forward, even without its file,
    and applying the file again does not duplicate it."""
    records: list[Any] = [_cheat_record(), _cheat_record(iteration=1)]
    first = rescore(records, RULES, dismissals=[_dismissal()])
    assert first.stale_dismissals == [] and first.errors == []
    assert unmatched_messages([_dismissal()], first.dismissals_used) == []
    assert records[0]["scores"][keys.OUTCOME_SCORE]["score"] == 1.0
    assert records[1]["scores"][keys.OUTCOME_SCORE]["score"] == 0.0  # other iteration untouched

    again = rescore(records, RULES)  # no file this time
    assert again.stale_dismissals == []
    assert records[0]["cheating_report"]["status"] == "clean"
    assert records[0]["scores"][keys.OUTCOME_SCORE]["score"] == 1.0
    rescore(records, RULES, dismissals=[_dismissal()])
    assert len(records[0]["cheating_report"]["dismissed"]) == 1

    rows = build_rows(records, manifest())
    assert rows[0].dismissed_findings == 1 and rows[0].integrity_status == "clean"
    assert rows[0].catastrophic is False
    assert rows[1].dismissed_findings == 0 and rows[1].catastrophic_kinds == (
        keys.INTEGRITY_CATASTROPHIC,
    )


@pytest.mark.parametrize(
    "overrides",
    [{"rule": "harness-repo/path"}, {"task": "other"}, {"iteration": 3}, {"run_id": "run_other"}],
)
def test_a_dismissal_matching_nothing_is_reported(overrides: dict[str, Any]) -> None:
    """Guards against a typo'd dismissal being silently ignored while the reviewer
    believes the run was cleared."""
    records: list[Any] = [_cheat_record()]
    dismissals = [_dismissal(**overrides)]
    outcome = rescore(records, RULES, dismissals=dismissals, run_id="run_1")
    unmatched = [
        *outcome.stale_dismissals,
        *unmatched_messages(dismissals, outcome.dismissals_used),
    ]
    assert len(unmatched) == 1
    assert "matched no finding" in unmatched[0]
    assert records[0]["scores"][keys.OUTCOME_SCORE]["score"] == 0.0


def test_a_failed_rescan_keeps_the_stored_verdict() -> None:
    """Guards against a rescan crash turning a flagged record into an unchecked pass."""
    records: list[Any] = [_cheat_record()]
    rescore(records, RULES)
    assert records[0]["cheating_report"]["status"] == "flagged"
    records[0]["cheating_report"]["dynamic_rules"] = [{"id": "broken"}]
    outcome = rescore(records, RULES)
    assert "rescan failed" in outcome.errors[0] and "dynamic rule 0 is invalid" in outcome.errors[0]
    assert records[0]["cheating_report"]["status"] == "flagged"
    assert records[0]["scores"][keys.OUTCOME_SCORE]["score"] == 0.0


def test_stored_dynamic_rules_apply_on_rescan() -> None:
    """A leftover-file rule generated before the run must still fire on a rescore."""
    record = _cheat_record()
    record["trajectory"] = [{"name": "exec", "args": {"command": "cat ~/q3-figures.md"},
                             "result": "", "status": "completed"}]  # fmt: skip
    leftover = {"id": "prior-run-artifact/q3-figures.md", "category": "prior-run-artifact",
                "material": "a prior run's leftover", "patterns": ["q3-figures\\.md"],
                "source": "q3-figures.md"}  # fmt: skip
    record["cheating_report"] = {"status": "clean", "dynamic_rules": [leftover]}
    rescore([record], RULES)
    assert record["cheating_report"]["status"] == "flagged"
    assert record["cheating_report"]["categories"] == ["prior-run-artifact"]
