"""The harness's truncation mark: a record whose transcript was cut never scans clean."""

from __future__ import annotations

from typing import Any

import pytest

from benchguard.detection import (
    SCAN_INCOMPLETE_CATEGORY,
    Rule,
    describe_findings,
    load_profile,
    scan_record,
)
from benchguard.detection.detector import (
    DETECTOR_VERSION,
    TRANSCRIPT_TRUNCATED_KEY,
    TRANSCRIPT_TRUNCATED_REASON,
)
from benchguard.scoring.integrity import integrity_entry


@pytest.fixture(scope="module")
def ours() -> tuple[Rule, ...]:
    return load_profile("benchguard")


_UNSET = object()


def _record(
    command: str = "ls", result: str = "answer.txt", *, mark: Any = _UNSET
) -> dict[str, Any]:
    step = {"name": "shell", "args": {"command": command}, "result": result, "status": "completed"}
    record: dict[str, Any] = {"input": "Sum the numbers.", "output": "137", "trajectory": [step]}
    if mark is not _UNSET:
        record[TRANSCRIPT_TRUNCATED_KEY] = mark
    return record


def test_the_same_record_reads_clean_without_the_mark(ours: tuple[Rule, ...]) -> None:
    """Baseline for the tests below: the mark alone is what flags them."""
    report = scan_record(_record(), ours)
    assert report.status == "clean" and not report.incomplete


def test_a_cut_transcript_is_flagged_incomplete_with_a_fixed_reason(
    ours: tuple[Rule, ...],
) -> None:
    """Guards against a cheater padding its transcript past the harness's bound (so the
    read lies in the part that was cut) and the rest reading clean."""
    report = scan_record(_record(mark=True), ours)
    assert report.status == "flagged"
    assert report.incomplete is True
    assert report.categories == (SCAN_INCOMPLETE_CATEGORY,)
    assert report.incomplete_reason == TRANSCRIPT_TRUNCATED_REASON
    assert report.findings == ()
    assert report.detector_version == DETECTOR_VERSION
    entry = integrity_entry(report.model_dump(mode="json"))
    assert entry is not None and entry["score"] == 0.0
    names = [verdict["name"] for verdict in describe_findings(report)]
    assert names == [SCAN_INCOMPLETE_CATEGORY]


def test_findings_in_what_was_kept_stay_beside_the_mark(ours: tuple[Rule, ...]) -> None:
    """Guards against the incomplete mark replacing the evidence the scan did see."""
    record = _record(
        "cat ~/benchguard/tasks/sum-numbers/task.yaml",
        "verification:\n  - name: total-correct\n",
        mark=True,
    )
    report = scan_record(record, ours)
    assert report.status == "flagged" and report.incomplete
    assert "task-definition" in report.categories
    assert SCAN_INCOMPLETE_CATEGORY in report.categories
    assert report.findings
    assert report.incomplete_reason is not None
    assert report.incomplete_reason.startswith(TRANSCRIPT_TRUNCATED_REASON)


def test_a_cut_record_with_nothing_kept_is_not_no_data(ours: tuple[Rule, ...]) -> None:
    """Guards against a transcript cut down to nothing (one huge line) reading as
    "no data", which the gate leaves silent, instead of as an unverifiable run."""
    record = {"input": "Sum.", "output": "", "trajectory": [], TRANSCRIPT_TRUNCATED_KEY: True}
    report = scan_record(record, ours)
    assert report.status == "flagged" and report.incomplete
    assert scan_record({**record, TRANSCRIPT_TRUNCATED_KEY: False}, ours).status == "no_data"


@pytest.mark.parametrize("mark", [True, "yes", 1, "false", [], {}])
def test_any_mark_but_absent_null_or_false_means_cut(ours: tuple[Rule, ...], mark: Any) -> None:
    """Guards against a hand-edited or foreign mark (``"yes"``, ``1``) reading as complete."""
    report = scan_record(_record(mark=mark), ours)
    assert report.status == "flagged" and report.incomplete


@pytest.mark.parametrize("mark", [False, None])
def test_absent_null_or_false_mark_means_whole(ours: tuple[Rule, ...], mark: Any) -> None:
    report = scan_record(_record(mark=mark), ours)
    assert report.status == "clean" and not report.incomplete
