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
from typing import Any

from benchguard.detection.context import SCAN_CONTEXT_KEY
from benchguard.detection.knowledge import HarnessKnowledge, run_context, run_rules
from benchguard.detection.models import Rule
from benchguard.harness import integrity
from benchguard.harness.job import BatchSettings
from benchguard.records import RunRecord
from benchguard.scoring.judge import NullJudge
from benchguard.scoring.keys import OUTCOME_SCORE
from benchguard.scoring.pipeline import no_credit_entry, score_record
from benchguard.scoring.verification import verification_scores

log = logging.getLogger(__name__)


def mark_failed(record: RunRecord, stage: str, exc: BaseException) -> RunRecord:
    """``record`` marked errored by a failure while finishing it (its reason kept); an
    outcome it was already given becomes the no-credit zero."""
    log.error("run %s: %s failed: %s: %s", record.label, stage, type(exc).__name__, exc)
    reason = f"harness error while {stage}: {type(exc).__name__}: {exc}"
    update: dict[str, Any] = {
        "status": "error",
        "error": reason,
        "errors": [reason, *record.errors],
    }
    if OUTCOME_SCORE in record.scores:
        scores = dict(record.scores)
        entry = no_credit_entry({"status": "error", "error": reason}, scores)
        if entry is not None:
            scores[OUTCOME_SCORE] = entry
        update["scores"] = scores
    return record.model_copy(update=update)


def finish_run(
    record: RunRecord,
    *,
    static_rules: Sequence[Rule],
    rules: Sequence[Rule],
    settings: BatchSettings,
    knowledge: HarnessKnowledge | None = None,
    answers: Sequence[str] = (),
    own_material: Sequence[str] = (),
) -> RunRecord:
    """Scan and score one run; a failure in a step marks the run errored, never raises.

    Detection is the per-record half of ``integrity.annotate``, with the run's inventory
    ``rules`` and the batch's material fingerprints (less what the prompt and the
    task's ``answers`` contain: ``detection.knowledge.run_rules``); the record's stored
    scan context is read by the detector itself. Scoring is the whole pipeline
    (verification scores, judge, gate, outcome) on this record alone.
    """
    record = record.model_copy(
        update={"home_snapshot": sorted({r.source for r in rules if r.source})}
    )
    # Detection and scoring still read and edit the record's JSON mapping (``data``);
    # each step returns the record and its mapping, kept in step.
    data = record.to_json()
    record, data = _with_known_paths(record, data, knowledge, rules)
    if settings.integrity.detect:
        record, data = _scanned(record, data, static_rules, knowledge, rules, answers, own_material)
    return _scored(record, data, settings)


def _with_known_paths(
    record: RunRecord,
    data: dict[str, Any],
    knowledge: HarnessKnowledge | None,
    rules: Sequence[Rule],
) -> tuple[RunRecord, dict[str, Any]]:
    """The record's scan context with the known paths its commands name; on a failure
    the seeded context (home, workdir) is kept."""
    if knowledge is None or record.scan_context is None:
        return record, data
    try:
        context = run_context(
            knowledge, workdir=record.scan_context.workdir, record=data, inventory=rules
        )
        record = record.model_copy(update={"scan_context": context})
        data[SCAN_CONTEXT_KEY] = context.model_dump(mode="json")
    except Exception as exc:
        log.warning("run %s: known paths not stored (%s)", record.label, exc)
    return record, data


def _scanned(
    record: RunRecord,
    data: dict[str, Any],
    static_rules: Sequence[Rule],
    knowledge: HarnessKnowledge | None,
    rules: Sequence[Rule],
    answers: Sequence[str],
    own_material: Sequence[str],
) -> tuple[RunRecord, dict[str, Any]]:
    """The report stored on ``data``; a failed scan errors the run and leaves no report."""
    try:
        dynamic = run_rules(
            knowledge, rules, prompt=record.input, answers=answers, own=own_material
        )
        # The record's own table: its report names its dynamic ruleset by digest, and
        # the journal writes the ruleset beside the run from there.
        problems = integrity.annotate(
            [data], static_rules, [dynamic], authorized=True, rulesets=record.rulesets
        )
        if problems:
            raise RuntimeError("; ".join(problems))
    except Exception as exc:
        record = mark_failed(record, "scanning", exc)
        data = record.to_json()
        data["cheating_report"], data["integrity_checked"] = {}, False
    return record, data


def _scored(record: RunRecord, data: dict[str, Any], settings: BatchSettings) -> RunRecord:
    """The record with its scores (verification, judge, gate, outcome) and what scoring
    decided; a failure errors the run."""
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
