"""Rescoring stored records: rescan, apply reviewed dismissals, gate, finalize.

The layers stay in order: the detector gives a fresh verdict from the static ruleset
plus the dynamic rules the stored report recorded (so a leftover-file rule generated
before the run still applies); dismissals then edit that verdict; only then does the
scoring pipeline gate and compose. Dismissals already recorded on a stored report are
carried forward, so a reviewed dismissal survives rescoring even without its file.

A record whose rescan fails keeps its stored report (never a silent clean), with the
failure reported.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError

from benchguard.detection.detector import report_from_record
from benchguard.detection.models import CheatingReport, Rule
from benchguard.results.dismissals import Dismissal, apply_dismissals, carried_dismissals
from benchguard.results.rows import record_iteration, record_task_folder
from benchguard.scoring.judge import Judge
from benchguard.scoring.pipeline import record_label, score_records

# scan(record, rules, *, dynamic_rules=...) -> CheatingReport: the detector's scan_record.
Scan = Callable[..., CheatingReport]


@dataclass
class RescoreOutcome:
    errors: list[str] = field(default_factory=list)
    unmatched_dismissals: list[str] = field(default_factory=list)
    dismissed_findings: int = 0


def rescore_records(
    records: list[Any],
    *,
    rules: Sequence[Rule],
    scan: Scan,
    dismissals: Sequence[Dismissal] = (),
    run_id: str | None = None,
    judge: Judge | None = None,
) -> RescoreOutcome:
    """Rescan, dismiss, gate and finalize every record in place."""
    outcome = RescoreOutcome()
    used = [False] * len(dismissals)
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            continue  # score_records reports it
        label = record_label(index, record)
        task, iteration = _identity(record)
        stored = record.get("cheating_report")
        report, rescanned = _fresh_verdict(record, stored, rules, scan, outcome.errors, label)
        if report is None:
            continue
        mine = [
            i
            for i, d in enumerate(dismissals)
            if d.applies_to(run_id=run_id, task=task, iteration=iteration)
        ]
        # A kept stored report still holds its dismissed findings; only a fresh scan
        # needs the audit trail re-applied.
        carried = (
            carried_dismissals(stored, run_id=run_id, task=task, iteration=iteration)
            if rescanned
            else []
        )
        report, matched = apply_dismissals(report, [*(dismissals[i] for i in mine), *carried])
        for i in mine:
            used[i] = used[i] or dismissals[i].rule in matched
        for previous in carried:
            if previous.rule not in matched:
                outcome.unmatched_dismissals.append(
                    f"{label}: the recorded dismissal of rule {previous.rule!r} by "
                    f"{previous.reviewer} no longer matches any finding"
                )
        outcome.dismissed_findings += len(report.dismissed)
        record["cheating_report"] = report.model_dump(mode="json")
        record["integrity_checked"] = True
    outcome.unmatched_dismissals.extend(
        f"dismissal {i} ({d.describe()}) matched no finding"
        for i, d in enumerate(dismissals)
        if not used[i]
    )
    outcome.errors.extend(score_records(records, judge=judge))
    return outcome


def _fresh_verdict(
    record: dict[str, Any],
    stored: Any,
    rules: Sequence[Rule],
    scan: Scan,
    errors: list[str],
    label: str,
) -> tuple[CheatingReport | None, bool]:
    """The rescanned report and True; on failure the stored report (parsed, dismissals
    kept) and False, or ``None`` to leave the record's stored report exactly as it was."""
    try:
        dynamic = _stored_dynamic_rules(stored)
        return scan(record, rules, dynamic_rules=dynamic), True
    except Exception as exc:
        errors.append(
            f"{label}: rescan failed ({type(exc).__name__}: {exc}); kept the stored report"
        )
    kept = report_from_record(record)
    if kept is None and isinstance(stored, dict) and stored:
        errors.append(f"{label}: the stored report is not a usable report; left as it was")
    return kept, False


def _stored_dynamic_rules(stored: Any) -> tuple[Rule, ...]:
    raw = stored.get("dynamic_rules") if isinstance(stored, dict) else None
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise ValueError("the stored report's dynamic_rules is not a list")
    rules = []
    for index, item in enumerate(raw):
        try:
            rules.append(Rule.model_validate(item))
        except ValidationError as exc:
            raise ValueError(
                f"stored dynamic rule {index} is invalid: {exc.errors()[0]['msg']}"
            ) from None
    return tuple(rules)


def _identity(record: dict[str, Any]) -> tuple[str, int]:
    return record_task_folder(record), record_iteration(record)
