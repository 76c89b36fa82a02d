"""Rescoring never prints or persists the detector's note outside the report itself.

An incomplete scan's ``incomplete_reason`` (which for a scan that raised quotes the
exception's message) may quote a pattern; an inventory fingerprint pattern is a line of a leftover file, which
can be an answer key.
"""

from __future__ import annotations

import json
from typing import Any

from benchguard.detection.detector import DETECTOR_VERSION
from benchguard.detection.models import CheatingReport, Rule
from benchguard.detection.rules import load_ruleset
from benchguard.engines.work import scan_one_record
from benchguard.results.rescore import rescore_records

RULES = load_ruleset("benchguard")
SECRET = "expected_output: the answer is 42 and only 42"
FINGERPRINT = Rule(
    id="inventory/fingerprint/report.md",
    category="prior-results",
    material="a leftover file's content",
    evidence="content",
    description="a line of a leftover file",
    patterns=(SECRET,),
    fields=("result", "output"),
)


def _record() -> dict[str, Any]:
    return {
        "folder": "opa",
        "iteration": 0,
        "input": "fix the policy",
        "output": "done",
        "trajectory": [
            {"name": "exec", "args": {"command": "ls"}, "result": "", "status": "completed"}
        ],
        "cheating_report": {},
    }


def _outside_the_report(record: dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in record.items() if k != "cheating_report"})


def test_incomplete_rescan_reports_rule_ids_not_the_note() -> None:
    """Guards against an answer-key line quoted by the note reaching stderr or the row."""
    incomplete = CheatingReport(
        detector_version=DETECTOR_VERSION,
        status="flagged",
        categories=("scan-incomplete",),
        dynamic_rules=(FINGERPRINT,),
        incomplete=True,
        incomplete_reason=(
            f"rule {FINGERPRINT.id!r} pattern {SECRET!r} ran out of the record's time budget"
        ),
    )
    records: list[Any] = [_record()]
    outcome = rescore_records(records, verdicts={0: incomplete})
    [message] = [e for e in outcome.errors if "rescan is incomplete" in e]
    assert SECRET not in message and "answer is 42" not in message
    assert FINGERPRINT.id in message
    assert SECRET not in _outside_the_report(records[0])
    assert records[0]["cheating_report"]["status"] == "flagged"


def test_a_scan_that_raised_is_reported_without_the_exception_message() -> None:
    """Guards against an exception message that quotes a pattern being printed: a scan
    that raises inside the engine comes back as the engine's fail-closed report, whose
    note quotes the message; rescoring reports the failure without it."""

    class _Exploding(dict[str, Any]):
        """A record whose every read raises, quoting a pattern."""

        def get(self, *_args: Any, **_kwargs: Any) -> Any:
            raise RuntimeError(f"pattern {SECRET!r} broke")

    failed = scan_one_record(_Exploding(), RULES)  # the engines' per-record scan
    assert SECRET in (failed.incomplete_reason or "")
    records: list[Any] = [_record()]
    outcome = rescore_records(records, verdicts={0: failed})
    assert any("rescan is incomplete" in e for e in outcome.errors)
    assert not any(SECRET in e for e in outcome.errors)
    assert SECRET not in _outside_the_report(records[0])
    assert records[0]["cheating_report"]["status"] == "flagged"
