"""Foreign logs all the way to the leaderboard: ``score`` reads every format ``scan``
reads, names the setup from the log, and its rows aggregate and publish."""

from __future__ import annotations

import json
import shutil
import xml.etree.ElementTree as ET
from pathlib import Path

from cli.helpers import exited, invoke, one_line

FIXTURES = Path(__file__).parents[1] / "importers" / "fixtures"


def test_inspect_json_is_scored_and_published(tmp_path: Path) -> None:
    log = tmp_path / "logs" / "inspect_log.json"
    log.parent.mkdir()
    shutil.copy(FIXTURES / "inspect_log.json", log)
    result = invoke("score", str(log))
    exited(result, 1)  # the sample is gated, as scan exits 1 for it
    out = log.parent / "inspect_log.json.benchguard"
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["model"] == "openai/gpt-4o-mini" and manifest["harness"] == "inspect"
    assert manifest["setupId"] == "openai-gpt-4o-mini-inspect-fix-login"
    assert manifest["runId"] == "inspect_log.json"
    (row,) = json.loads((out / "rows.json").read_text())
    assert row["catastrophic"] is True and row["outcomeScore"] == 0.0
    exited(invoke("aggregate", str(tmp_path / "logs"), "-o", str(tmp_path / "board")), 0)
    board = invoke("leaderboard", str(tmp_path / "board" / "rows.json"), "--json")
    exited(board, 0)
    (standing,) = json.loads(board.stdout)["standings"]
    assert standing["setupId"] == "openai-gpt-4o-mini-inspect-fix-login"
    assert standing["gatedRuns"] == 1


def test_reviewed_dismissal_applies_to_a_foreign_record(tmp_path: Path) -> None:
    log = tmp_path / "inspect_log.json"
    shutil.copy(FIXTURES / "inspect_log.json", log)
    first = invoke("score", str(log), "--format", "json")
    exited(first, 1)
    ((entry,),) = [e["rows"] for e in json.loads(first.stdout)]
    task = entry["taskFolder"]
    results = json.loads((tmp_path / "inspect_log.json.benchguard" / "results.json").read_text())
    findings = results["records"][0]["cheating_report"]["findings"]
    rules = sorted({f["rule"] for f in findings})
    reviewed = tmp_path / "reviewed.json"
    reviewed.write_text(
        json.dumps(
            [
                {
                    "task": task,
                    "iteration": 0,
                    "rule": rule,
                    "reviewer": "alice",
                    "reason": "the prompt cites it",
                    "date": "2026-11-30",
                }
                for rule in rules
            ]
        )
    )
    again = invoke("score", str(log), "--dismissals", str(reviewed), "--format", "json")
    exited(again, 0)
    ((row,),) = [e["rows"] for e in json.loads(again.stdout)]
    assert row["catastrophic"] is False and row["dismissedFindings"] == len(findings)


def test_score_prints_sarif_and_junit(tmp_path: Path) -> None:
    log = tmp_path / "verifiers_traces.jsonl"
    shutil.copy(FIXTURES / "verifiers_traces.jsonl", log)
    sarif = invoke("score", str(log), "--format", "sarif")
    exited(sarif, 1)  # whatever the output format, a flagged record exits 1
    document = json.loads(sarif.stdout)
    uris = {
        r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"]
        for r in document["runs"][0]["results"]
    }
    assert uris and all(u.endswith("verifiers_traces.jsonl") for u in uris)
    junit = invoke("score", str(log), "--format", "junit")
    exited(junit, 1)
    root = ET.fromstring(junit.stdout.encode("utf-8"))
    assert root.get("tests") == "2" and root.get("failures") == "1"


def test_unreadable_log_named_to_score_is_exit_2(tmp_path: Path) -> None:
    bad = tmp_path / "x.eval"
    bad.write_bytes(b"PK\x03\x04not really a zip")
    result = invoke("score", str(bad))
    exited(result, 2)
    assert str(bad) in result.stderr and "Traceback" not in result.output


def test_dismiss_names_a_finding_of_a_scored_foreign_log(tmp_path: Path) -> None:
    log = tmp_path / "inspect_log.json"
    shutil.copy(FIXTURES / "inspect_log.json", log)
    args = ["--iteration", "0", "--rule", "task-definition/path", "--reviewer", "alice",
            "--reason", "cited", "--date", "2026-11-30"]  # fmt: skip
    early = invoke("dismiss", str(log), "--task", "fix_login/login-1", *args)
    exited(early, 2)
    assert "not scored yet" in one_line(early.output)
    exited(invoke("score", str(log)), 1)
    exited(invoke("dismiss", str(log), "--task", "fix_login/login-1", *args), 0)
    reviewed = tmp_path / "dismissals.yaml"
    assert "run_id: inspect_log.json" in reviewed.read_text()
    rescored = invoke("score", str(log), "--dismissals", str(reviewed), "--format", "json")
    exited(rescored, 1)  # one rule dismissed, another still gates
    ((row,),) = [e["rows"] for e in json.loads(rescored.stdout)]
    assert row["dismissedFindings"] >= 1
