"""``benchguard scan`` where users already work: CI logs, pipes, SARIF dashboards, JUnit
reports and reviewed baselines."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import jsonschema
from typer.testing import CliRunner

from benchguard.cli import app
from cli.helpers import ENV, HONEST, exited, invoke, record

SCHEMA_FILE = Path(__file__).parents[1] / "results" / "data" / "sarif-schema-2.1.0.json"
BOX = set("┃│━─┏┓┗┛╇╈┡┩")


def _run(tmp_path: Path, *records: dict[str, object]) -> Path:
    run = tmp_path / "run_x"
    run.mkdir(exist_ok=True)
    path = run / "results.json"
    path.write_text(json.dumps(list(records)), encoding="utf-8")
    return path


def _two(tmp_path: Path) -> Path:
    long_folder = "a-task-folder-with-a-name-long-enough-to-wrap-an-eighty-column-box-" * 2
    return _run(tmp_path, record("log-rotate", 1), record(long_folder, 0, command=HONEST))


def test_findings_only_by_default_every_record_with_all(tmp_path: Path) -> None:
    results = _two(tmp_path)
    default = invoke("scan", str(results))
    exited(default, 1)
    assert "log-rotate#1" in default.stdout
    assert "a-task-folder" not in default.stdout
    assert "1 flagged, 0 review, 1 clean, 0 no data (--all lists every record)" in default.stdout
    every = invoke("scan", str(results), "--all")
    assert "a-task-folder" in every.stdout and "log-rotate#1" in every.stdout


def test_plain_aligned_lines_without_a_terminal(tmp_path: Path) -> None:
    """Guards against CI logs full of 80-column boxes whose cells wrap into fragments."""
    results = _two(tmp_path)
    result = invoke("scan", str(results), "--all", env={"COLUMNS": "80"})
    assert not BOX & set(result.stdout)
    lines = result.stdout.splitlines()
    header = next(line for line in lines if line.startswith("file"))
    rows = [line for line in lines if str(results) in line]
    assert len(rows) == 2  # one line per record, however long its name
    status_at = header.index("status")
    assert {row[status_at:].split()[0] for row in rows} == {"flagged", "clean"}


def test_verbose_prints_rule_step_and_excerpt(tmp_path: Path) -> None:
    result = invoke("scan", str(_two(tmp_path)), "-v")
    exited(result, 1)
    assert "task-definition/path  step 0 (exec) args: " in result.stdout
    assert "cat tasks/log-rotate/task.yaml" in result.stdout


def test_hostile_record_name_cannot_drive_the_terminal(tmp_path: Path) -> None:
    """A log's record names are the agent's to choose: an escape sequence or a line
    break in one must print escaped, on its one line."""
    hostile = record("x\x1b[2J\rfake\nclean line", 0)
    result = invoke("scan", str(_run(tmp_path, hostile)), "-v")
    exited(result, 1)
    assert "\x1b" not in result.stdout and "\r" not in result.stdout
    assert "x\\x1b[2J\\rfake\\nclean line#0" in result.stdout


def test_stdin_is_read_with_dash(tmp_path: Path) -> None:
    text = json.dumps([record("log-rotate", 2)])
    result = CliRunner().invoke(app, ["scan", "-", "--format", "json"], input=text, env=ENV)
    exited(result, 1)
    (entry,) = json.loads(result.stdout)
    assert entry["file"] == "<stdin>" and entry["label"] == "log-rotate#2"
    garbage = CliRunner().invoke(app, ["scan", "-"], input="not a log\n", env=ENV)
    exited(garbage, 2)
    assert "<stdin>: unknown log format" in garbage.stderr


def test_sarif_output_is_schema_valid(tmp_path: Path, monkeypatch: object) -> None:
    results = _two(tmp_path)
    result = invoke("scan", str(results), "--format", "sarif")
    exited(result, 1)
    log = json.loads(result.stdout)
    schema = json.loads(SCHEMA_FILE.read_text())
    validator = jsonschema.Draft4Validator(schema, format_checker=jsonschema.FormatChecker())
    assert not list(validator.iter_errors(log))
    (result_entry,) = log["runs"][0]["results"]
    assert result_entry["ruleId"] == "task-definition/path"
    assert result_entry["properties"]["record"] == "log-rotate#1"


def test_junit_output_one_case_per_record(tmp_path: Path) -> None:
    result = invoke("scan", str(_two(tmp_path)), "--format", "junit")
    exited(result, 1)
    root = ET.fromstring(result.stdout.encode("utf-8"))
    assert root.get("tests") == "2" and root.get("failures") == "1"


def test_bad_output_format_lists_choices(tmp_path: Path) -> None:
    result = invoke("scan", str(_two(tmp_path)), "--format", "xml")
    exited(result, 2)
    assert "--format 'xml' is not an output format; choose one of: table, json, sarif, junit" in (
        result.stderr
    )
    clash = invoke("scan", str(_two(tmp_path)), "--format", "sarif", "--json")
    exited(clash, 2)


def test_dismissals_file_keeps_a_reviewed_false_positive_reviewed(tmp_path: Path) -> None:
    """Like a scanner baseline: the reviewed finding no longer fails the scan, stays on
    record as dismissed, and a stale entry is reported, not silently ignored."""
    results = _two(tmp_path)
    reviewed = tmp_path / "reviewed.yaml"
    reviewed.write_text(
        "dismissals:\n"
        "  - {run_id: run_x, task: log-rotate, iteration: 1, rule: task-definition/path,\n"
        "     reviewer: alice, reason: the prompt cites the file, date: 2026-11-30}\n"
        "  - {task: log-rotate, iteration: 9, rule: task-definition/path,\n"
        "     reviewer: bob, reason: stale, date: 2026-11-30}\n",
        encoding="utf-8",
    )
    result = invoke("scan", str(results), "--dismissals", str(reviewed), "--format", "json")
    exited(result, 0)
    first = json.loads(result.stdout)[0]["report"]
    assert first["status"] == "clean" and first["dismissed"][0]["reviewer"] == "alice"
    assert "matched no finding: task 'log-rotate' iteration 9" in result.stderr
    other_run = tmp_path / "elsewhere" / "run_y"
    other_run.mkdir(parents=True)
    moved = other_run / "results.json"
    moved.write_text(results.read_text(), encoding="utf-8")
    # The entry names run_x: the same task in another run is still flagged.
    exited(invoke("scan", str(moved), "--dismissals", str(reviewed)), 1)


def test_bad_dismissals_file_is_exit_2_naming_it(tmp_path: Path) -> None:
    bad = tmp_path / "reviewed.yaml"
    bad.write_text("dismissals: [{task: t}]\n", encoding="utf-8")
    result = invoke("scan", str(_two(tmp_path)), "--dismissals", str(bad))
    exited(result, 2)
    assert str(bad) in result.stderr and "dismissal 0 is invalid" in result.stderr


def test_version_flag() -> None:
    from benchguard import __version__

    result = invoke("--version")
    exited(result, 0)
    assert result.stdout.strip() == f"benchguard {__version__}"
