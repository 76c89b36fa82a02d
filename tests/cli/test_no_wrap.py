"""Off a terminal nothing is wrapped: every Rich-rendered message stays on its line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from cli.helpers import CHEAT, REPO, exited, invoke, record, run_dir

NARROW = {"COLUMNS": "80"}  # Rich's default width off a terminal


def _deep(tmp_path: Path) -> Path:
    """A directory whose path alone is wider than 80 columns."""
    deep = tmp_path / ("a-rather-long-directory-name-" * 3) / "runs"
    deep.mkdir(parents=True)
    return deep


def test_dismiss_suggests_the_score_command_on_one_line(tmp_path: Path) -> None:
    """Guards the command a reviewer copies: split at column 80 it no longer runs."""
    results = run_dir(_deep(tmp_path), "run_b", [record("log-rotate", 0, CHEAT)])
    exited(invoke("score", str(results), env=NARROW), 1)
    result = invoke(
        "dismiss", str(results), "--task", "log-rotate", "--iteration", "0",
        "--rule", "task-definition/path", "--reviewer", "ana", "--reason", "told to",
        env=NARROW,
    )  # fmt: skip
    exited(result, 0)
    target = results.parent / "dismissals.yaml"
    command = f"benchguard score {results} --dismissals {target}"
    assert any(line.endswith(command) for line in result.stdout.splitlines()), result.stdout
    assert len(result.stdout.strip().splitlines()) == 1


def test_score_aggregate_leaderboard_and_scan_lines_are_not_wrapped(tmp_path: Path) -> None:
    deep = _deep(tmp_path)
    results = run_dir(deep, "run_b", [record("log-rotate", 0, CHEAT)])
    scored = invoke("score", str(results), env=NARROW)
    assert f"wrote {results}, {results.parent / 'rows.json'}" in scored.stdout.splitlines()
    board = deep / "board"
    merged = invoke("aggregate", str(deep), "-o", str(board), env=NARROW)
    assert any(line.endswith(str(board / "rows.json")) for line in merged.stdout.splitlines())
    page = board / "leaderboard.html"
    published = invoke("leaderboard", str(board / "rows.json"), "--html", str(page), env=NARROW)
    assert f"wrote {page}" in published.stdout.splitlines()
    missing = deep / "no-such-log.json"
    scanned = invoke("scan", str(missing), env=NARROW)
    assert scanned.stderr.splitlines() == [f"error: {missing}: no such file or directory"]


def test_through_a_pipe_of_the_real_entry_point(tmp_path: Path) -> None:
    """The installed ``benchguard`` writing to a pipe, as in a CI log."""
    results = run_dir(_deep(tmp_path), "run_b", [record("log-rotate", 0, CHEAT)])
    env = {
        **os.environ,
        "COLUMNS": "80",
        "PYTHONPATH": str(REPO / "src"),
        "BENCHGUARD_CONFIG": "",
    }
    bench = str(Path(sys.executable).with_name("benchguard"))
    done = subprocess.run(
        [bench, "score", str(results)], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 1, done.stderr
    assert f"wrote {results}, {results.parent / 'rows.json'}" in done.stdout.splitlines()
    assert all(len(line) <= 200 or str(results.parent) in line for line in done.stdout.splitlines())
