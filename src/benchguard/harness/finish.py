"""Finishing a run: scan its record, then score it, on its own.

:func:`finish_run` takes a captured record (:mod:`benchguard.harness.job`), scans it
with the batch's static rules plus the run's own inventory rules and material
fingerprints, then scores it (verification, judge, gate, outcome). A failure in a step
marks the run ``error`` with its reason (:func:`mark_failed`) and never raises, so one bad
run never sinks the batch.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence

from benchguard.detection.detector import Detector, scan_view
from benchguard.detection.knowledge import HarnessKnowledge, run_context, run_rules
from benchguard.detection.models import Rule
from benchguard.harness.job import BatchSettings
from benchguard.record.rules import ScanRulesets, as_ruleset
from benchguard.records import RunRecord
from benchguard.scoring import zeroes
from benchguard.scoring.judge import NullJudge
from benchguard.scoring.pipeline import score_record
from benchguard.scoring.verification import verification_scores

log = logging.getLogger(__name__)


def mark_failed(record: RunRecord, stage: str, exc: BaseException) -> RunRecord:
    """``record`` marked errored by a failure while finishing it (its reason kept); an
    outcome it was already given becomes the no-credit zero (``scoring.zeroes``)."""
    log.error("run %s: %s failed: %s: %s", record.label, stage, type(exc).__name__, exc)
    return zeroes.errored(record, f"harness error while {stage}: {type(exc).__name__}: {exc}")


def finish_run(
    record: RunRecord,
    *,
    static_rules: Sequence[Rule],
    rules: Sequence[Rule],
    settings: BatchSettings,
    knowledge: HarnessKnowledge | None = None,
    answers: Sequence[str] = (),
    own_material: Sequence[str] = (),
    detector: Detector | None = None,
) -> RunRecord:
    """Scan and score one run; a failure in a step marks the run errored, never raises.

    Detection scans the typed record with the batch's static rules, then the run's
    inventory ``rules`` and the batch's material fingerprints (less what the prompt
    and the task's ``answers`` contain: ``detection.knowledge.run_rules``), on
    ``detector`` (the batch's; a fresh one when None); the record's stored scan context
    is read by the detector itself. Scoring is the whole pipeline (verification scores,
    judge, gate, outcome) on this record alone.
    """
    record = record.model_copy(
        update={"home_snapshot": sorted({r.source for r in rules if r.source})}
    )
    record = _with_known_paths(record, knowledge, rules)
    if settings.integrity.detect:
        record = _scanned(
            record,
            static_rules,
            knowledge,
            rules,
            answers,
            own_material,
            detector if detector is not None else Detector(),
        )
    return _scored(record, settings)


def _with_known_paths(
    record: RunRecord, knowledge: HarnessKnowledge | None, rules: Sequence[Rule]
) -> RunRecord:
    """The record's scan context with the known paths its commands name; on a failure
    the seeded context (home, workdir) is kept."""
    if knowledge is None or record.scan_context is None:
        return record
    try:
        context = run_context(
            knowledge,
            workdir=record.scan_context.workdir,
            record=scan_view(record),
            inventory=rules,
        )
        return record.model_copy(update={"scan_context": context})
    except Exception as exc:
        log.warning("run %s: known paths not stored (%s)", record.label, exc)
    return record


def _scanned(
    record: RunRecord,
    static_rules: Sequence[Rule],
    knowledge: HarnessKnowledge | None,
    rules: Sequence[Rule],
    answers: Sequence[str],
    own_material: Sequence[str],
    detector: Detector,
) -> RunRecord:
    """The record with its report; a failed scan errors the run and leaves no report."""
    try:
        dynamic = as_ruleset(
            run_rules(knowledge, rules, prompt=record.input, answers=answers, own=own_material)
        )
        report = detector.scan(record, ScanRulesets(as_ruleset(static_rules), dynamic))
        # The record's own table: its report names its dynamic ruleset by digest, and
        # the journal writes the ruleset beside the run from there.
        stored = record.rulesets.report_json(report, dynamic)
    except Exception as exc:
        log.warning("detection: run %s: %s: %s", record.label, type(exc).__name__, exc)
        failed = mark_failed(record, "scanning", exc)
        return failed.model_copy(update={"cheating_report": {}, "integrity_checked": False})
    return record.model_copy(update={"cheating_report": stored, "integrity_checked": bool(stored)})


def _scored(record: RunRecord, settings: BatchSettings) -> RunRecord:
    """The record with its scores (verification, judge, gate, outcome) and what scoring
    decided; a failure errors the run."""
    # Scoring still reads and edits the record's JSON mapping in place.
    data = record.to_json()
    try:
        scores = data["scores"]
        scores.update(verification_scores(data["verification_report"]))
        score_record(data, judge=settings.judge or NullJudge())
    except Exception as exc:
        return mark_failed(record, "scoring", exc)
    return record.model_copy(
        update={
            "cheating_report": data["cheating_report"],
            "integrity_checked": data["integrity_checked"],
            "scores": data["scores"],
            "scoring_errors": data.get("scoring_errors", []),
            "status": data["status"],
            "error": data["error"],
            "errors": data["errors"],
        }
    )
