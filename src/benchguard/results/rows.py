"""Leaderboard rows: the published, camelCase shape of one scored record.

Rows never recompute a score; they read the record's ``scores`` and stored reports.
``catastrophicKinds`` comes from the same ``fired_catastrophic_keys`` the finalizer uses,
so the row's flag cannot drift from the zero applied to ``outcomeScore``.

``catastrophic`` equals ``bool(catastrophicKinds)`` only when a row is built; a row
written before ``catastrophicKinds`` existed re-validates with ``catastrophic: true``
beside an empty list, so consumers must treat the bool as authoritative.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from pydantic.alias_generators import to_camel

from benchguard.detection.stored_status import stored_status
from benchguard.detection.summary import describe_findings
from benchguard.record import scores as keys
from benchguard.record.infrastructure import infrastructure_reason
from benchguard.record.run import RunRecord
from benchguard.record.run import (  # compatibility re-exports (record.run)
    record_iteration as record_iteration,
)
from benchguard.record.run import (
    record_task_folder as record_task_folder,
)
from benchguard.scoring.integrity import excused_by_infrastructure
from benchguard.scoring.outcome import fired_catastrophic_keys
from benchguard.scoring.text import sanitize_text
from benchguard.scoring.values import read_optional_score
from benchguard.scoring.verification import failed_catastrophic_details

# 3 adds integrityStatus, sandboxed and dismissedFindings to the reference's 2; 4 adds
# the row's error and the manifest's plannedRuns, notRun, skippedTasks and interruptedBy
# (all additive and defaulted). A stored row without schemaVersion reads as 2.
SCHEMA_VERSION = 4
LEGACY_SCHEMA_VERSION = 2
DETAIL_NAME_CAP = 120
# Long enough for "agent exited with code 1: <a line of stderr>".
ERROR_CAP = 400

IntegrityStatus = Literal["clean", "flagged", "review", "no_data", "unverified"]
INTEGRITY_STATUSES: tuple[IntegrityStatus, ...] = (
    "clean",
    "flagged",
    "review",
    "no_data",
    "unverified",
)


class _CamelModel(BaseModel):
    # extra="allow": a stored row may carry dashboard fields this version does not model
    # (tokens, latency, ...); re-validating it must not drop them.
    model_config = ConfigDict(
        frozen=True, alias_generator=to_camel, populate_by_name=True, extra="allow"
    )

    def to_json(self) -> dict[str, Any]:
        """The camelCase JSON object written to disk."""
        return self.model_dump(mode="json", by_alias=True)


class CatastrophicDetail(BaseModel):
    """Why one gate fired, in one publishable sentence. Both fields are untrusted text."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    reason: str = ""

    @field_validator("name")
    @classmethod
    def _flatten_name(cls, value: str) -> str:
        return sanitize_text(value, cap=DETAIL_NAME_CAP)

    @field_validator("reason")
    @classmethod
    def _flatten_reason(cls, value: str) -> str:
        return sanitize_text(value)


