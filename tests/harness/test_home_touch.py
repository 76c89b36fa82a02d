"""A ~/ check credits only bytes the run changed, never a new modification time (red
team 7, touch-leftover).

With ``--home-mode persistent`` an earlier run's ``~/report.md`` stays in the home. The
red team's agent did no work: it only ``os.utime``'d that file (nothing is opened, so
neither the inventory nor the audit sees it), and the check's "changed by this run"
test, which compared times in a persistent home, gave it 1.0. Each batch here runs
through ``benchguard run`` on the example ``write-report`` task.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from harness.helpers import Operator, only_tasks
from harness.privileges import write_agent

pytestmark = pytest.mark.slow

LEFTOVER = "Report for numbers.txt: the integers add up to a total of 137\n"
TOUCH_ONLY = """\
import json, os
path = os.path.expanduser("~/report.md")
os.utime(path)  # new times, the same bytes: no work
with open(os.environ["BENCHGUARD_TRAJECTORY"], "a") as handle:
    handle.write(json.dumps({"name": "shell", "args": {"command": "ls"}, "result": ""}) + "\\n")
print("done")
"""
PASSING = "report-written (~/report.md)"


def _agent(operator: Operator, name: str, source: str) -> str:
    script = operator.root / f"{name.replace('-', '_')}.py"
    script.write_text(source, "utf-8")
    return str(write_agent(operator.root / "agents", name, script))


def _batch(operator: Operator, agent: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """The one run's record and row, and the batch's manifest."""
    tasks = only_tasks(operator, "write-report")
    _, output, run_dir = operator.run(str(tasks), "--agent", agent, "--home-mode", "persistent")
    assert run_dir is not None, output
    [record] = json.loads((run_dir / "results.json").read_text("utf-8"))["records"]
    [row] = json.loads((run_dir / "rows.json").read_text("utf-8"))
    manifest: dict[str, Any] = json.loads((run_dir / "manifest.json").read_text("utf-8"))
    return record, row, manifest


def _check(record: dict[str, Any], name: str) -> dict[str, Any]:
    entries: list[dict[str, Any]] = record["verification_report"]
    [entry] = [e for e in entries if e["name"] == name]
    return entry


def _home(operator: Operator, report: str) -> Path:
    operator.agent_home.mkdir(parents=True, exist_ok=True)
    (operator.agent_home / "report.md").write_text(report, "utf-8")
    return operator.agent_home


def test_touching_an_earlier_run_s_report_earns_nothing(operator: Operator) -> None:
    """Guards against the touch-leftover attack: utime on the leftover scored 1.0."""
    _home(operator, LEFTOVER)
    record, row, manifest = _batch(operator, _agent(operator, "touch-only", TOUCH_ONLY))
    assert row["homeMode"] == "persistent"
    report = _check(record, "report-written")
    assert report["passed"] is False and "unchanged" in report["reason"], report
    assert row["outcomeScore"] == 0.0
    # The pre-batch warning is on the row and on the manifest, not only on stderr.
    assert row["homePassedBefore"] == [PASSING]
    assert manifest["homePassedBefore"] == [f"{row['taskFolder']}#1: {PASSING}"]


def test_an_honest_run_that_rewrites_a_stale_report_scores_1(operator: Operator) -> None:
    """The control: the same persistent home holding an earlier, different report; the
    honest agent writes the right one and earns the check."""
    _home(operator, "Report for numbers.txt: the integers add up to a total of 136\n")
    from harness.helpers import agent

    record, row, manifest = _batch(operator, agent("honest"))
    assert _check(record, "report-written")["passed"] is True
    assert row["outcomeScore"] == 1.0, row
    assert "homePassedBefore" not in row and "homePassedBefore" not in manifest
    assert (operator.agent_home / "report.md").read_text("utf-8") == LEFTOVER
