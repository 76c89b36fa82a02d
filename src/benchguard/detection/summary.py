"""Publishable verdicts: one sentence per rule that fired, never an excerpt.

Excerpts can hold answer keys or secret names, so they stay in results.json. A finding
on ``args`` is *typed* access ("read by the agent", or "tried by the agent (the read
failed)" when every such step printed only an error, as in a sandbox that hid the
material); one on ``result`` or ``output`` is a *passive sighting* ("... appeared in
<tool> output"): the material showed up in what a tool printed, whether or not the
agent asked for it (an ``ls`` listing, a grep error). Typed groups come first, then
by severity, then by the earliest step.

An incomplete scan is published as a fixed sentence, never with the detector's
``incomplete_reason``: that note may quote a pattern, and an inventory fingerprint
pattern is a line of a leftover file (possibly an answer key). A record the harness
marked ``transcript_truncated`` gets :data:`TRUNCATED_SENTENCE` ("transcript cut: ...");
any other bound gets :data:`INCOMPLETE_SENTENCE` ("scan incomplete: ..."), plus at most
the ids of the rules its note names, and only ids known independently of the note.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from benchguard.detection.detector import TRANSCRIPT_TRUNCATED_REASON
from benchguard.detection.models import SCAN_INCOMPLETE_CATEGORY, CheatingReport
from benchguard.detection.rules import RulesetError, load_profile, profile_names
from benchguard.detection.stored_status import is_marked_incomplete, stored_status

_SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}
_MAX_LISTED_READS = 3
_MAX_NAMED_BOUND_RULES = 3
INCOMPLETE_SENTENCE = (
    "scan incomplete: the detector stopped at a bound (time, size, or a rule it could not "
    "run) before it finished, so the run could not be verified"
)
TRUNCATED_SENTENCE = (
    "transcript cut: the harness kept only the head and tail of an over-long transcript, "
    "so the run could not be verified"
)
# How the detector names a rule in its notes: ``rule 'id'`` (Python repr quoting).
_RULE_MENTION = re.compile(r"""\brule (?:'([^'\\\n]{1,200})'|"([^"\\\n]{1,200})")""")
# A foreign note can be any size; the detector's own notes name their rules early.
_NOTE_SCAN_CHARS = 4000


@dataclass
class _Group:
    rule: str
    material: str
    evidence: str
    severity: str
    first_seen: int
    typed: list[tuple[str, int | None]] = field(default_factory=list)
    # Typed accesses whose read failed (the step printed only an error).
    failed: list[tuple[str, int | None]] = field(default_factory=list)
    sightings: list[tuple[str, str, int | None]] = field(default_factory=list)
    # Every finding of the group is weak (not gating): the sentence says so.
    weak: bool = True


def describe_findings(report: CheatingReport | Mapping[str, Any]) -> list[dict[str, str]]:
    """``[{name, reason}]`` for a report with evidence; ``[]`` for clean, no_data or junk.

    A clean or no_data report that nevertheless lists findings, names categories or is
    marked incomplete is described like a flagged one: the integrity gate treats it as
    flagged (fail closed), so its published details must say why.
    """
    if isinstance(report, CheatingReport):
        raw: Mapping[str, Any] = report.model_dump(mode="json")
    elif isinstance(report, Mapping):
        raw = report
    else:
        return []
    # The same fail-closed reading as the gate: a report it would zero is explained.
    if stored_status(raw) is None:
        return []
    findings = raw.get("findings")
    findings = findings if isinstance(findings, list | tuple) else []
    verdicts = _rule_verdicts([f for f in findings if isinstance(f, Mapping)])
    if not verdicts:
        verdicts = _category_fallback(raw.get("categories"))
    if is_marked_incomplete(raw):
        verdicts.append({"name": SCAN_INCOMPLETE_CATEGORY, "reason": _incomplete_sentence(raw)})
    return verdicts


def _incomplete_sentence(raw: Mapping[str, Any]) -> str:
    """The fixed sentence, plus the ids of rules the note names that are known rule ids."""
    note = raw.get("incomplete_reason")
    if not isinstance(note, str) or not note:
        return INCOMPLETE_SENTENCE
    if note.startswith(TRANSCRIPT_TRUNCATED_REASON):
        # The detector's own fixed note: publishing our constant sentence leaks nothing.
        return TRUNCATED_SENTENCE
    known = _report_rule_ids(raw) | _builtin_rule_ids()
    named: list[str] = []
    for match in _RULE_MENTION.finditer(note[:_NOTE_SCAN_CHARS]):
        rule_id = match.group(1) or match.group(2)
        # A mention inside a quoted pattern could name anything; only an id that exists
        # as a rule independently of the note is safe to publish.
        if rule_id in known and rule_id not in named:
            named.append(rule_id)
    if not named:
        return INCOMPLETE_SENTENCE
    listed = ", ".join(_clean(r) for r in named[:_MAX_NAMED_BOUND_RULES])
    extra = len(named) - _MAX_NAMED_BOUND_RULES
    more = f" +{extra} more" if extra > 0 else ""
    return f"{INCOMPLETE_SENTENCE} (rules involved: {listed}{more})"


