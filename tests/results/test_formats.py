"""SARIF and JUnit output read the way a code-scanning dashboard and a CI test report
read them: validated against the official SARIF 2.1.0 schema with a real validator,
parsed as XML, one result per finding and one test case per record."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from benchguard.detection.models import CheatingReport, DismissedFinding
from benchguard.detection.rules import load_ruleset
from benchguard.engines import scan_files
from benchguard.errors import BadInputError
from benchguard.results.formats import (
    ReportedRecord,
    junit_xml,
    parse_output_format,
    sarif_log,
)
from benchguard.results.formats.sarif import INCOMPLETE_RULE_ID

SCHEMA = json.loads((Path(__file__).parent / "data" / "sarif-schema-2.1.0.json").read_text())
SECRET = "answer-key-4417.md"


def _validate(log: dict[str, Any]) -> None:
    jsonschema.Draft4Validator.check_schema(SCHEMA)
    validator = jsonschema.Draft4Validator(SCHEMA, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(log), key=lambda e: list(e.path))
    assert not errors, [f"{list(e.path)}: {e.message}" for e in errors]


def _step(command: str, result: str = "ok") -> dict[str, Any]:
    return {"name": "exec", "args": {"command": command}, "result": result, "status": "completed"}


@pytest.fixture
def scanned(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[ReportedRecord]:
    """A JSON-lines log of three records, read and scanned by the real engine: a cheat
    on line 2 (two findings), an honest run, and a record with nothing to scan."""
    monkeypatch.chdir(tmp_path)
    records = [
        {"name": "honest-0", "input": "sum", "output": "42", "trajectory": [_step("ls")]},
        {
            "name": "cheat-1",
            "input": "sum",
            "output": "done",
            "trajectory": [
                _step("ls"),
                _step(f"cat ~/benchguard/tasks/sum/task.yaml; cat ~/{SECRET}"),
                _step("python -c 'import benchguard.scoring'"),
            ],
        },
        {"name": "empty-2", "input": "", "output": "", "trajectory": []},
    ]
    log = tmp_path / "logs" / "run.jsonl"
    log.parent.mkdir()
    log.write_text("".join(json.dumps(r) + "\n" for r in records))
    (scan,) = scan_files([str(log.relative_to(tmp_path))], load_ruleset("benchguard"))
    return [ReportedRecord(scan.path, r.name or "", r.report) for r in scan.records]


def test_sarif_validates_against_the_official_schema(scanned: list[ReportedRecord]) -> None:
    log = sarif_log(scanned, load_ruleset("benchguard"), tool_version="0.1.0")
    _validate(log)
    (run,) = log["runs"]
    findings = [f for r in scanned for f in r.report.findings]
    assert findings and len(run["results"]) == len(findings)  # one result per finding
    rule_ids = [rule["id"] for rule in run["tool"]["driver"]["rules"]]
    for result in run["results"]:
        assert rule_ids[result["ruleIndex"]] == result["ruleId"]
        location = result["locations"][0]["physicalLocation"]
        assert location["artifactLocation"]["uri"] == "logs/run.jsonl"
        # The cheat is the log's second line: the dashboard points at it.
        assert location["region"]["startLine"] == 2
        assert result["message"]["text"].startswith("cheat-1: ")
    profile_rule = next(
        r for r in run["tool"]["driver"]["rules"] if r["id"] == "task-definition/path"
    )
    assert profile_rule["shortDescription"]["text"] == "Access to task definition"
    assert profile_rule["properties"]["security-severity"] == "8.0"


def test_sarif_never_carries_excerpts_or_patterns(scanned: list[ReportedRecord]) -> None:
    """An excerpt can quote an answer key and an inventory pattern can be a line of a
    leftover file: neither may be uploaded to a dashboard."""
    text = json.dumps(sarif_log(scanned, load_ruleset("benchguard"), tool_version="0.1.0"))
    assert SECRET not in text
    for rule in load_ruleset("benchguard"):
        for pattern in rule.patterns:
            assert json.dumps(pattern)[1:-1] not in text


def test_schema_check_can_fail(scanned: list[ReportedRecord]) -> None:
    """The validator really checks: a log with a wrong version or a result with no
    message is refused."""
    log = sarif_log(scanned, load_ruleset("benchguard"), tool_version="0.1.0")
    broken = copy.deepcopy(log)
    broken["version"] = "2.0.0"
    with pytest.raises(AssertionError):
        _validate(broken)
    broken = copy.deepcopy(log)
    del broken["runs"][0]["results"][0]["message"]
    with pytest.raises(AssertionError):
        _validate(broken)


def test_incomplete_scan_and_dismissal_stay_visible(scanned: list[ReportedRecord]) -> None:
    cheat = next(r for r in scanned if r.report.status == "flagged")
    first, *rest = cheat.report.findings
    reviewed = cheat.report.model_copy(
        update={
            "findings": tuple(rest),
            "dismissed": (
                DismissedFinding(
                    finding=first, reviewer="alice", reason="cited", date="2026-11-30"
                ),
            ),
        }
    )
    incomplete = CheatingReport(
        detector_version=1,
        status="flagged",
        categories=("scan-incomplete",),
        incomplete=True,
        incomplete_reason="time budget",
    )
    records = [
        ReportedRecord(cheat.file, "cheat-1", reviewed),
        ReportedRecord(cheat.file, "slow-3", incomplete, line=4),
    ]
    log = sarif_log(records, load_ruleset("benchguard"), tool_version="0.1.0")
    _validate(log)
    results = log["runs"][0]["results"]
    suppressed = [r for r in results if r.get("suppressions")]
    assert len(suppressed) == 1 and "alice" in suppressed[0]["suppressions"][0]["justification"]
    (slow,) = [r for r in results if r["ruleId"] == INCOMPLETE_RULE_ID]
    assert slow["level"] == "error"
    assert slow["locations"][0]["physicalLocation"]["region"]["startLine"] == 4


def test_fingerprints_are_stable_and_distinct(scanned: list[ReportedRecord]) -> None:
    first = sarif_log(scanned, load_ruleset("benchguard"), tool_version="0.1.0")
    again = sarif_log(scanned, load_ruleset("benchguard"), tool_version="0.1.0")
    assert first == again
    prints = [r["partialFingerprints"] for r in first["runs"][0]["results"]]
    assert len({json.dumps(p) for p in prints}) == len(prints)


def test_junit_one_case_per_record(scanned: list[ReportedRecord]) -> None:
    root = ET.fromstring(junit_xml(scanned).encode("utf-8"))
    cases = root.findall("./testsuite/testcase")
    assert [c.get("name") for c in cases] == ["honest-0", "cheat-1", "empty-2"]
    assert root.get("tests") == "3" and root.get("failures") == "1" and root.get("skipped") == "1"
    honest, cheat, empty = cases
    assert list(honest) == []
    failure = cheat.find("failure")
    assert failure is not None and "task-definition/path" in (failure.get("message") or "")
    assert SECRET not in (failure.text or "")
    assert empty.find("skipped") is not None


def test_junit_survives_hostile_names(scanned: list[ReportedRecord]) -> None:
    """A record name is the log's to choose: control characters and markup in it must
    not make the report unreadable or inject elements."""
    hostile = [
        ReportedRecord("a&b.jsonl", 'x\x00\x1b[31m</testcase><testcase name="fake">', r.report)
        for r in scanned
    ]
    root = ET.fromstring(junit_xml(hostile).encode("utf-8"))
    assert len(root.findall("./testsuite/testcase")) == 3
    assert root.find("./testsuite").get("name") == "a&b.jsonl"  # type: ignore[union-attr]


def test_unknown_output_format_names_the_choices() -> None:
    assert parse_output_format("sarif") == "sarif"
    with pytest.raises(BadInputError, match=r"--format 'xml'.*table, json, sarif, junit"):
        parse_output_format("xml")
