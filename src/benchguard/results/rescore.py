"""Rescoring stored records: rescan, apply reviewed dismissals, gate, finalize.

The layers stay in order: the detector gives a fresh verdict from the static ruleset
plus the dynamic rules the stored report recorded (so a leftover-file rule generated
before the run still applies); dismissals then edit that verdict; only then does the
scoring pipeline gate and compose. Dismissals already recorded on a stored report are
carried forward, so a reviewed dismissal survives rescoring even without its file.

Rescanning is its own phase (:func:`rescan_documents`) so that many documents can go
to a scan engine as one batch; :func:`rescore_records` then applies the verdicts. A
record whose stored dynamic rules cannot be read keeps its stored report (never a
silent clean), with the failure reported. A fresh verdict that is incomplete (the scan
hit a bound, or an engine's fail-closed report for a scan that raised) is kept, since
it reads flagged, and is reported too. What is reported never quotes the detector's
note (it may quote a pattern or a scan exception's message, that is answer-key text):
it is the published sentence of :func:`~benchguard.detection.summary.describe_findings`
("transcript cut: ..." for a harness-cut transcript, else "scan incomplete: ..." with
rule ids).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from benchguard.detection.detector import report_from_record
from benchguard.detection.models import SCAN_INCOMPLETE_CATEGORY, CheatingReport, Rule
from benchguard.detection.summary import describe_findings
from benchguard.record.codec import ResultsDocument
from benchguard.record.rules import Ruleset
from benchguard.record.rulesets import (
    RulesetTable,
    reference_of,
    stored_rules,
)
from benchguard.results.dismissals import Dismissal, apply_dismissals, carried_dismissals
from benchguard.results.rows import record_iteration, record_task_folder
from benchguard.scoring.judge import Judge
from benchguard.scoring.pipeline import record_label, score_records

# scan_batch(records, rules, dynamic_rules_per_record) -> one report per record, in
# order: ``benchguard.engines.scan_records`` with an engine chosen.
BatchScan = Callable[
    [Sequence[Mapping[str, Any]], Sequence[Rule], Sequence[Sequence[Rule]]],
    Sequence[CheatingReport],
]


@dataclass(frozen=True)
class RescanFailure:
    """Why a record could not be rescanned; its stored report is kept."""

    message: str


Verdict = CheatingReport | RescanFailure


@dataclass
class RescoreOutcome:
    errors: list[str] = field(default_factory=list)
    # Per entry of the ``dismissals`` argument: did it match a finding here? A caller
    # rescoring several documents with one dismissal file decides "matched nothing"
    # over all of them (:func:`unmatched_messages`).
    dismissals_used: list[bool] = field(default_factory=list)
    # Dismissals recorded on stored reports that no longer match any finding.
    stale_dismissals: list[str] = field(default_factory=list)


def unmatched_messages(dismissals: Sequence[Dismissal], used: Sequence[bool]) -> list[str]:
    """One message per entry of ``dismissals`` that ``used`` says matched no finding."""
    return [
        f"dismissal {i} ({d.describe()}) matched no finding"
        for i, d in enumerate(dismissals)
        if not used[i]
    ]


def rescan_documents(
    documents: Sequence[ResultsDocument], rules: Sequence[Rule], scan_batch: BatchScan
) -> list[dict[int, Verdict]]:
    """Fresh verdicts for every object record of every document, from one batch scan.

    Returns, per document, a verdict by record position (non-object records have none).
    Each record is scanned with ``rules`` plus the dynamic ruleset its stored report
    names in its document's table. Errors of the batch itself (an engine that is not
    installed) propagate: nothing is rescored.
    """
    verdicts: list[dict[int, Verdict]] = [{} for _ in documents]
    positions: list[tuple[int, int]] = []
    batch: list[Mapping[str, Any]] = []
    dynamic: list[Ruleset] = []
    for doc_index, document in enumerate(documents):
        scannable = _scannable_records(document.records, document.rulesets)
        for index, record, record_rules in scannable:
            if isinstance(record_rules, RescanFailure):
                verdicts[doc_index][index] = record_rules
                continue
            positions.append((doc_index, index))
            batch.append(record)
            dynamic.append(record_rules)
    reports = list(scan_batch(batch, rules, dynamic)) if batch else []
    if len(reports) != len(batch):
        raise RuntimeError(f"the scan returned {len(reports)} reports for {len(batch)} records")
    for (doc_index, index), report in zip(positions, reports, strict=True):
        verdicts[doc_index][index] = report
    return verdicts


def _scannable_records(
    records: Sequence[Any], rulesets: RulesetTable
) -> Iterator[tuple[int, dict[str, Any], Ruleset | RescanFailure]]:
    """Each object record by position with its stored dynamic rules, or with the
    failure that says they cannot be read (that record is not rescanned)."""
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            continue
        record_rules: Ruleset | RescanFailure
        try:
            record_rules = stored_rules(record, rulesets)
        except ValueError as exc:
            record_rules = _unreadable_dynamic_rules(exc)
        yield index, record, record_rules


def rescore_records(
    records: list[Any],
    *,
    verdicts: Mapping[int, Verdict],
    dismissals: Sequence[Dismissal] = (),
    run_id: str | None = None,
    judge: Judge | None = None,
    rulesets: RulesetTable | None = None,
) -> RescoreOutcome:
    """Apply the fresh ``verdicts`` (by record position, from :func:`rescan_documents`),
    dismiss, gate and finalize every record in place.

    ``rulesets``: the records' document's table; each report stored names its dynamic
    ruleset there (a kept stored report keeps the name it had). Without one, reports
    are stored with their rules inline."""
    outcome = RescoreOutcome(dismissals_used=[False] * len(dismissals))
    for index, record in enumerate(records):
        if not isinstance(record, dict):
            continue  # score_records reports it
        label = record_label(index, record)
        task, iteration = _identity(record)
        stored = record.get("cheating_report")
        report, rescanned = _apply_verdict(
            record,
            stored,
            verdicts.get(index, RescanFailure("not rescanned")),
            outcome.errors,
            label,
        )
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
            outcome.dismissals_used[i] = outcome.dismissals_used[i] or dismissals[i].rule in matched
        for previous in carried:
            if previous.rule not in matched:
                outcome.stale_dismissals.append(
                    f"{label}: the recorded dismissal of rule {previous.rule!r} by "
                    f"{previous.reviewer} no longer matches any finding"
                )
        record["cheating_report"] = _stored_report(report, rescanned, stored, rulesets)
        record["integrity_checked"] = True
    outcome.errors.extend(score_records(records, judge=judge))
    return outcome


def _apply_verdict(
    record: dict[str, Any], stored: Any, verdict: Verdict, errors: list[str], label: str
) -> tuple[CheatingReport | None, bool]:
    """The fresh report and True; on failure the stored report (parsed, dismissals
    kept) and False, or ``None`` to leave the record's stored report exactly as it was."""
    if isinstance(verdict, CheatingReport):
        if verdict.incomplete:
            errors.append(
                f"{label}: the rescan is incomplete ({_incomplete_summary(verdict)}); "
                "the record reads flagged until a complete rescan"
            )
        return verdict, True
    errors.append(f"{label}: {verdict.message}; kept the stored report")
    kept = report_from_record(record)
    if kept is None and isinstance(stored, dict) and stored:
        errors.append(f"{label}: the stored report is not a usable report; left as it was")
    return kept, False


