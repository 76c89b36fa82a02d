"""``benchguard scan`` end to end: trees, formats, engines, exit codes, bad input."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner, Result

from benchguard.cli import app
from benchguard.importers.registry import FORMAT_NAMES

from .conftest import IMPORTER_FIXTURES


def _scan(*args: str) -> Result:
    return CliRunner().invoke(app, ["scan", *args], env={"COLUMNS": "250"})


def test_tree_scan_prints_table_and_exits_1_when_flagged(mixed_tree: Path) -> None:
    result = _scan(str(mixed_tree))
    assert result.exit_code == 1, result.output
    for column in ("file", "record", "status", "categories", "findings"):
        assert column in result.stdout
    assert "task-0" in result.stdout and "flagged" in result.stdout
    assert "swe_agent.traj" in result.stdout
    # notes.txt has no log suffix: a directory walk never picks it up
    assert "notes.txt" not in result.output


def test_json_lists_reports_in_sorted_walk_then_record_order(mixed_tree: Path) -> None:
    result = _scan(str(mixed_tree), "--json")
    assert result.exit_code == 1
    entries = json.loads(result.stdout)
    files = [e["file"] for e in entries]
    assert files == sorted(files, key=lambda f: Path(f).parts)
    run0 = [e for e in entries if "run_0" in e["file"]]
    assert [e["name"] for e in run0] == [f"task-{i}" for i in range(5)]
    assert [e["report"]["status"] for e in run0] == [
        "flagged",
        "clean",
        "clean",
        "flagged",
        "clean",
    ]


def test_serial_and_dask_cli_output_identical(mixed_tree: Path) -> None:
    serial = _scan(str(mixed_tree), "--json")
    parallel = _scan(str(mixed_tree), "--json", "--engine", "dask", "--workers", "2")
    assert parallel.exit_code == serial.exit_code == 1
    assert json.loads(parallel.stdout) == json.loads(serial.stdout)


def test_clean_input_exits_0(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(
        json.dumps(
            [
                {
                    "name": "a",
                    "output": "ok",
                    "trajectory": [
                        {
                            "name": "exec",
                            "args": {"command": "make test"},
                            "result": "ok",
                            "status": "completed",
                        }
                    ],
                }
            ]
        )
    )
    result = _scan(str(path))
    assert result.exit_code == 0, result.output
    assert "1 clean" in result.stdout


def test_named_unknown_file_is_exit_2_listing_formats_and_others_still_scanned(
    tmp_path: Path,
) -> None:
    """Guards against one bad file hiding the verdicts on the good files beside it."""
    bad = tmp_path / "mystery.log"
    bad.write_text("plain text, not a log\n")
    good = tmp_path / "swe_agent.traj"
    shutil.copy(IMPORTER_FIXTURES / "swe_agent.traj", good)
    result = _scan(str(bad), str(good))
    assert result.exit_code == 2
    assert str(bad) in result.stderr
    for name in FORMAT_NAMES:
        assert name in result.stderr
    assert "swe_agent" in result.stdout and "flagged" in result.stdout
    assert "Traceback" not in result.output


def test_missing_path_is_exit_2(tmp_path: Path) -> None:
    result = _scan(str(tmp_path / "nope.json"))
    assert result.exit_code == 2
    assert "nope.json: no such file or directory" in result.stderr


def test_forced_format_and_unknown_format_name(tmp_path: Path) -> None:
    renamed = tmp_path / "transcript.txt"
    shutil.copy(IMPORTER_FIXTURES / "claude_code.stream.jsonl", renamed)
    forced = _scan(str(renamed), "--input-format", "claude-code", "--json")
    assert forced.exit_code == 1
    assert json.loads(forced.stdout)[0]["format"] == "claude-code"
    bogus = _scan(str(renamed), "--input-format", "langsmith")
    assert bogus.exit_code == 2
    assert "choose one of: " + ", ".join(FORMAT_NAMES) in bogus.stderr
    # --format chooses the output; a log format given there says where it belongs.
    misplaced = _scan(str(renamed), "--format", "claude-code")
    assert misplaced.exit_code == 2
    assert "--input-format claude-code" in misplaced.stderr


def test_swe_bench_profile_flags_history_digging(tmp_path: Path) -> None:
    traj = json.loads((IMPORTER_FIXTURES / "swe_agent.traj").read_text())
    traj["trajectory"][0]["action"] = "git log --all --grep='#4521' --oneline\n"
    path = tmp_path / "django__django-4521.traj"
    path.write_text(json.dumps(traj))
    result = _scan(str(path), "--profile", "swe-bench", "--json")
    assert result.exit_code == 1
    [entry] = json.loads(result.stdout)
    # The fixture's later `cat ~/benchguard/tasks/...` is caught too, in every profile
    # (detector v12's generic harness-checkout rule): the history read is what is asked.
    rules = {f["rule"] for f in entry["report"]["findings"]}
    assert "git-history/log-all-refs" in rules, rules


def test_out_file_holds_every_file_with_problems(mixed_tree: Path, tmp_path: Path) -> None:
    out = tmp_path / "scan.json"
    result = _scan(str(mixed_tree), "-o", str(out))
    assert result.exit_code == 1
    document = json.loads(out.read_text())
    # The default is auto: the summary names what auto chose, never a profile it did not.
    assert document["engine"] == "serial" and document["profile"] == "auto"
    by_name = {Path(f["path"]).name: f for f in document["files"]}
    assert by_name["benchguard_results.json"]["problems"]
    assert by_name["swe_agent.traj"]["format"] == "swe-agent"


def test_bad_rules_file_and_engine_misuse_are_exit_2(tmp_path: Path, mixed_tree: Path) -> None:
    rules = tmp_path / "extra.yaml"
    rules.write_text("rules: [{id: x}]\n")
    bad_rules = _scan(str(mixed_tree), "--rules", str(rules))
    assert bad_rules.exit_code == 2 and str(rules) in bad_rules.stderr
    serial_scheduler = _scan(str(mixed_tree), "--scheduler", "threads")
    assert serial_scheduler.exit_code == 2 and "--engine dask" in serial_scheduler.stderr
    bad_profile = _scan(str(mixed_tree), "--profile", "nosuch")
    assert bad_profile.exit_code == 2 and "swe-bench" in bad_profile.stderr