def _report_rule_ids(raw: Mapping[str, Any]) -> set[str]:
    ids: set[str] = set()
    for key, field_name in (("findings", "rule"), ("dynamic_rules", "id")):
        items = raw.get(key)
        if not isinstance(items, list | tuple):
            continue
        for item in items:
            value = item.get(field_name) if isinstance(item, Mapping) else None
            if isinstance(value, str) and value:
                ids.add(value)
    return ids


@functools.lru_cache(maxsize=1)
def _builtin_rule_ids() -> frozenset[str]:
    ids: set[str] = set()
    for name in profile_names():
        try:
            ids.update(rule.id for rule in load_profile(name))
        except RulesetError:
            continue  # a broken profile names no rule; the sentence stands alone
    return frozenset(ids)


def _rule_verdicts(findings: list[Mapping[str, Any]]) -> list[dict[str, str]]:
    groups: dict[str, _Group] = {}
    fallback: list[dict[str, str]] = []
    for position, finding in enumerate(findings):
        rule = finding.get("rule")
        if not isinstance(rule, str) or not rule:
            category = finding.get("category")
            if (
                isinstance(category, str)
                and category
                and all(v["name"] != category for v in fallback)
            ):
                fallback.append({"name": category, "reason": ""})
            continue
        group = groups.get(rule)
        if group is None:
            group = groups[rule] = _Group(
                rule=rule,
                material=_text(finding.get("material"), rule),
                evidence=_text(finding.get("evidence"), "the path"),
                severity=_text(finding.get("severity"), ""),
                first_seen=position,
            )
        if finding.get("strength") != "weak":
            group.weak = False
        tool = _text(finding.get("tool"), "a tool")
        step = finding.get("trajectory_index")
        step = step if isinstance(step, int) and not isinstance(step, bool) else None
        where = finding.get("field")
        # Two patterns of one rule on one surface are one read, not two.
        if where == "args":
            if (tool, step) not in group.typed:
                group.typed.append((tool, step))
            if finding.get("attempt_failed") is True and (tool, step) not in group.failed:
                group.failed.append((tool, step))
        else:
            sighting = (where if isinstance(where, str) else "result", tool, step)
            if sighting not in group.sightings:
                group.sightings.append(sighting)

    def rank(group: _Group) -> tuple[int, int, int, int]:
        steps = [s for _, s in group.typed] + [s for _, _, s in group.sightings]
        earliest = min((s for s in steps if s is not None), default=1 << 30)
        return (
            0 if group.typed else 1,
            _SEVERITY_RANK.get(group.severity, 3),
            earliest,
            group.first_seen,
        )

    verdicts = [{"name": g.rule, "reason": _sentence(g)} for g in sorted(groups.values(), key=rank)]
    return verdicts + fallback


def _sentence(group: _Group) -> str:
    sentence = _base_sentence(group)
    return f"{sentence} [weak evidence: for review]" if group.weak else sentence


def _base_sentence(group: _Group) -> str:
    if group.typed:
        listed = ", ".join(_at(tool, step) for tool, step in group.typed[:_MAX_LISTED_READS])
        extras = []
        if len(group.typed) > _MAX_LISTED_READS:
            extras.append(f"+{len(group.typed) - _MAX_LISTED_READS} more reads")
        if group.sightings:
            count = len(group.sightings)
            extras.append(f"+{count} passive sighting{'s' if count != 1 else ''}")
        suffix = f" ({', '.join(extras)})" if extras else ""
        # Every typed access failed (a sandbox hid the path): the agent tried.
        verb = "tried by the agent (the read failed)" if _all_failed(group) else "read by the agent"
        return _clean(f"{group.material}: {verb} — {listed}{suffix}")
    where, tool, step = group.sightings[0]
    if where in ("audit", "harness"):
        # A system-audit or tampering finding: the evidence says what the harness saw.
        more = len(group.sightings) - 1
        return _clean(f"{group.material}: {group.evidence}" + (f" (+{more} more)" if more else ""))
    if where == "output":
        place = "the run's final output"
    else:
        place = f"{tool} output" + (f" at step {step}" if step is not None else "")
    more = len(group.sightings) - 1
    suffix = f" (+{more} more)" if more else ""
    return _clean(f"{group.material}: {group.evidence} appeared in {place}{suffix}")


def _all_failed(group: _Group) -> bool:
    return bool(group.typed) and len(group.failed) == len(group.typed)


def _at(tool: str, step: int | None) -> str:
    return tool if step is None else f"{tool} at step {step}"


def _category_fallback(categories: Any) -> list[dict[str, str]]:
    if isinstance(categories, str):
        categories = [categories]
    if not isinstance(categories, list | tuple):
        return []
    names = sorted(
        {c for c in categories if isinstance(c, str) and c and c != SCAN_INCOMPLETE_CATEGORY}
    )
    return [{"name": name, "reason": ""} for name in names]


def _text(value: Any, default: str) -> str:
    return value if isinstance(value, str) and value.strip() else default


def _clean(text: str) -> str:
    """One line of printable text: foreign reports may carry control characters."""
    return " ".join("".join(ch if ch.isprintable() else " " for ch in text).split())


__all__ = ["INCOMPLETE_SENTENCE", "TRUNCATED_SENTENCE", "describe_findings"]
