"""The cheating report: the detector's verdict on one record, and its findings.

Everything here is frozen: a report is a verdict, recorded once and re-derived only by
re-scanning. ``REPORT_SCHEMA_VERSION`` changes when the persisted shape changes;
``DETECTOR_VERSION`` (in ``detection.detector``) changes when the same input can give
a different verdict.

A stored report is untrusted input (an older version, a hand edit, a bug): the one
fail-closed reading of it is :func:`stored_status`, so the detector's lenient reader,
the integrity gate and the published row cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from benchguard.record.rules import GATING_STRENGTHS, Rule, Strength

REPORT_SCHEMA_VERSION = 1
# The record field a report is stored under.
REPORT_KEY = "cheating_report"

# Where a finding's evidence came from: a rule over the recorded transcript (the
# tripwire), the harness's system audit of the agent's process tree (what the kernel
# saw it open, whatever it recorded), or the harness's own digests of what grades the
# run (``tampering``, record.evidence). A finding's ``field`` is "audit" or "harness"
# for the latter two.
FindingSource = Literal["transcript", "audit", "harness"]
FindingField = Literal["args", "result", "output", "audit", "harness"]
ReportStatus = Literal["flagged", "review", "clean", "no_data"]
KNOWN_STATUSES: tuple[ReportStatus, ...] = ("clean", "flagged", "review", "no_data")

# The category a report carries when its scan did not finish inside its bounds.
# A partial scan never reads clean: it is flagged under this category (fail closed).
SCAN_INCOMPLETE_CATEGORY = "scan-incomplete"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Finding(_Frozen):
    """One rule pattern matching one surface of one record (never one per occurrence),
    or, with ``source="audit"``, one protected path the system audit saw the agent's
    processes touch (``field="audit"``, ``tool`` the operation, ``excerpt`` the path
    and its result), or, with ``source="harness"``, one tampering event
    (``field="harness"``, ``tool`` the event kind, ``excerpt`` the path)."""

    # The rule's id, and what it says (copied so a report reads without its ruleset).
    rule: str
    category: str
    material: str
    evidence: str
    severity: str
    # The pattern that matched.
    pattern: str
    # The surface it matched on.
    field: FindingField
    # The step it matched in; None for the final output (and the audit).
    trajectory_index: int | None
    # The step's tool name (the audit's operation for an audit finding).
    tool: str | None
    # A bounded, sanitised excerpt around the match.
    excerpt: str
    source: FindingSource = "transcript"
    # A typed access whose own step shows the read failing (no such file, permission
    # denied: a sandbox that hid the material) and printing nothing of it: the agent
    # *tried*. Still a finding (the attempt gates the run); only the wording differs.
    attempt_failed: bool = False
    # What the finding proves. A stored finding without one predates strengths and
    # gated the run: it reads as strong (fail closed).
    strength: Strength = "strong"
    # Where the token that matters came from, when the detector traced it (a prompt,
    # the agent's own write, a named earlier command's output, or a resolution against
    # the real history); ``None`` when it was not traced.
    provenance: str | None = None


class ScanCounts(_Frozen):
    """What the scan read: steps and characters of final output."""

    trajectory_entries: int = 0
    output_chars: int = 0


class DismissedFinding(_Frozen):
    """A finding a named reviewer dismissed; kept beside the report as the audit trail."""

    finding: Finding
    reviewer: str
    reason: str
    date: str


class CheatingReport(_Frozen):
    """The verdict on one record.

    Beyond the reference: ``ruleset_digest`` (SHA-256 over the exact rules used, static
    and dynamic, in scan order) and ``dynamic_rules`` (the inventory rules themselves),
    so a later rescan reproduces the verdict; ``incomplete`` says the scan hit its
    bound; ``dismissed`` carries reviewed dismissals.
    """

    schema_version: int = REPORT_SCHEMA_VERSION
    # detection.detector.DETECTOR_VERSION of the detector that made it.
    detector_version: int
    # flagged: a gating finding or an incomplete scan; review: only weak findings;
    # clean: neither; no_data: nothing to scan.
    status: ReportStatus
    # The findings' categories, sorted and unique.
    categories: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    scanned: ScanCounts = Field(default_factory=ScanCounts)
    # record.rules.ruleset_digest over every rule the scan used, in scan order.
    ruleset_digest: str = ""
    # The record's own rules (home inventory, material fingerprints). On disk a results
    # file stores them once per run and the report names them (record.codec).
    dynamic_rules: tuple[Rule, ...] = ()
    # The scan hit a bound (time, findings, a cut transcript): never clean.
    incomplete: bool = False
    incomplete_reason: str | None = None
    dismissed: tuple[DismissedFinding, ...] = ()

    @model_validator(mode="after")
    def _consistent(self) -> CheatingReport:
        if list(self.categories) != sorted(set(self.categories)):
            raise ValueError("categories must be sorted and unique")
        if self.status == "clean" and (self.findings or self.incomplete):
            raise ValueError("a clean report has no findings and a complete scan")
        if self.incomplete and self.status != "flagged":
            raise ValueError("an incomplete scan is flagged, never clean or no_data")
        if self.status == "review" and (
            not self.findings or any(f.strength in GATING_STRENGTHS for f in self.findings)
        ):
            raise ValueError("a review report has findings, all of them weak")
        return self


def status_for(findings: tuple[Finding, ...] | list[Finding], *, incomplete: bool) -> ReportStatus:
    """The verdict a scan's findings give: ``flagged`` on any conclusive or strong
    finding or an incomplete scan, ``review`` when every finding is weak, else clean."""
    if incomplete or any(f.strength in GATING_STRENGTHS for f in findings):
        return "flagged"
    return "review" if findings else "clean"


# --- the one fail-closed reading of a stored report --------------------------------


def stored_status(report: Any) -> ReportStatus | None:
    """The status a stored (possibly malformed) ``report`` stands for; ``None`` when
    there is no usable verdict.

    ``None`` for a non-object, ``{}`` or an unknown ``status`` that carries no
    evidence. Otherwise ``flagged`` when the report carries evidence
    (:func:`carries_evidence`), else its own known status: whatever its ``status``
    says, a report that lists findings, names categories or carries an ``incomplete``
    mark is flagged. ``review`` (only weak findings) is believed only when every
    finding says ``strength: weak`` and the scan is complete.
    """
    if not isinstance(report, Mapping):
        return None
    status = report.get("status")
    if carries_evidence(report):
        return "review" if status == "review" and _only_weak(report) else "flagged"
    for known in KNOWN_STATUSES:
        if status == known:
            return known
    return None


def _only_weak(report: Mapping[str, Any]) -> bool:
    """A ``review`` report reads as review only when it is complete and every finding
    is an object marked ``strength: weak``; anything else (a finding with no strength,
    junk, a bare category) reads as flagged (fail closed)."""
    findings = report.get("findings")
    if is_marked_incomplete(report) or not isinstance(findings, list | tuple) or not findings:
        return False
    if not all(isinstance(f, Mapping) and f.get("strength") == "weak" for f in findings):
        return False
    # A category no finding carries is evidence nobody weighed (a bound, a hand edit).
    categories = report.get("categories")
    if categories is None:
        return True
    if not isinstance(categories, list | tuple):
        return False
    return set(map(str, categories)) <= {str(f.get("category")) for f in findings}


def carries_evidence(report: Mapping[str, Any]) -> bool:
    """Findings, categories (any non-empty shape) or an incomplete mark are present."""
    return is_marked_incomplete(report) or any(
        _non_empty(report.get(key)) for key in ("findings", "categories")
    )


def is_marked_incomplete(report: Mapping[str, Any]) -> bool:
    return is_marked(report, "incomplete")


def is_marked(mapping: Mapping[str, Any], key: str) -> bool:
    """``mapping`` carries the mark ``key``: only absent, null or false means not.

    Junk such as ``"yes"`` or ``1`` reads as marked (fail closed).
    """
    mark = mapping.get(key)
    return mark is not None and mark is not False


def _non_empty(value: Any) -> bool:
    # A clean verdict has no findings or categories at all, so any non-empty value
    # counts whatever its shape.
    if value is None or value is False:
        return False
    try:
        return len(value) > 0
    except TypeError:
        return True  # a number or other scalar where a list belongs: junk, fail closed