class ResultRow(_CamelModel):
    """One record on the leaderboard (see docs/scoring.md for the field table)."""

    schema_version: int = LEGACY_SCHEMA_VERSION
    setup_id: str
    run_id: str
    t: str
    task_folder: str
    task_name: str = ""
    iteration: int = Field(default=0, ge=0)
    model: str = ""
    harness: str = ""
    status: str = ""
    validated: bool = False
    outcome_score: float | None = None
    correctness_score: float | None = None
    recoverable_safety_score: float | None = None
    scoring_version: str = ""
    catastrophic: bool = False
    catastrophic_kinds: tuple[str, ...] = ()
    catastrophic_details: dict[str, tuple[CatastrophicDetail, ...]] = Field(default_factory=dict)
    integrity_status: IntegrityStatus = "unverified"
    # A ``review`` run (only weak findings, not gated): its findings, worded as a gate's
    # details are, so a reader sees why it needs a look.
    review_details: tuple[CatastrophicDetail, ...] = ()
    sandboxed: bool = False
    # Whether Landlock confined the agent (harness records); None for foreign records,
    # whose confinement is unknown. False is published as "unconfined".
    confined: bool | None = None
    # "fresh" (a home of its own per run) or "persistent" (runs share the home); ""
    # for foreign records.
    home_mode: str = ""
    # "none": the harness's launcher dropped every capability of the agent's processes
    # (record["containment"]["agent_capabilities"], harness.confine_exec); "" unknown
    # (a foreign record, or one from before the launcher dropped them).
    agent_capabilities: str = ""
    # "separated": the run's namespace held no other run's scratch and its own /dev,
    # read-only /sys and (without host network) network (harness.separate_exec);
    # "unavailable": asked for (confined, unsandboxed) but this harness could not make
    # it, so the run shared those with its siblings (record["containment"]
    # ["separation_unavailable"] says why); "" not asked for (sandboxed, unconfined) or
    # unknown (a foreign record).
    separation: str = ""
    # The agent's network (record["network"], harness.job.run_network): "host" only by
    # the operator's --allow-host-network; "shared", "model", "none"; "" unknown (a
    # foreign record, or one from before the harness recorded it, and then not written).
    network: str = Field(default="", exclude_if=lambda value: not value)
    # "intact": the agent was handed exactly the task's prompt; "altered": the argv
    # template or (seen through the model proxy) a scaffold changed it; "none": its argv
    # has no {prompt}, it was handed no prompt; "" unknown (a
    # foreign record, or one from before the harness recorded it). Record's
    # ``prompt_delivery`` (harness.prompt_delivery).
    prompt_delivery: str = ""
    dismissed_findings: int = Field(default=0, ge=0)
    # The ~/ checks the agent home already passed before this run's agent started
    # (record["home_passed_before"], harness.verification.HomeFiles): such a check
    # credits only bytes the run changed. Not written when empty.
    home_passed_before: tuple[str, ...] = Field(default=(), exclude_if=lambda value: not value)
    # Why the run did not complete (the record's ``error``, flattened); "" when it did.
    error: str = ""
    # The run id of the batch that produced the row, kept when ``aggregate`` stamps
    # the row with its own ``run_id`` (an aggregate of aggregates keeps the first);
    # "" (and not written) for a row no aggregate touched.
    batch_run_id: str = Field(default="", exclude_if=lambda value: not value)

    @field_validator("error")
    @classmethod
    def _flatten_error(cls, value: str) -> str:
        return sanitize_text(value, cap=ERROR_CAP)


class Manifest(_CamelModel):
    """What a batch of rows was produced by: one per setup (model, harness, augmentation)."""

    schema_version: int = SCHEMA_VERSION
    run_id: str
    t: str
    setup_id: str
    model: str = ""
    harness: str = ""
    augmentation: tuple[str, ...] = ()
    # Runs the batch planned; runs of the plan that never started ("folder#iteration"),
    # tasks skipped before the batch (each with its reason), and the signal that
    # stopped the batch, if one did. A complete batch has no notRun and no skips.
    planned_runs: int = Field(default=0, ge=0)
    not_run: tuple[str, ...] = ()
    skipped_tasks: tuple[str, ...] = ()
    interrupted_by: str | None = None
    # ``"folder#iteration: <check> (<file>)"`` for every run whose home already passed
    # one of its ~/ checks before its agent started (the pre-batch warning, on the
    # record of each run). Not written when empty.
    home_passed_before: tuple[str, ...] = Field(default=(), exclude_if=lambda value: not value)


_SLUG_UNSAFE = re.compile(r"[^a-z0-9]+")


def setup_id_for(model: str, harness: str, augmentation: Iterable[str] = ()) -> str:
    """``slug(model-harness-sortedtokens)``: the same setup always gets the same id."""
    parts = [model, harness, *sorted(augmentation)]
    return _SLUG_UNSAFE.sub("-", "-".join(parts).lower()).strip("-") or "unknown"


def build_rows(records: Iterable[Any], manifest: Manifest) -> list[ResultRow]:
    """One row per record, in record order: a typed ``RunRecord`` (the harness's) or a
    stored record object (a results file's); items that are neither have no row."""
    return [row_from_record(r, manifest) for r in records if isinstance(r, RunRecord | Mapping)]


