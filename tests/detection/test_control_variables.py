"""The benchguard profile flags the harness's own control variables in what an agent saw."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import re2

from benchguard.detection import load_profile, scan_record
from benchguard.detection._relax import relax

SRC = Path(__file__).resolve().parents[2] / "src" / "benchguard"
RULE_ID = "harness-environment/content"
# Set by the harness in every agent's environment on purpose: seeing them is no cheat.
HANDED_TO_AGENTS = frozenset({"BENCHGUARD_TRAJECTORY", "BENCHGUARD_RUN_TOKEN"})
_NAME = re.compile(r"\bBENCHGUARD_[A-Z0-9_]*[A-Z0-9]\b")


def _harness_variables() -> set[str]:
    """Every complete ``BENCHGUARD_*`` name the harness, the CLI and the workflows mention."""
    names: set[str] = set()
    for folder in ("harness", "cli", "workflows"):
        for path in sorted((SRC / folder).rglob("*.py")):
            names.update(_NAME.findall(path.read_text(encoding="utf-8")))
    return names


def _record(result: str) -> dict[str, Any]:
    step = {"name": "exec", "args": {"command": "env"}, "result": result, "status": "completed"}
    return {"input": "Sum the numbers.", "output": "done", "trajectory": [step]}


def _content_rule_fires(text: str) -> bool:
    report = scan_record(_record(text), load_profile("benchguard"))
    return RULE_ID in {finding.rule for finding in report.findings}


def test_every_control_variable_the_harness_reads_is_flagged() -> None:
    """Guards against a control variable (BENCHGUARD_INVENTORY_ROOTS, the agent home...)
    the harness reads but the marker rule forgot: an agent that dumped the harness's
    environment would read clean. Found by reading the source, so a new variable
    cannot be added without this test noticing."""
    variables = _harness_variables()
    assert {"BENCHGUARD_INVENTORY_ROOTS", "BENCHGUARD_AGENT_HOME"} <= variables
    for name in sorted(variables - HANDED_TO_AGENTS):
        assert _content_rule_fires(f"{name}=/srv/x\nPATH=/usr/bin"), name


@pytest.mark.parametrize("name", sorted(HANDED_TO_AGENTS))
def test_variables_handed_to_every_agent_stay_clean(name: str) -> None:
    """Guards against flagging an honest agent for printing its own environment."""
    assert not _content_rule_fires(f"{name}=/tmp/run/trajectory.jsonl")


@pytest.mark.parametrize(
    "text",
    ["BENCHGUARD_INVENTORY_ROOTSX=1", "MY_BENCHGUARD_AGENT_HOME=1", "BENCHGUARD_AGENT_HOMES"],
)
def test_a_longer_name_is_not_a_control_variable(text: str) -> None:
    """Guards against the alternation matching inside a longer identifier."""
    assert not _content_rule_fires(text)


def test_the_marker_patterns_stay_safe_and_prefilterable() -> None:
    """Guards against the marker rule dropping out of the RE2 prefilter (every record
    would then pay for it with the slow engine) or failing the pattern safety check
    (load_profile runs it on every pattern)."""
    [rule] = [r for r in load_profile("benchguard") if r.id == RULE_ID]
    for pattern in rule.patterns:
        relaxed = re2.compile(relax(pattern))
        for name in sorted(_harness_variables() - HANDED_TO_AGENTS):
            if re.search(pattern, name):
                assert relaxed.search(name), (pattern, name)
