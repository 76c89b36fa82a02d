"""One detector object owns its compiled rules, caches and budget (no module globals
keyed by id()): detectors share nothing, and a scan depends only on its inputs."""

from __future__ import annotations

import time
from typing import Any

import pytest

from benchguard.detection import Detector, Rule, load_profile, ruleset_digest, scan_record
from benchguard.detection import detector as detector_module
from benchguard.detection.shell import ShellReader
from benchguard.record.rules import ScanRulesets, as_ruleset
from benchguard.record.rulesets import RulesetTable


def _record(command: str) -> dict[str, object]:
    return {"output": "x", "trajectory": [{"name": "sh", "args": {"command": command}}]}


def test_a_detector_gives_the_module_functions_verdicts_and_keeps_its_own_plans() -> None:
    rules = load_profile("devops-bench")
    first, second = Detector(), Detector()
    record = _record("cat ~/devops-bench/controls/opa/oracle.sh")
    pair = ScanRulesets.of(rules)
    assert first.scan(record, pair) == scan_record(record, rules) == second.scan(record, pair)
    assert first.plan(rules) is first.plan(rules)
    assert first.plan(rules) is not second.plan(rules)


def test_the_detectors_reader_and_budget_are_its_own() -> None:
    """A detector built for a sandbox home reads its literal paths; the default one
    does not know that home."""
    rules = load_profile("devops-bench")
    record = _record("cat /sandbox/home/bench.env")
    sandboxed = Detector(reader=ShellReader(home="/sandbox/home"))
    assert sandboxed.scan(record, ScanRulesets.of(rules)).status == "flagged"
    assert Detector().scan(record, ScanRulesets.of(rules)).status == "clean"
    spent = Detector(time_budget_s=0.0).scan(record, ScanRulesets.of(rules))
    assert spent.incomplete and spent.status == "flagged"


def test_plans_are_keyed_by_the_rulesets_digest_not_by_the_rule_objects() -> None:
    """Equal rules built as new objects (a rule file read twice, a stored ruleset read
    back) share one plan; a rule that differs in one pattern gets its own."""
    rules = load_profile("devops-bench")
    copies = tuple(Rule.model_validate(rule.model_dump()) for rule in rules)
    assert all(a is not b for a, b in zip(rules, copies, strict=True))
    detector = Detector()
    assert detector.plan(rules) is detector.plan(copies)
    assert as_ruleset(copies).digest == ruleset_digest(rules)
    changed = (rules[0].model_copy(update={"patterns": ("other-pattern",)}), *rules[1:])
    assert detector.plan(changed) is not detector.plan(rules)
    assert as_ruleset(changed).digest != as_ruleset(rules).digest


def test_a_copied_rule_is_digested_as_what_it_now_says() -> None:
    """The canonical JSON a rule caches for its digest is never carried to a copy that
    changes it (a stale digest would let two different rulesets share a plan)."""
    rule = load_profile("devops-bench")[0]
    _ = rule.canonical_json
    renamed = rule.model_copy(update={"id": "renamed/path"})
    assert '"id":"renamed/path"' in renamed.canonical_json
    assert ruleset_digest([renamed]) == ruleset_digest([Rule.model_validate(renamed.model_dump())])


def test_annotated_reports_of_equal_rulesets_name_one_table_entry() -> None:
    """Two records scanned with equal (not identical) dynamic rulesets name the same
    digest, and the caller's table holds the ruleset once (nothing keyed by identity)."""
    inventory = load_profile("devops-bench")[:3]
    copies = [Rule.model_validate(rule.model_dump()) for rule in inventory]
    records: list[dict[str, Any]] = [_record("ls"), _record("pwd")]
    rulesets = [inventory, copies]
    table = RulesetTable()
    Detector().annotate(records, (), dynamic_rules_for=lambda i, _r: rulesets[i], rulesets=table)
    first, second = (r["cheating_report"]["dynamic_rules_ref"] for r in records)
    assert first == second == ruleset_digest(inventory)
    assert len(table) == 1 and table.stored(first) == [r.model_dump(mode="json") for r in inventory]


def test_a_typed_record_scans_as_its_json_and_is_never_edited() -> None:
    """``Detector.scan`` takes the typed run record: read by attribute, it gives the
    verdict its stored JSON gives, and neither input is changed by the scan."""
    from benchguard.records import parse_record

    rules = ScanRulesets.of(load_profile("devops-bench"))
    raw: dict[str, Any] = {
        "folder": "t",
        "input": "fix it",
        "output": "done",
        "transcript_truncated": True,
        "system_audit": {"complete": False},
        "trajectory": [
            {"name": "sh", "args": {"command": "cat ~/devops-bench/controls/opa/oracle.sh"}},
            {"name": "sh", "args": {"command": "ls"}, "result": "a\nb"},
        ],
    }
    typed = parse_record(raw)
    before = typed.model_dump(mode="json")
    as_json = typed.to_json()
    report = Detector().scan(typed, rules)
    assert report == Detector().scan(as_json, rules)
    assert report.status == "flagged" and report.incomplete
    assert typed.model_dump(mode="json") == before
    assert as_json == typed.to_json()


def test_the_budget_counts_the_scans_own_cpu_not_the_wall_clock(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A verdict never depends on the machine's load: a scan descheduled for longer than
    its whole budget (a neighbour's burst, simulated by sleeping inside the step reading)
    still finishes complete, and equals the unhurried scan. On the wall clock it read
    incomplete (flagged) instead."""
    rules = load_profile("devops-bench")
    record = _record("cat ~/devops-bench/controls/opa/oracle.sh")
    unhurried = Detector().scan(record, ScanRulesets.of(rules))
    real_read = detector_module.read_entry

    def descheduled(*args: Any, **kwargs: Any) -> Any:
        time.sleep(0.3)
        return real_read(*args, **kwargs)

    monkeypatch.setattr(detector_module, "read_entry", descheduled)
    slow = Detector(time_budget_s=0.2).scan(record, ScanRulesets.of(rules))
    assert not slow.incomplete
    assert slow == unhurried and slow.status == "flagged"


def test_building_the_plan_is_not_charged_to_the_first_record(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The plan depends on the rules alone: however long a detector's first record waits
    for it (a large inventory compiled on a slow machine), that record reads as the
    second one does."""
    rules = load_profile("devops-bench")
    record = _record("ls")
    real_build = detector_module._build_plan

    def costly(*args: Any, **kwargs: Any) -> Any:
        start = time.thread_time()
        while time.thread_time() - start < 0.3:  # CPU spent on the plan, not the record
            pass
        return real_build(*args, **kwargs)

    monkeypatch.setattr(detector_module, "_build_plan", costly)
    fresh = Detector(time_budget_s=0.2)
    first = fresh.scan(record, ScanRulesets.of(rules))
    assert not first.incomplete and first.status == "clean"
    assert first == fresh.scan(record, ScanRulesets.of(rules))
