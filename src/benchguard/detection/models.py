"""Typed shapes of the detection layer: rules, findings and the per-record report.

Everything here is frozen: a report is a verdict, recorded once and re-derived only by
re-scanning. ``REPORT_SCHEMA_VERSION`` changes when the persisted shape changes;
``DETECTOR_VERSION`` (in ``detector``) changes when the same input can give a
different verdict.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

REPORT_SCHEMA_VERSION = 1

ScanField = Literal["args", "result", "output"]
SCAN_FIELDS: tuple[ScanField, ...] = ("args", "result", "output")
# Where a finding's evidence came from: a rule over the recorded transcript (the
# tripwire), or the harness's system audit of the agent's process tree (what the
# kernel saw it open, whatever it recorded). A finding's ``field`` is "audit" for the
# latter.
FindingSource = Literal["transcript", "audit"]
FindingField = Literal["args", "result", "output", "audit"]
Severity = Literal["high", "medium", "low"]
ReportStatus = Literal["flagged", "review", "clean", "no_data"]
# How much a finding proves (docs/cheat-detection.md, "Strength"): ``conclusive`` the
# protected material itself (or its fingerprint) in what a protected source printed, or
# future state resolved as future; ``strong`` a read of a protected path by a command
# that reads (a failed read too: the attempt is the evidence); ``weak`` an ambiguous
# reference or unknown provenance. Conclusive and strong findings gate the run
# (``flagged``); a report whose findings are all weak is ``review``.
Strength = Literal["conclusive", "strong", "weak"]
STRENGTHS: tuple[Strength, ...] = ("conclusive", "strong", "weak")
GATING_STRENGTHS: frozenset[str] = frozenset({"conclusive", "strong"})

# The category a report carries when its scan did not finish inside its bounds.
# A partial scan never reads clean: it is flagged under this category (fail closed).
SCAN_INCOMPLETE_CATEGORY = "scan-incomplete"


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Rule(_Frozen):
    """One kind of benchmark material and the regexes that reveal access to it.

    ``source`` is set only on rules generated from a home inventory (the home-entry
    name); it is what lets a task prompt that names the entry authorize it.
    """

    id: str
    category: str
    material: str
    evidence: str = "the path"
    description: str = ""
    severity: Severity = "high"
    patterns: tuple[str, ...]
    fields: tuple[ScanField, ...] = SCAN_FIELDS
    source: str | None = None
    # What a match proves (see ``Strength``); a profile says it per rule.
    strength: Strength = "strong"
    # A key-shaped content rule standing in for the material's own fingerprints: it is
    # skipped when the scan has the protected material's fingerprint rules, which say
    # the same with no false positives on honest files that share the keys.
    fallback: bool = False

    @field_validator("id", "category", "material")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    @field_validator("patterns")
    @classmethod
    def _some_patterns(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("needs at least one pattern")
        if any(not p for p in value):
            raise ValueError("patterns must not be empty strings")
        return value

    @field_validator("fields")
    @classmethod
    def _some_fields(cls, value: tuple[ScanField, ...]) -> tuple[ScanField, ...]:
        if not value:
            raise ValueError(f"needs at least one of {list(SCAN_FIELDS)}")
        if len(set(value)) != len(value):
            raise ValueError("fields must not repeat")
        return value


class Finding(_Frozen):
    """One rule pattern matching one surface of one record (never one per occurrence),
    or, with ``source="audit"``, one protected path the system audit saw the agent's
    processes touch (``field="audit"``, ``tool`` the operation, ``excerpt`` the path
    and its result)."""

    rule: str
    category: str
    material: str
    evidence: str
    severity: str
    pattern: str
    field: FindingField
    trajectory_index: int | None
    tool: str | None
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
    detector_version: int
    status: ReportStatus
    categories: tuple[str, ...] = ()
    findings: tuple[Finding, ...] = ()
    scanned: ScanCounts = Field(default_factory=ScanCounts)
    ruleset_digest: str = ""
    dynamic_rules: tuple[Rule, ...] = ()
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