def _stored_report(
    report: CheatingReport, rescanned: bool, stored: Any, rulesets: RulesetTable | None
) -> dict[str, Any]:
    """The report as the record stores it. A kept stored report names the ruleset it
    named before (its rules may not have been readable: never dropped for that)."""
    if rulesets is None:
        plain: dict[str, Any] = report.model_dump(mode="json")
        return plain
    kept_ref = None if rescanned else reference_of({"cheating_report": stored})
    return rulesets.report_json(report, kept_ref)


def _incomplete_summary(report: CheatingReport) -> str:
    """The publishable account of an incomplete scan, never the detector's note.

    ``incomplete_reason`` may quote a pattern, and an inventory fingerprint is a line
    of a leftover file (possibly an answer key): it stays in the report. This is the
    published sentence: "transcript cut: ..." for a harness-cut transcript, else
    "scan incomplete: ..." plus the ids of rules the note names that exist
    independently of it.
    """
    for verdict in describe_findings(report):
        if verdict["name"] == SCAN_INCOMPLETE_CATEGORY:
            return verdict["reason"]
    return "scan incomplete"


def _unreadable_dynamic_rules(exc: ValueError) -> RescanFailure:
    # Our own message from record.rulesets.stored_rules: it names the rule's position and
    # pydantic's message, never a pattern.
    return RescanFailure(f"rescan failed ({exc})")


def _identity(record: dict[str, Any]) -> tuple[str, int]:
    return record_task_folder(record), record_iteration(record)
