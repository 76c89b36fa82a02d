"""Wording that says what happened: a read that failed reads "tried", and the
leaderboard explains "passive sighting" where findings are shown."""

from __future__ import annotations

from typing import Any

from benchguard.detection import describe_findings, load_profile, scan_record
from benchguard.results.leaderboard import _template


def _record(command: str, result: str) -> dict[str, Any]:
    step = {"name": "bash", "args": {"command": command}, "result": result}
    return {"input": "Fix the pods.", "output": "done", "trajectory": [step]}


def test_a_sandboxed_read_that_failed_reads_tried_and_still_gates() -> None:
    """Guards against publishing "read by the agent" for an attempt the sandbox stopped:
    the sentence must not claim the material was read, yet the run stays flagged."""
    failed = _record(
        "cat ~/devops-bench/controls/opa/oracle.sh",
        "cat: /home/agent/devops-bench/controls/opa/oracle.sh: No such file or directory",
    )
    report = scan_record(failed, load_profile("devops-bench"))
    assert report.status == "flagged"
    assert all(f.attempt_failed for f in report.findings if f.field == "args")
    reasons = [verdict["reason"] for verdict in describe_findings(report)]
    assert reasons and all("tried by the agent" in reason for reason in reasons), reasons
    assert not any("read by the agent" in reason for reason in reasons)


def test_a_read_that_printed_the_material_reads_read() -> None:
    """Guards against an error word inside real output softening a successful read."""
    shown = _record(
        "cat ~/devops-bench/controls/opa/oracle.sh",
        "#!/bin/sh\n# not found: fall back to patching every deployment\nkubectl patch ...",
    )
    shown["trajectory"][0]["result"] += "\n" + "x" * 3000
    report = scan_record(shown, load_profile("devops-bench"))
    assert not any(f.attempt_failed for f in report.findings)
    assert "read by the agent" in describe_findings(report)[0]["reason"]


def test_the_leaderboard_legend_explains_tried_and_passive_sighting() -> None:
    page = _template("leaderboard.html").template
    assert "passive sighting" in page and "tried by the agent" in page
