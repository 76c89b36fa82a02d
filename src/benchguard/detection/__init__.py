"""Cheat detection: a pure, re-runnable verdict over each run's recorded trajectory.

``rules`` loads profiles and extra rules, ``detector`` scans records, ``inventory``
turns the agent home into per-run rules, ``summary`` words publishable verdicts.
See docs/cheat-detection.md.
"""

from __future__ import annotations

from benchguard.detection.detector import (
    DEFAULT_RECORD_BUDGET_S,
    DETECTOR_VERSION,
    MAX_FINDINGS_PER_RULE,
    Detector,
    annotate_records,
    report_from_record,
    scan_record,
)
from benchguard.detection.inventory import (
    DEFAULT_BASELINE,
    ENVIRONMENT_DOTFILES,
    BatchInventory,
    baseline_from_granted_paths,
    build_inventory_rules,
    filter_rules_for_prompt,
    list_home_entries,
)
from benchguard.detection.models import (
    REPORT_SCHEMA_VERSION,
    SCAN_FIELDS,
    SCAN_INCOMPLETE_CATEGORY,
    CheatingReport,
    DismissedFinding,
    Finding,
    Rule,
    ScanCounts,
)
from benchguard.detection.rules import (
    DEFAULT_PROFILE,
    Profile,
    RulesetError,
    load_extra_rules,
    load_profile,
    load_profile_spec,
    load_ruleset,
    profile_baseline,
    profile_names,
    ruleset_digest,
)
from benchguard.detection.summary import describe_findings

__all__ = [
    "DEFAULT_BASELINE",
    "DEFAULT_PROFILE",
    "DEFAULT_RECORD_BUDGET_S",
    "DETECTOR_VERSION",
    "ENVIRONMENT_DOTFILES",
    "MAX_FINDINGS_PER_RULE",
    "REPORT_SCHEMA_VERSION",
    "SCAN_FIELDS",
    "SCAN_INCOMPLETE_CATEGORY",
    "BatchInventory",
    "CheatingReport",
    "Detector",
    "DismissedFinding",
    "Finding",
    "Profile",
    "Rule",
    "RulesetError",
    "ScanCounts",
    "annotate_records",
    "baseline_from_granted_paths",
    "build_inventory_rules",
    "describe_findings",
    "filter_rules_for_prompt",
    "list_home_entries",
    "load_extra_rules",
    "load_profile",
    "load_profile_spec",
    "load_ruleset",
    "profile_baseline",
    "profile_names",
    "report_from_record",
    "ruleset_digest",
    "scan_record",
]
