"""``benchguard leaderboard`` prints each mean with its standard error, and a per-task
view, as plain lines in a pipe."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchguard.results.rows import SCHEMA_VERSION, ResultRow
from cli.helpers import exited, invoke


def row(setup: str, task: str, iteration: int, outcome: float) -> ResultRow:
    fields: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "setup_id": setup,
        "run_id": "run_1",
        "t": "2026-01-01T00:00:00Z",
        "task_folder": task,
        "iteration": iteration,
        "outcome_score": outcome,
        "integrity_status": "clean",
    }
    return ResultRow(**fields)


def test_cli_prints_mean_with_se_and_the_per_task_view(tmp_path: Path) -> None:
    rows = [
        row("a", "t1", 0, 1.0),
        row("a", "t1", 1, 0.0),
        row("b", "t1", 0, 0.25),
    ]
    path = tmp_path / "rows.json"
    path.write_text(json.dumps([r.to_json() for r in rows]), encoding="utf-8")
    result = invoke("leaderboard", str(path), "--by-task")
    exited(result, 0)
    lines = result.stdout.splitlines()
    assert any(line.startswith("1  a ") and "0.500 ± 0.500" in line for line in lines)
    per_task = lines[lines.index("Per task") :]
    assert [line.split()[1] for line in per_task[2:]] == ["a", "b"]
    board = json.loads(invoke("leaderboard", str(path), "--json").stdout)
    assert [t["setupId"] for t in board["tasks"]] == ["a", "b"]