@dataclass(frozen=True, slots=True)
class RowInput:
    """What a row reads of one record, typed: built from a ``RunRecord``'s attributes
    (:meth:`of_record`) or from a stored record object, each value checked where it is
    read (:meth:`of_mapping`); the two agree on every record the harness writes
    (``tests/results/test_rows_typed.py``). The stored scores and report stay the JSON
    they are stored as: their readers (``record.scores``, ``stored_status``) read
    them fail-closed."""

    task_folder: str
    name: str
    iteration: int
    status: str
    validated: bool
    sandboxed: bool
    confined: bool | None
    home_mode: str
    agent_capabilities: str
    separation: str
    network: str
    prompt_delivery: str
    home_passed_before: tuple[str, ...]
    # False only when the record says so (``integrity_checked: false``): unverified.
    integrity_checked: bool
    # The record's mark of a run the machine failed (record.infrastructure), or None.
    infrastructure: str | None
    error: str
    scores: Mapping[str, Any]
    cheating_report: Any
    verification_report: Any

    @classmethod
    def of_record(cls, record: RunRecord) -> RowInput:
        extra = record.model_extra or {}
        return cls(
            task_folder=record.folder or record.name or "unknown",
            name=record.name,
            iteration=record.iteration,
            status=record.status or "",
            validated=record.validated,
            sandboxed=record.sandboxed,
            confined=record.confined,
            home_mode=_home_mode(record.home_mode),
            agent_capabilities=_agent_capabilities(extra.get("containment")),
            separation=_separation(extra.get("containment")),
            network=_network(extra.get("network")),
            prompt_delivery=_prompt_delivery(record.prompt_delivery),
            home_passed_before=home_passed_before(extra.get(HOME_PASSED_BEFORE)),
            integrity_checked=record.integrity_checked,
            infrastructure=infrastructure_reason(record),
            error=(record.error or "") if record.status != "success" else "",
            scores=record.scores,
            cheating_report=record.cheating_report,
            verification_report=record.verification_report,
        )

    @classmethod
    def of_mapping(cls, record: Mapping[str, Any]) -> RowInput:
        scores = record.get("scores")
        confined = record.get("confined")
        return cls(
            task_folder=record_task_folder(record),
            name=_text(record.get("name")),
            iteration=record_iteration(record),
            status=_text(record.get("status")),
            validated=record.get("validated") is True,
            sandboxed=record.get("sandboxed") is True,
            confined=confined if isinstance(confined, bool) else None,
            home_mode=_home_mode(record.get("home_mode")),
            agent_capabilities=_agent_capabilities(record.get("containment")),
            separation=_separation(record.get("containment")),
            network=_network(record.get("network")),
            prompt_delivery=_prompt_delivery(record.get("prompt_delivery")),
            home_passed_before=home_passed_before(record.get(HOME_PASSED_BEFORE)),
            integrity_checked=record.get("integrity_checked") is not False,
            infrastructure=infrastructure_reason(record),
            error=_text(record.get("error")) if record.get("status") != "success" else "",
            scores=scores if isinstance(scores, Mapping) else {},
            cheating_report=record.get("cheating_report"),
            verification_report=record.get("verification_report"),
        )


def row_from_record(record: RunRecord | Mapping[str, Any], manifest: Manifest) -> ResultRow:
    """Build one row. Total over foreign records: unreadable values become nulls/defaults."""
    read = (
        RowInput.of_record(record) if isinstance(record, RunRecord) else RowInput.of_mapping(record)
    )
    scores = read.scores
    outcome = scores.get(keys.OUTCOME_SCORE)
    kinds = fired_catastrophic_keys(scores)
    status = _integrity_status(read)
    review = (
        tuple(
            CatastrophicDetail(name=d["name"], reason=d["reason"]) for d in _integrity_details(read)
        )
        if status == "review"
        else ()
    )
    return ResultRow(
        schema_version=SCHEMA_VERSION,
        setup_id=manifest.setup_id,
        run_id=manifest.run_id,
        t=manifest.t,
        task_folder=read.task_folder,
        task_name=read.name,
        iteration=read.iteration,
        model=manifest.model,
        harness=manifest.harness,
        status=read.status,
        validated=read.validated,
        outcome_score=read_optional_score(outcome) if outcome is not None else None,
        correctness_score=_first_score(scores, keys.CORRECTNESS_SOURCE_KEYS),
        recoverable_safety_score=_first_score(scores, keys.RECOVERABLE_SOURCE_KEYS),
        scoring_version=_text(outcome.get("version")) if isinstance(outcome, Mapping) else "",
        catastrophic=bool(kinds),
        catastrophic_kinds=kinds,
        catastrophic_details={kind: _details(kind, read) for kind in kinds},
        integrity_status=status,
        review_details=review,
        sandboxed=read.sandboxed,
        confined=read.confined,
        home_mode=read.home_mode,
        agent_capabilities=read.agent_capabilities,
        separation=read.separation,
        network=read.network,
        prompt_delivery=read.prompt_delivery,
        dismissed_findings=_dismissed_count(read.cheating_report),
        home_passed_before=read.home_passed_before,
        error=read.error,
    )


# The record's key (harness.verification.HOME_PASSED_BEFORE_KEY) and its bounds: a
# foreign record's list is cut, each entry flattened.
HOME_PASSED_BEFORE = "home_passed_before"
MAX_HOME_PASSED_BEFORE = 50
_HOME_PASSED_CAP = 200


