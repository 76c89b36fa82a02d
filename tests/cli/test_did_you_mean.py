"""A mistyped agent or task name gets the closest real one, and nothing runs."""

from __future__ import annotations

from pathlib import Path

from benchguard.suggest import did_you_mean
from cli.helpers import REPO, TASKS, exited, invoke, one_line, record, run_dir


def test_suggestion_is_the_closest_name_or_nothing() -> None:
    assert (
        did_you_mean("honst.yaml", ["cheat.yaml", "honest.yaml"]) == "; did you mean 'honest.yaml'?"
    )
    assert did_you_mean("zzz", ["honest.yaml"]) == ""


def test_mistyped_agent_file_and_name(tmp_path: Path) -> None:
    agents = REPO / "examples" / "agents"
    typo = invoke("run", str(TASKS), "--agent", str(agents / "honset.yaml"), "--out", str(tmp_path))
    exited(typo, 2)
    assert "did you mean 'honest.yaml'?" in one_line(typo.output)
    name = invoke("run", str(TASKS), "--agent", "benchguard-agnet", "--out", str(tmp_path))
    exited(name, 2)
    assert "did you mean 'benchguard-agent'?" in one_line(name.output)
    assert not any(tmp_path.iterdir())  # nothing ran


def test_mistyped_task_in_dismiss(tmp_path: Path) -> None:
    results = run_dir(tmp_path, "run_a", [record("log-rotate", 0)])
    result = invoke(
        "dismiss", str(results), "--task", "log-rotat", "--iteration", "0",
        "--rule", "task-definition/path", "--reviewer", "a", "--reason", "b",
    )  # fmt: skip
    exited(result, 2)
    assert "no record for task 'log-rotat' iteration 0; did you mean 'log-rotate'?" in one_line(
        result.output
    )
