"""Inputs past the parsers' limits are bad input, never a traceback.

Python's json refuses integers of more than 4,300 digits with ``ValueError`` (not
``JSONDecodeError``), and both json and PyYAML raise ``RecursionError`` on nesting
deeper than the stack. Each reader must turn these into its own clear error.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchguard.harness.agents.config import AgentConfigError, load_agent_file
from benchguard.harness.tasks import load_tasks
from cli.helpers import exited, invoke

HUGE_INT = "9" * 5_000
DEEP_YAML = "[" * 100_000
CHEAT = {"name": "exec", "args": {"command": "cat tasks/x/task.yaml"}, "result": "", "status": "ok"}


def test_scan_sniffs_past_a_first_line_with_a_huge_integer(tmp_path: Path) -> None:
    """Guards against one oversized line making format detection refuse the whole file."""
    log = tmp_path / "runs.jsonl"
    good = json.dumps({"input": "do x", "output": "", "trajectory": [CHEAT]})
    log.write_text(f'{{"n": {HUGE_INT}}}\n{good}\n', "utf-8")
    result = invoke("scan", str(log))
    exited(result, 1)  # the valid record is scanned and flagged
    assert "task-definition" in result.output and "Traceback" not in result.output


def test_inspect_json_with_a_huge_integer_is_a_named_error(tmp_path: Path) -> None:
    log = tmp_path / "log.json"
    log.write_text(f'{{"eval": {{}}, "version": 2, "n": {HUGE_INT}}}', "utf-8")
    result = invoke("scan", "--input-format", "inspect", str(log))
    exited(result, 2)
    assert "log.json" in result.output and "Traceback" not in result.output


def test_dismissals_with_a_huge_integer_or_deep_yaml_are_named_errors(tmp_path: Path) -> None:
    """Guards against a reviewer's malformed dismissal file crashing a rescore."""
    results = tmp_path / "results.json"
    results.write_text(json.dumps([{"folder": "t", "iteration": 1, "trajectory": [CHEAT]}]))
    for name, text in (("d.json", f"[{HUGE_INT}]"), ("d.yaml", DEEP_YAML)):
        dismissals = tmp_path / name
        dismissals.write_text(text, "utf-8")
        result = invoke("score", str(results), "--dismissals", str(dismissals))
        exited(result, 2)
        assert name in result.output and "Traceback" not in result.output


def test_rules_file_nested_too_deeply_is_a_named_error(tmp_path: Path) -> None:
    rules = tmp_path / "rules.yaml"
    rules.write_text(DEEP_YAML, "utf-8")
    log = tmp_path / "runs.jsonl"
    log.write_text(json.dumps({"output": "x", "trajectory": [CHEAT]}) + "\n", "utf-8")
    result = invoke("scan", "--rules", str(rules), str(log))
    exited(result, 2)
    assert "rules.yaml" in result.output and "Traceback" not in result.output


def test_task_file_nested_too_deeply_is_reported_and_skipped(tmp_path: Path) -> None:
    """Guards against one hostile task.yaml stopping the load of the others."""
    tasks = tmp_path / "tasks"
    (tasks / "bad").mkdir(parents=True)
    (tasks / "bad" / "task.yaml").write_text(DEEP_YAML, "utf-8")
    (tasks / "good").mkdir()
    (tasks / "good" / "task.yaml").write_text(
        "name: Good\nprompt: do it\ntimeout: 5\nverification:\n"
        "  - name: ok\n    role: correctness\n    command: ['true']\n    exit_code: 0\n",
        "utf-8",
    )
    loaded = load_tasks(tasks)
    assert [t.folder for t in loaded.tasks] == ["good"]
    assert len(loaded.errors) == 1 and "nested too deeply" in loaded.errors[0]


def test_agent_file_nested_too_deeply_is_a_named_error(tmp_path: Path) -> None:
    agent = tmp_path / "agent.yaml"
    agent.write_text(DEEP_YAML, "utf-8")
    with pytest.raises(AgentConfigError, match="nested too deeply"):
        load_agent_file(agent)