def home_passed_before(value: object) -> tuple[str, ...]:
    """A record's ``home_passed_before`` as row text: strings only, bounded."""
    if not isinstance(value, list | tuple):
        return ()
    texts = [sanitize_text(v, cap=_HOME_PASSED_CAP) for v in value if isinstance(v, str)]
    return tuple(texts[:MAX_HOME_PASSED_BEFORE])


def _home_mode(mode: object) -> str:
    return mode if isinstance(mode, str) and mode in ("fresh", "persistent") else ""


def _prompt_delivery(entry: object) -> str:
    """The record's ``prompt_delivery.status`` (harness.prompt_delivery) when readable."""
    if isinstance(entry, Mapping) and entry.get("status") in ("intact", "altered", "none"):
        return str(entry["status"])
    return ""


def _network(value: object) -> str:
    return value if isinstance(value, str) and value in ("host", "shared", "model", "none") else ""


def _separation(containment: object) -> str:
    if not isinstance(containment, Mapping):
        return ""
    if containment.get("separated") is True:
        return "separated"
    unavailable = containment.get("separation_unavailable")
    return "unavailable" if isinstance(unavailable, str) and unavailable else ""


def _agent_capabilities(containment: object) -> str:
    if isinstance(containment, Mapping) and containment.get("agent_capabilities") == "none":
        return "none"
    return ""


def integrity_status(record: RunRecord | Mapping[str, Any]) -> IntegrityStatus:
    """``unverified`` when detection did not run or left no usable report; otherwise the
    status the integrity gate acted on (``stored_status``, the reading
    :func:`~benchguard.scoring.integrity.gate_status` gives the gate), so a
    self-contradictory clean or no_data report is published as flagged, exactly as it
    was gated. A run the machine failed whose scan is flagged only for being incomplete
    is ``unverified``: the gate did not fire on it (``scoring.integrity``)."""
    return _integrity_status(
        RowInput.of_record(record) if isinstance(record, RunRecord) else RowInput.of_mapping(record)
    )


def _integrity_status(read: RowInput) -> IntegrityStatus:
    if not read.integrity_checked:
        return "unverified"
    status = stored_status(read.cheating_report)
    if status == "flagged" and excused_by_infrastructure(read.cheating_report, read.infrastructure):
        # The machine, not the agent, left the scan incomplete and the gate did not
        # fire on it (scoring.pipeline): the run was not verified, nor flagged.
        return "unverified"
    return "unverified" if status is None else status


def _details(kind: str, read: RowInput) -> tuple[CatastrophicDetail, ...]:
    reader = _DETAIL_READERS.get(kind)
    raw = reader(read) if reader is not None else []
    if not raw:
        # Every fired kind shows at least its gate's own reason.
        entry = read.scores.get(kind)
        reason = entry.get("reason") if isinstance(entry, Mapping) else None
        raw = [{"name": kind, "reason": reason if isinstance(reason, str) else ""}]
    return tuple(CatastrophicDetail(name=d["name"], reason=d["reason"]) for d in raw)


def _verification_details(read: RowInput) -> list[dict[str, str]]:
    return failed_catastrophic_details(read.verification_report)


def _integrity_details(read: RowInput) -> list[dict[str, str]]:
    report = read.cheating_report
    if not isinstance(report, Mapping):
        return []
    described = _describe_with_detector(report)
    if described:
        return described
    categories = report.get("categories")
    if not isinstance(categories, list | tuple):
        return []
    return [{"name": c, "reason": ""} for c in categories if isinstance(c, str)]


def _describe_with_detector(report: Mapping[str, Any]) -> list[dict[str, str]]:
    # The detector owns the publishable wording (never an excerpt). Publication must
    # not fail on a foreign report: on any error the category names stand in.
    try:
        described = describe_findings(report)
    except Exception:
        return []
    return [
        {"name": str(item.get("name", "")), "reason": str(item.get("reason", ""))}
        for item in described
        if isinstance(item, Mapping)
    ]


_DETAIL_READERS: dict[str, Callable[[RowInput], list[dict[str, str]]]] = {
    keys.VERIFICATION_CATASTROPHIC: _verification_details,
    keys.INTEGRITY_CATASTROPHIC: _integrity_details,
}


def _first_score(scores: Mapping[str, Any], sources: tuple[str, ...]) -> float | None:
    key = next((k for k in sources if k in scores), None)
    return None if key is None else read_optional_score(scores[key])


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _dismissed_count(report: Any) -> int:
    dismissed = report.get("dismissed") if isinstance(report, Mapping) else None
    return len(dismissed) if isinstance(dismissed, list | tuple) else 0
