"""Evidence the harness stores on a record beside the transcript, read into findings.

Three marks, all written by ``benchguard.harness`` and all read here so a rescan of a
stored record reproduces the same verdict:

- ``system_audit``: what the system audit (strace over the agent's process tree) saw
  the agent's processes do to protected paths. Each access becomes one finding with
  ``source="audit"``; an audit that was capped or could not be read makes the report
  incomplete (never clean).
- ``transcript_problem``: the harness found the transcript channel replaced, or no
  record at all from an agent that produced work. The report is then incomplete.
- ``tampering``: what the harness's digests saw change that grades the run (a grading
  file, a grading path or grader output the agent wrote, a deliverable changed after
  the agent ended; ``harness/tampering.py``). Each event becomes one finding of
  category ``tampering`` with ``source="harness"``, which gates like material access;
  digests that could not finish, or a mark that cannot be read, make the report
  incomplete.

Pure: reads the record, never edits it. Reasons are fixed strings, never built from
record text (reports are published through summaries).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from benchguard.detection.models import Finding
from benchguard.record.evidence import (  # the keys and vocabulary live in record.evidence
    AUDIT_OPERATIONS as AUDIT_OPERATIONS,
)
from benchguard.record.evidence import (
    AUDIT_RESULTS as AUDIT_RESULTS,
)
from benchguard.record.evidence import (
    SYSTEM_AUDIT_KEY as SYSTEM_AUDIT_KEY,
)
from benchguard.record.evidence import (
    TAMPERING_CATEGORY as TAMPERING_CATEGORY,
)
from benchguard.record.evidence import (
    TAMPERING_EVENTS as TAMPERING_EVENTS,
)
from benchguard.record.evidence import (
    TAMPERING_KEY as TAMPERING_KEY,
)
from benchguard.record.evidence import (
    TRANSCRIPT_PROBLEM_KEY as TRANSCRIPT_PROBLEM_KEY,
)
from benchguard.record.evidence import (
    TranscriptProblem as TranscriptProblem,
)

TRANSCRIPT_PROBLEM_REASONS: dict[str, str] = {
    "missing": "the agent produced work but its transcript recorded nothing",
    "tampered": "the transcript channel was replaced or rewritten during the run",
}
_UNKNOWN_TRANSCRIPT_PROBLEM = "the harness marked the transcript as unreliable"
AUDIT_INCOMPLETE_REASON = "the system audit log was capped or unreadable"
AUDIT_UNREADABLE_REASON = "the stored system audit could not be read"
# One finding per distinct (path, operation, result); beyond this many the rest are
# counted in the audit summary only (the record is flagged already).
MAX_AUDIT_FINDINGS = 50
AUDIT_RULE_PREFIX = "audit/"
TAMPERING_INCOMPLETE_REASON = "the tampering digests were capped or unreadable"
MAX_TAMPERING_FINDINGS = 50


@dataclass(frozen=True)
class HarnessEvidence:
    findings: tuple[Finding, ...] = ()
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def present(self) -> bool:
        return bool(self.findings or self.notes)


def harness_evidence(record: Mapping[str, Any]) -> HarnessEvidence:
    """The audit findings and incomplete notes the harness's marks on ``record`` carry."""
    notes: list[str] = []
    problem = record.get(TRANSCRIPT_PROBLEM_KEY)
    if problem is not None and problem is not False:
        text = problem if isinstance(problem, str) else ""
        notes.append(TRANSCRIPT_PROBLEM_REASONS.get(text, _UNKNOWN_TRANSCRIPT_PROBLEM))
    tampering = _tampering(record.get(TAMPERING_KEY), notes)
    audit = record.get(SYSTEM_AUDIT_KEY)
    if audit is None:
        return HarnessEvidence(tampering, tuple(dict.fromkeys(notes)))
    if not isinstance(audit, Mapping):
        return HarnessEvidence(tampering, (*notes, AUDIT_UNREADABLE_REASON))
    if audit.get("complete") is not True:
        notes.append(AUDIT_INCOMPLETE_REASON)
    accesses = audit.get("accesses")
    if not isinstance(accesses, list):
        return HarnessEvidence(tampering, (*notes, AUDIT_UNREADABLE_REASON))
    findings: list[Finding] = []
    seen: set[tuple[str, str, str]] = set()
    for access in accesses:
        finding = _finding(access)
        if finding is None:
            notes.append(AUDIT_UNREADABLE_REASON)
            continue
        key = (finding.excerpt, finding.tool or "", finding.evidence)
        if key in seen:
            continue
        seen.add(key)
        if len(findings) < MAX_AUDIT_FINDINGS:
            findings.append(finding)
    return HarnessEvidence((*tampering, *findings), tuple(dict.fromkeys(notes)))


def _tampering(mark: Any, notes: list[str]) -> tuple[Finding, ...]:
    """The tampering findings of a record's ``tampering`` mark (None: not taken)."""
    if mark is None:
        return ()
    if not isinstance(mark, Mapping) or not isinstance(mark.get("events"), list):
        notes.append(TAMPERING_INCOMPLETE_REASON)
        return ()
    if mark.get("complete") is not True:
        notes.append(TAMPERING_INCOMPLETE_REASON)
    findings: list[Finding] = []
    for event in mark["events"]:
        what = event.get("what") if isinstance(event, Mapping) else None
        path = event.get("path") if isinstance(event, Mapping) else None
        if not isinstance(what, str) or what not in TAMPERING_EVENTS or not isinstance(path, str):
            notes.append(TAMPERING_INCOMPLETE_REASON)
            continue
        material, evidence = TAMPERING_EVENTS[what]
        if len(findings) < MAX_TAMPERING_FINDINGS:
            findings.append(
                Finding(
                    rule=f"{TAMPERING_CATEGORY}/{what}",
                    category=TAMPERING_CATEGORY,
                    material=material,
                    evidence=evidence,
                    severity="high",
                    pattern="",
                    field="harness",
                    trajectory_index=None,
                    tool=what,
                    excerpt=path,
                    source="harness",
                )
            )
    return tuple(findings)


def audit_evidence_text(operation: str, result: str) -> str:
    """The evidence kind of one audited access, e.g. "opened by the agent, system audit".

    An access that failed (not found: hidden by the sandbox or absent; denied) is an
    attempt: "tried to open ... (not-found)".
    """
    if result == "ok":
        return f"{operation} by the agent, system audit"
    return f"tried ({operation}, {result}) by the agent, system audit"


def _finding(access: Any) -> Finding | None:
    if not isinstance(access, Mapping):
        return None
    texts = {
        key: access.get(key) for key in ("path", "operation", "result", "category", "material")
    }
    if not all(isinstance(value, str) and value for value in texts.values()):
        return None
    if texts["operation"] not in AUDIT_OPERATIONS or texts["result"] not in AUDIT_RESULTS:
        return None
    root = access.get("root")
    # fanotify's fallback: the process was gone before its run could be named, and the
    # file was reached through a mount no run's namespace holds (a detached tree, or a
    # process outside the harness). Recorded for review, never gating on its own.
    unattributed = access.get("attributed_by") == "unattributed"
    return Finding(
        strength="weak" if unattributed else "strong",
        rule=AUDIT_RULE_PREFIX + str(texts["category"]),
        category=str(texts["category"]),
        material=str(texts["material"]),
        evidence=audit_evidence_text(str(texts["operation"]), str(texts["result"])),
        severity="high",
        pattern=root if isinstance(root, str) else "",
        field="audit",
        trajectory_index=None,
        tool=str(texts["operation"]),
        excerpt=f"{texts['path']} ({texts['result']})",
        source="audit",
    )
