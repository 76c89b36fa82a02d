"""SARIF 2.1.0 for code-scanning dashboards (GitHub code scanning among them).

One run per output, one ``result`` per finding, ``tool.driver.rules`` built from the
rules the scan used (the profile and extra rules, then any inventory rules the reports
carry), so a dashboard shows each rule's material, evidence and severity. Each result
points into the log file it came from (``physicalLocation`` with a line, see
``_locate``) and names its record as a logical location. A report that is flagged only
because the scan could not finish gets one result under the tool's own
``benchguard/scan-incomplete`` rule: fail closed, visibly. Reviewed dismissals become
``suppressions`` with the reviewer's reason, so the finding stays on record but closed.

``partialFingerprints`` are a digest of file, record, rule, surface, step and pattern: the same
finding in the same log keeps its identity across runs, which is what a dashboard uses
to avoid duplicate alerts.
"""

from __future__ import annotations

import hashlib
import os
import urllib.parse
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from benchguard.detection.models import SCAN_INCOMPLETE_CATEGORY, Finding, Rule
from benchguard.results.formats._locate import LineLocator
from benchguard.results.formats._record import ReportedRecord

SARIF_VERSION = "2.1.0"
SARIF_SCHEMA_URI = "https://json.schemastore.org/sarif-2.1.0.json"
TOOL_NAME = "benchguard"
INCOMPLETE_RULE_ID = "benchguard/scan-incomplete"
FINGERPRINT_KEY = "benchguardFinding/v1"

# SARIF levels and GitHub's numeric security severity for our three severities.
_LEVELS = {"high": "error", "medium": "warning", "low": "note"}
_SECURITY_SEVERITY = {"high": "8.0", "medium": "5.0", "low": "2.0"}


def sarif_log(
    records: Sequence[ReportedRecord],
    rules: Sequence[Rule],
    *,
    tool_version: str,
    base_dir: Path | None = None,
) -> dict[str, Any]:
    """The SARIF log (a JSON value) for ``records`` scanned with ``rules``.

    File locations are made relative to ``base_dir`` (default: the working directory)
    when they sit under it, as code scanning expects repository-relative paths; other
    files are named by absolute ``file:`` URI.
    """
    base = Path(os.path.abspath(base_dir if base_dir is not None else Path.cwd()))
    catalogue = _rule_catalogue(rules, (r.report.dynamic_rules for r in records))
    index = {rule_id: position for position, rule_id in enumerate(catalogue)}
    locator = LineLocator()
    results: list[dict[str, Any]] = []
    for record in records:
        uri = _uri(record.file, base)
        for finding in record.report.findings:
            results.append(_finding_result(record, finding, uri, index, locator))
        for dismissed in record.report.dismissed:
            result = _finding_result(record, dismissed.finding, uri, index, locator)
            result["suppressions"] = [
                {
                    "kind": "external",
                    "status": "accepted",
                    "justification": f"{dismissed.reviewer} ({dismissed.date}): {dismissed.reason}",
                }
            ]
            results.append(result)
        if record.report.incomplete:
            results.append(_incomplete_result(record, uri, index))
    artifacts = sorted({_uri(r.file, base) for r in records})
    return {
        "$schema": SARIF_SCHEMA_URI,
        "version": SARIF_VERSION,
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": TOOL_NAME,
                        "version": tool_version,
                        "rules": list(catalogue.values()),
                    }
                },
                "artifacts": [{"location": {"uri": uri}} for uri in artifacts],
                "results": results,
                "columnKind": "unicodeCodePoints",
            }
        ],
    }


def _rule_catalogue(
    rules: Sequence[Rule], dynamic: Iterable[Sequence[Rule]]
) -> dict[str, dict[str, Any]]:
    """Every rule a result may name, static rules first in ruleset order, then each
    inventory rule the first time a report carries it, then the incomplete-scan rule."""
    catalogue: dict[str, dict[str, Any]] = {}
    for rule in rules:
        catalogue.setdefault(rule.id, _descriptor(rule))
    for carried in dynamic:
        for rule in carried:
            catalogue.setdefault(rule.id, _descriptor(rule))
    catalogue[INCOMPLETE_RULE_ID] = {
        "id": INCOMPLETE_RULE_ID,
        "name": "ScanIncomplete",
        "shortDescription": {"text": "The scan stopped at a bound before it finished"},
        "fullDescription": {
            "text": "The detector hit a time, size or rule bound on this record, so it could "
            "not be verified; benchguard fails closed and reports the record flagged."
        },
        "defaultConfiguration": {"level": "error"},
        "properties": {
            "category": SCAN_INCOMPLETE_CATEGORY,
            "tags": ["benchmark-integrity", SCAN_INCOMPLETE_CATEGORY],
            "security-severity": _SECURITY_SEVERITY["high"],
        },
    }
    return catalogue


