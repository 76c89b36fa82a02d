"""One detector object owns its compiled rules, caches and budget (no module globals
keyed by id()): detectors share nothing, and a scan depends only on its inputs."""

from __future__ import annotations

from benchguard.detection import Detector, load_profile, scan_record
from benchguard.detection.shell import ShellReader


def _record(command: str) -> dict[str, object]:
    return {"output": "x", "trajectory": [{"name": "sh", "args": {"command": command}}]}


def test_a_detector_gives_the_module_functions_verdicts_and_keeps_its_own_plans() -> None:
    rules = load_profile("devops-bench")
    first, second = Detector(), Detector()
    record = _record("cat ~/devops-bench/controls/opa/oracle.sh")
    assert first.scan(record, rules) == scan_record(record, rules) == second.scan(record, rules)
    assert first.plan(rules) is first.plan(rules)
    assert first.plan(rules) is not second.plan(rules)


def test_the_detectors_reader_and_budget_are_its_own() -> None:
    """A detector built for a sandbox home reads its literal paths; the default one
    does not know that home."""
    rules = load_profile("devops-bench")
    record = _record("cat /sandbox/home/bench.env")
    sandboxed = Detector(reader=ShellReader(home="/sandbox/home"))
    assert sandboxed.scan(record, rules).status == "flagged"
    assert Detector().scan(record, rules).status == "clean"
    spent = Detector(time_budget_s=0.0).scan(record, rules)
    assert spent.incomplete and spent.status == "flagged"
