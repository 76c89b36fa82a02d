"""Publishable verdicts: one sentence per rule that fired, never an excerpt.

Excerpts can hold answer keys or secret names, so they stay in results.json. A finding
on ``args`` is *typed* access ("read by the agent"); one on ``result`` or ``output`` is
a *passive sighting* ("... appeared in <tool> output"). Typed groups come first, then
by severity, then by the earliest step.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from benchguard.detection.models import SCAN_INCOMPLETE_CATEGORY, CheatingReport

_SEVERITY_RANK = {"high": 0, "medium": 1, "low": 2}
_MAX_LISTED_READS = 3


@dataclass
class _Group:
    rule: str
    material: str
    evidence: str
    severity: str
    first_seen: int
    typed: list[tuple[str, int | None]] = field(default_factory=list)
    sightings: list[tuple[str, str, int | None]] = field(default_factory=list)


def describe_findings(report: CheatingReport | Mapping[str, Any]) -> list[dict[str, str]]:
    """``[{name, reason}]`` for a flagged report; ``[]`` for clean, no_data or junk."""
    if isinstance(report, CheatingReport):
        raw: Mapping[str, Any] = report.model_dump(mode="json")
    elif isinstance(report, Mapping):
        raw = report
    else:
        return []
    if raw.get("status") not in ("flagged", None) and raw.get("incomplete") is not True:
        return []
    findings = raw.get("findings")
    findings = findings if isinstance(findings, list | tuple) else []
    verdicts = _rule_verdicts([f for f in findings if isinstance(f, Mapping)])
    if not verdicts and raw.get("status") == "flagged":
        verdicts = _category_fallback(raw.get("categories"))
    if raw.get("incomplete") is True:
        reason = raw.get("incomplete_reason")
        verdicts.append(
            {
                "name": SCAN_INCOMPLETE_CATEGORY,
                "reason": "the scan stopped at its bound before it finished, so the run could "
                "not be verified"
                + (f" ({_clean(reason)})" if isinstance(reason, str) and reason else ""),
            }
        )
    return verdicts


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
        tool = _text(finding.get("tool"), "a tool")
        step = finding.get("trajectory_index")
        step = step if isinstance(step, int) and not isinstance(step, bool) else None
        where = finding.get("field")
        # Two patterns of one rule on one surface are one read, not two.
        if where == "args":
            if (tool, step) not in group.typed:
                group.typed.append((tool, step))
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
    if group.typed:
        listed = ", ".join(_at(tool, step) for tool, step in group.typed[:_MAX_LISTED_READS])
        extras = []
        if len(group.typed) > _MAX_LISTED_READS:
            extras.append(f"+{len(group.typed) - _MAX_LISTED_READS} more reads")
        if group.sightings:
            count = len(group.sightings)
            extras.append(f"+{count} passive sighting{'s' if count != 1 else ''}")
        suffix = f" ({', '.join(extras)})" if extras else ""
        return _clean(f"{group.material}: read by the agent — {listed}{suffix}")
    where, tool, step = group.sightings[0]
    if where == "output":
        place = "the run's final output"
    else:
        place = f"{tool} output" + (f" at step {step}" if step is not None else "")
    more = len(group.sightings) - 1
    suffix = f" (+{more} more)" if more else ""
    return _clean(f"{group.material}: {group.evidence} appeared in {place}{suffix}")


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


__all__ = ["describe_findings"]
