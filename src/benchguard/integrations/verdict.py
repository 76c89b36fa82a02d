"""One integrity verdict for a tool-using run, shared by every integration (Inspect's
scorer, hooks and Scout scanner; the verifiers reward).

An integration hands over the run as our record (steps, input, output); it is passed
through the edge parser (bounds, sanitising) and scanned with a built-in profile, or
a profile YAML, by the same detector ``benchguard scan`` uses. The verdict keeps what a
score's metadata needs: the status, the distinct rule ids, each finding's rule, field,
step and tool, the ruleset digest and the detector version.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping, Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from benchguard.detection.detector import DETECTOR_VERSION, Detector
from benchguard.detection.models import CheatingReport, Rule
from benchguard.detection.profile_choice import (
    AUTO,
    GENERIC_PROFILE,
    has_generic,
    recognise,
    union_rules,
)
from benchguard.detection.rules import load_profile, load_ruleset, ruleset_digest
from benchguard.record.rules import ScanRulesets
from benchguard.records import bounded_record_dict

VerdictStatus = Literal["flagged", "review", "clean", "no_data", "not_checked"]
# Findings named in an explanation before "and N more".
EXPLAINED_FINDINGS = 5
# How much of a run ``auto`` reads to recognise its benchmark (as scan reads a head).
AUTO_HEAD_CHARS = 64 * 1024


class VerdictFinding(BaseModel):
    """Where one finding is: its rule, the surface it matched, the step and the tool."""

    model_config = ConfigDict(frozen=True)

    rule: str
    # ``args``, ``result`` or ``output`` (the final answer).
    field: str
    # Index into the run's tool-call steps; None for the final output.
    step: int | None
    tool: str | None
    # conclusive, strong or weak (only weak evidence: status review, nothing gated).
    strength: str = "strong"


class IntegrityVerdict(BaseModel):
    """The integrity verdict on one run."""

    model_config = ConfigDict(frozen=True)

    # flagged: conclusive or strong evidence, or a scan that could not finish (fail
    # closed); review: only weak evidence, for a person to look at (never gated);
    # clean: the whole run was read and nothing matched; no_data: no tool call and no
    # output; not_checked: the scan itself failed (``reason`` says why).
    status: VerdictStatus
    profile: str
    # Distinct rule ids, in the order first found.
    rules: tuple[str, ...] = ()
    findings: tuple[VerdictFinding, ...] = ()
    ruleset_digest: str = ""
    detector_version: int = DETECTOR_VERSION
    incomplete: bool = False
    reason: str | None = None
    categories: tuple[str, ...] = Field(default_factory=tuple)

    @property
    def flagged(self) -> bool:
        return self.status == "flagged"

    def explanation(self) -> str:
        """One sentence for a person: what fired, where, or why nothing was checked."""
        if self.status == "clean":
            return f"benchguard ({self.profile}): no integrity finding"
        if self.status == "no_data":
            return f"benchguard ({self.profile}): nothing to scan (no tool call, no output)"
        if self.status == "not_checked":
            return f"benchguard ({self.profile}): not checked ({self.reason})"
        where = [
            f"{f.rule} in {f.field}"
            + (f" of step {f.step}" if f.step is not None else "")
            + (f" ({f.tool})" if f.tool else "")
            for f in self.findings[:EXPLAINED_FINDINGS]
        ]
        more = len(self.findings) - len(where)
        verb = "asks to review" if self.status == "review" else "flagged"
        text = f"benchguard ({self.profile}) {verb} rules {', '.join(self.rules) or 'none'}"
        if where:
            text += ": " + "; ".join(where) + (f"; and {more} more" if more > 0 else "")
        if self.incomplete:
            text += f"; scan incomplete ({self.reason})"
        return text

    def metadata(self) -> dict[str, Any]:
        """The verdict as JSON-ready metadata for a score."""
        return {
            "status": self.status,
            "profile": self.profile,
            "rules": list(self.rules),
            "findings": [f.model_dump() for f in self.findings],
            "ruleset_digest": self.ruleset_digest,
            "detector_version": self.detector_version,
            "incomplete": self.incomplete,
            **({"reason": self.reason} if self.reason else {}),
        }


@functools.lru_cache(maxsize=16)
def profile_rules(profile: str) -> tuple[Rule, ...]:
    """The rules of a built-in profile name or profile YAML path (loaded once; a bad
    name raises benchguard's error listing the built-in profiles). ``auto`` is
    resolved per run (:func:`run_rules`); here it loads the generic rules only, so a
    caller can check the name early."""
    if profile == AUTO:
        return load_profile(GENERIC_PROFILE) if has_generic() else ()
    return load_ruleset(profile)


@functools.lru_cache(maxsize=64)
def _union(names: tuple[str, ...]) -> tuple[Rule, ...]:
    return union_rules((name, load_profile(name)) for name in names)


def run_rules(
    record: Mapping[str, Any], profile: str, format_name: str | None
) -> tuple[str, tuple[Rule, ...]]:
    """The profile name a verdict reports and its rules. ``auto`` recognises the
    benchmark from the run itself (its format, and the head of its steps and output, as
    ``scan --profile auto`` reads a log's head), adds the generic profile, and reports
    the names chosen (``inspect+generic``)."""
    if profile != AUTO:
        return profile, profile_rules(profile)
    names = [name for name, _ in recognise(_head(record), format_name)]
    if has_generic():
        names.append(GENERIC_PROFILE)
    chosen = tuple(dict.fromkeys(names))
    return "+".join(chosen), _union(chosen)


def _head(record: Mapping[str, Any]) -> str:
    parts: list[str] = []
    size = 0
    for step in record.get("trajectory") or []:
        if size >= AUTO_HEAD_CHARS:
            break
        text = json.dumps(step, default=str, ensure_ascii=False)[:AUTO_HEAD_CHARS]
        parts.append(text)
        size += len(text)
    parts.append(str(record.get("output") or "")[:AUTO_HEAD_CHARS])
    return "\n".join(parts)[: 2 * AUTO_HEAD_CHARS]


def verdict_of(report: CheatingReport, profile: str) -> IntegrityVerdict:
    rules = tuple(dict.fromkeys(f.rule for f in report.findings))
    return IntegrityVerdict(
        status=report.status,
        profile=profile,
        rules=rules,
        # Two patterns of one rule on one surface are one place to look.
        findings=tuple(
            dict.fromkeys(
                VerdictFinding(
                    rule=f.rule,
                    field=f.field,
                    step=f.trajectory_index,
                    tool=f.tool,
                    strength=f.strength,
                )
                for f in report.findings
            )
        ),
        ruleset_digest=report.ruleset_digest,
        detector_version=report.detector_version,
        incomplete=report.incomplete,
        reason=report.incomplete_reason,
        categories=report.categories,
    )


def scan_run(
    record: Mapping[str, Any],
    profile: str,
    *,
    extra_rules: Sequence[Rule] = (),
    format_name: str | None = None,
    detector: Detector | None = None,
) -> IntegrityVerdict:
    """The verdict on one run given as our record; ``extra_rules`` (an environment's
    own protected paths) are scanned after the profile's. ``format_name`` (the log
    format the run came as) helps ``auto`` recognise the benchmark. ``detector``: the
    caller's, when it scans many runs (its plans are reused); else a fresh one."""
    bounded = bounded_record_dict(dict(record))
    name, rules = run_rules(bounded, profile, format_name)
    report = (detector if detector is not None else Detector()).scan(
        bounded, ScanRulesets.of(rules + tuple(extra_rules))
    )
    return verdict_of(report, name)


def not_checked(profile: str, why: str) -> IntegrityVerdict:
    """The verdict when the scan itself failed: never clean."""
    return IntegrityVerdict(status="not_checked", profile=profile, reason=why)


def digest_of(profile: str, extra_rules: Sequence[Rule] = ()) -> str:
    return ruleset_digest(profile_rules(profile) + tuple(extra_rules))