def _descriptor(rule: Rule) -> dict[str, Any]:
    summary = f"Access to {rule.material}"
    detail = rule.description or f"{summary}, revealed by {rule.evidence}."
    return {
        "id": rule.id,
        "name": _pascal(rule.id),
        "shortDescription": {"text": summary},
        "fullDescription": {"text": detail},
        "help": {
            "text": f"{detail} Category: {rule.category}. Evidence: {rule.evidence}. "
            "Review the record's trajectory; a reviewed false positive is dismissed with "
            "`benchguard dismiss` (or listed in a dismissals file)."
        },
        "defaultConfiguration": {"level": _LEVELS.get(rule.severity, "warning")},
        "properties": {
            "category": rule.category,
            "tags": ["benchmark-integrity", rule.category],
            "security-severity": _SECURITY_SEVERITY.get(rule.severity, "5.0"),
        },
    }


def _finding_result(
    record: ReportedRecord,
    finding: Finding,
    uri: str,
    index: dict[str, int],
    locator: LineLocator,
) -> dict[str, Any]:
    step = (
        "the final output"
        if finding.trajectory_index is None
        else f"step {finding.trajectory_index}"
    )
    tool = f" ({finding.tool})" if finding.tool else ""
    line = locator.line_of(record.file, finding.excerpt, record.line)
    result: dict[str, Any] = {
        "ruleId": finding.rule,
        # A weak finding does not gate: a note, whatever the rule's severity.
        "level": "note" if finding.strength == "weak" else _LEVELS.get(finding.severity, "warning"),
        "message": {
            "text": f"{record.label}: {finding.material} in the {finding.field} of {step}{tool} "
            f"(evidence: {finding.evidence})"
        },
        "locations": [_location(uri, line, record.label)],
        "partialFingerprints": {
            FINGERPRINT_KEY: _fingerprint(
                uri,
                record.label,
                finding.rule,
                finding.field,
                finding.trajectory_index,
                finding.pattern,
            )
        },
        "properties": {
            "record": record.label,
            "category": finding.category,
            "field": finding.field,
            "step": finding.trajectory_index,
            "tool": finding.tool,
        },
    }
    if finding.rule in index:
        result["ruleIndex"] = index[finding.rule]
    return result


def _incomplete_result(record: ReportedRecord, uri: str, index: dict[str, int]) -> dict[str, Any]:
    return {
        "ruleId": INCOMPLETE_RULE_ID,
        "ruleIndex": index[INCOMPLETE_RULE_ID],
        "level": "error",
        "message": {"text": f"{record.label}: the scan did not finish, so the run is not verified"},
        "locations": [_location(uri, record.line or 1, record.label)],
        "partialFingerprints": {
            FINGERPRINT_KEY: _fingerprint(uri, record.label, INCOMPLETE_RULE_ID, "", None, "")
        },
        "properties": {"record": record.label, "category": SCAN_INCOMPLETE_CATEGORY},
    }


def _location(uri: str, line: int, label: str) -> dict[str, Any]:
    return {
        "physicalLocation": {"artifactLocation": {"uri": uri}, "region": {"startLine": line}},
        "logicalLocations": [{"name": label, "kind": "object"}],
    }


def _fingerprint(
    uri: str, label: str, rule: str, field: str, step: int | None, pattern: str
) -> str:
    # A rule's patterns each give their own finding on one surface; the pattern enters
    # only through the digest, so the log never spells it.
    key = "\x1f".join((uri, label, rule, field, "" if step is None else str(step), pattern))
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _uri(file: str, base: Path) -> str:
    absolute = Path(os.path.abspath(file))
    try:
        relative = absolute.relative_to(base)
    except ValueError:
        return absolute.as_uri()
    return urllib.parse.quote(relative.as_posix())


def _pascal(rule_id: str) -> str:
    words = [w for w in "".join(c if c.isalnum() else " " for c in rule_id).split() if w]
    return "".join(w[:1].upper() + w[1:] for w in words) or "Rule"
