"""Credit only for work done in the run, through ``benchguard run`` and the leaderboard.

A do-nothing agent, or one whose binary is misspelled so that every run errors, once
got credit from files an earlier run left in the shared agent home, and ranked above a
caught cheater.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchguard.cli import app
from harness.helpers import Operator, agent, load_run

pytestmark = pytest.mark.slow

HOME_FILE_TASKS = ("write-notes", "write-report")


def _board(*run_dirs: Path, policy: str | None = None) -> dict[str, Any]:
    args = ["leaderboard", *(str(d / "rows.json") for d in run_dirs), "--json"]
    if policy is not None:
        args += ["--unverified", policy]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    board: dict[str, Any] = json.loads(result.stdout)
    return board


def _misspelled(tmp_path: Path) -> str:
    # A program missing outright is refused by pre-flight before any run; a launcher
    # whose interpreter is misspelled passes that check and errors at every start.
    launcher = tmp_path / "bin" / "honest-agent"
    launcher.parent.mkdir()
    launcher.write_text("#!/usr/bin/honset-agent-typo\n", "utf-8")
    launcher.chmod(0o755)
    path = tmp_path / "misspelled.yaml"
    path.write_text(f'name: misspelled\nargv: ["{launcher}", "{{prompt}}"]\nmodel: typo\n', "utf-8")
    return str(path)


def test_a_misspelled_agent_ranks_last_with_zero(operator: Operator, tmp_path: Path) -> None:
    """Guards against a setup whose agent never started earning credit from an earlier
    run's leftovers and outranking a caught cheater."""
    honest = operator.run_ok(str(operator.tasks), "--agent", agent("honest"), code=0)
    cheater = operator.run_ok(
        str(operator.tasks),
        "--agent",
        agent("cheat-task-yaml"),
        env={"CHEAT_HINT": str(operator.tasks)},
        code=1,
    )
    code, output, misspelled = operator.run(str(operator.tasks), "--agent", _misspelled(tmp_path))
    assert code == 3 and misspelled is not None, output
    _, rows, _ = load_run(misspelled)
    assert all(r["outcomeScore"] == 0.0 and r["status"] == "error" for r in rows)
    assert all("agent could not start" in r["error"] for r in rows)
    board = _board(honest, cheater, misspelled)
    order = [(s["harness"], s["meanOutcome"]) for s in board["standings"]]
    assert order[0] == ("honest", 1.0)
    assert order[-1] == ("misspelled", 0.0), order
    assert board["unverifiedPolicy"] == "zero"


def test_a_noop_agent_after_an_honest_batch_ranks_at_zero(operator: Operator) -> None:
    """Guards against a do-nothing run being ranked on checks it never did anything
    for: it leaves no transcript (no_data), which the ranked mean counts as zero."""
    honest = operator.run_ok(str(operator.tasks), "--agent", agent("honest"), code=0)
    noop = operator.run_ok(str(operator.tasks), "--agent", agent("noop"))
    _, rows, _ = load_run(noop)
    assert {r["integrityStatus"] for r in rows} == {"no_data"}
    board = _board(honest, noop)
    standing = next(s for s in board["standings"] if s["harness"] == "noop")
    assert standing["meanOutcome"] == 0.0 and standing["noData"] == len(rows)
    assert board["standings"][-1]["harness"] == "noop"
    # Including them is an explicit choice, and the board says it was made.
    included = _board(honest, noop, policy="include")
    assert included["unverifiedPolicy"] == "include"


def test_a_noop_agent_after_an_honest_batch_scores_zero_on_every_home_file_task(
    operator: Operator,
) -> None:
    """Guards against a do-nothing run passing ~/notes.md and ~/report.md checks with
    the files an earlier honest run left in the shared home."""
    operator.run_ok(str(operator.tasks), "--agent", agent("honest"), code=0)
    noop = operator.run_ok(str(operator.tasks), "--agent", agent("noop"))
    _, rows, _ = load_run(noop)
    home_rows = [r for r in rows if r["taskFolder"] in HOME_FILE_TASKS]
    assert len(home_rows) == len(HOME_FILE_TASKS)
    for row in home_rows:
        assert row["correctnessScore"] == 0.0, row
        assert row["outcomeScore"] == 0.0, row
