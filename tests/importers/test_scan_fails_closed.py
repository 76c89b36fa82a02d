"""`benchguard scan` fails closed on its input: what it could not read is never passed
over with exit 0. Each case is one the issue found exiting 0."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchguard.cli import app
from importers.conftest import FIXTURES
from importers.zipwriter import DEFLATE, eval_members, write_zip

ENV = {"NO_COLOR": "1", "COLUMNS": "200"}


def _scan(*args: str) -> tuple[int, list[dict[str, object]], str]:
    result = CliRunner().invoke(app, ["scan", *args, "--json"], env=ENV)
    return result.exit_code, json.loads(result.stdout or "[]"), result.stderr


def test_an_eval_whose_samples_are_corrupt_is_incomplete_and_lists_them(tmp_path: Path) -> None:
    """Guards against a cheater corrupting its own samples in an .eval so the scan skips
    them with a warning and exits 0 over the rest."""
    members = eval_members(FIXTURES / "inspect_eval")
    members["samples/login-2_epoch_1.json"] = b'{"id": "login-2", "messages": [tr'
    members["samples/login-3_epoch_1.json"] = b"[1, 2, 3]"
    path = tmp_path / "2026-02-18T08-41-07_fix-login_Xb4r2Qz9.eval"
    write_zip(path, members, DEFLATE)
    code, entries, stderr = _scan(str(path), "--profile", "inspect")
    skipped = [e for e in entries if e["report"] is None]
    assert code in (1, 3), stderr
    assert len(skipped) == 2, entries
    assert all("login-2" in str(e["skipped"]) or "login-3" in str(e["skipped"]) for e in skipped)
    # With the readable sample clean, the skip alone decides: never exit 0.
    clean_members = {k: v for k, v in members.items() if "login-1" not in k}
    clean = tmp_path / "2026-02-18T08-41-07_only-corrupt_Xb4r2Qz9.eval"
    write_zip(clean, clean_members, DEFLATE)
    code, entries, stderr = _scan(str(clean), "--profile", "inspect")
    assert code == 3, stderr


def test_a_directory_holding_only_an_unreadable_file_is_incomplete(tmp_path: Path) -> None:
    """Guards against a tree whose only log cannot be read reading as a clean scan."""
    (tmp_path / "logs").mkdir()
    (tmp_path / "logs" / "run.json").write_text('{"not": "a log we read"}', "utf-8")
    code, entries, _ = _scan(str(tmp_path / "logs"))
    assert code == 3
    assert [e["skipped"] for e in entries] == ["not a log format we read; skipped"]


def test_an_empty_directory_is_incomplete_not_clean(tmp_path: Path) -> None:
    """Guards against a typo'd or emptied log directory passing a CI gate with exit 0."""
    (tmp_path / "empty").mkdir()
    result = CliRunner().invoke(app, ["scan", str(tmp_path / "empty")], env=ENV)
    assert result.exit_code == 3, result.output
    assert "no log files found" in result.output
    assert "INCOMPLETE" in result.stdout


def test_the_summary_names_profile_and_ruleset_and_warns_about_uncovered_material(
    tmp_path: Path,
) -> None:
    """An Inspect log scanned with the benchguard profile says so: its prior logs and
    answers are Inspect material the benchguard profile does not know. The default
    (auto) recognises the Inspect log and names why."""
    path = tmp_path / "2026-02-18T08-41-07_fix-login_Xb4r2Qz9.eval"
    write_zip(path, eval_members(FIXTURES / "inspect_eval"), DEFLATE)
    result = CliRunner().invoke(app, ["scan", str(path), "--profile", "benchguard"], env=ENV)
    assert "profile benchguard, ruleset sha256:" in result.stdout
    assert "--profile inspect" in result.stderr
    auto = CliRunner().invoke(app, ["scan", str(path)], env=ENV)
    assert "profile inspect (an Inspect log), generic (every benchmark)" in auto.stdout
    assert "--profile inspect" not in auto.stderr


@pytest.mark.parametrize(
    ("fixture", "input_format"),
    [
        ("claude_code.stream.jsonl", "claude-code"),
        ("agent_clis/claude-code-2.1.332-session.jsonl", "claude-code"),
        ("agent_clis/codex-0.171.0-exec.jsonl", "codex"),
        ("agent_clis/codex-0.171.0-rollout.jsonl", "codex"),
    ],
)
def test_a_broken_line_of_an_agent_cli_log_is_incomplete_not_clean(
    tmp_path: Path, fixture: str, input_format: str
) -> None:
    """Guards against a cheater hiding its one telling tool call on a line that is not
    valid JSON (or a CLI killed mid-line): the line's content is lost, so the scan says
    so and never exits 0 over the rest. An outside evaluator found both CLIs' readers
    scanning the rest clean with exit 0."""
    lines = (FIXTURES / fixture).read_text("utf-8").splitlines(keepends=True)
    middle = len(lines) // 2
    # Cut the middle line short, as a killed writer or a hand-made log leaves it.
    lines[middle] = lines[middle][: len(lines[middle]) // 2] + "\n"
    path = tmp_path / Path(fixture).name
    path.write_text("".join(lines), "utf-8")
    code, entries, stderr = _scan(str(path), "--input-format", input_format)
    assert code in (1, 3), stderr
    skipped = [e for e in entries if e["report"] is None]
    assert [str(e["skipped"]).split(": line ")[1].split(":")[0] for e in skipped] == [
        str(middle + 1)
    ], entries
    # Nothing readable beside it is lost: the record is still scanned.
    assert [e for e in entries if e["report"] is not None], entries
