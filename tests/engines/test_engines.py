"""Serial and dask engines: identical reports in input order, clear errors."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchguard.detection.models import Rule
from benchguard.detection.rules import load_ruleset
from benchguard.engines import (
    EngineUnavailableError,
    scan_files,
    scan_one_record,
    scan_records,
)

from .conftest import make_record


@pytest.fixture(scope="module")
def rules() -> tuple[Rule, ...]:
    return load_ruleset()


def _tree_paths(root: Path) -> list[str]:
    return sorted(str(p) for p in root.rglob("*") if p.is_file())


def test_serial_and_dask_give_identical_file_reports(
    mixed_tree: Path, rules: tuple[Rule, ...]
) -> None:
    """Guards against the engines disagreeing (order, content, bad-file handling)."""
    paths = _tree_paths(mixed_tree)
    serial = scan_files(paths, rules, engine="serial")
    parallel = scan_files(paths, rules, engine="dask", workers=2)
    assert parallel == serial
    assert [f.path for f in parallel] == paths
    flagged = [r for f in serial for r in f.records if r.report.status == "flagged"]
    clean = [r for f in serial for r in f.records if r.report.status == "clean"]
    assert flagged and clean
    [bad] = [f for f in serial if f.error]
    assert bad.path.endswith("notes.txt") and "unknown log format" in (bad.error or "")


def test_serial_and_dask_give_identical_record_reports_in_input_order(
    rules: tuple[Rule, ...],
) -> None:
    records = [
        make_record(i, "cat ~/benchguard/tasks/t/task.yaml" if i % 4 == 1 else "make test")
        for i in range(40)
    ]
    serial = scan_records(records, rules)
    assert [r.status for r in serial][:4] == ["clean", "flagged", "clean", "clean"]
    assert scan_records(records, rules, engine="dask", workers=2) == serial
    assert scan_records(records, rules, engine="dask", scheduler="threads") == serial


def test_dynamic_rules_apply_to_their_own_record_only(rules: tuple[Rule, ...]) -> None:
    leftover = Rule(
        id="inventory/report.md",
        category="prior-run-leftover",
        material="a previous run's file",
        patterns=(r"report\.md",),
        source="report.md",
    )
    # A report one folder down: right under the home, ~/report.md is itself weak
    # evidence since detector v33 (prior-run-leftovers/home-report), and this test is
    # about the dynamic rule's scope, not that rule.
    read = "cat ~/notes/report.md"
    records = [make_record(0, read), make_record(1, read)]
    reports = scan_records(records, rules, dynamic_rules=[[leftover], []], engine="serial")
    assert [r.status for r in reports] == ["flagged", "clean"]
    assert reports[0].dynamic_rules == (leftover,)
    with pytest.raises(ValueError, match="one rule list per record"):
        scan_records(records, rules, dynamic_rules=[[leftover]])


def test_scheduler_address_without_distributed_names_the_package(
    rules: tuple[Rule, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "distributed", None)
    with pytest.raises(EngineUnavailableError, match="'distributed' package"):
        scan_records([make_record(0, "ls")], rules, engine="dask", scheduler="tcp://10.0.0.5:8786")


def test_missing_dask_is_a_clear_error(
    rules: tuple[Rule, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards against a bare ImportError traceback when the optional extra is absent."""
    monkeypatch.setitem(sys.modules, "dask.bag", None)
    with pytest.raises(EngineUnavailableError, match=r"benchguard\[dask\]"):
        scan_records([make_record(0, "ls")], rules, engine="dask")


def test_scheduler_is_refused_for_the_serial_engine(rules: tuple[Rule, ...]) -> None:
    with pytest.raises(ValueError, match="only to --engine dask"):
        scan_records([], rules, engine="serial", scheduler="threads")


def test_a_scan_that_fails_is_flagged_incomplete_never_clean(rules: tuple[Rule, ...]) -> None:
    """Guards against a detector crash on one record reading as a clean verdict."""
    report = scan_one_record(["not", "a", "mapping"], rules)  # type: ignore[arg-type]
    assert report.status == "flagged"
    assert report.incomplete
    assert report.incomplete_reason is not None and "TypeError" in report.incomplete_reason
