"""benchguard run's words: the agent ran vs the task passed vs the gate; one log style;
near-miss keys in task files and benchguard.toml get "did you mean"; a skipped task is
named once."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

from benchguard.cli._run_view import _Plain, run_line
from benchguard.results.rows import ResultRow
from cli.helpers import NOOP, TASKS, exited, invoke


def _row(**fields: object) -> ResultRow:
    base: dict[str, object] = {"setupId": "s", "runId": "r", "t": "t", "taskFolder": "sum",
                               "iteration": 1, "status": "success"}  # fmt: skip
    return ResultRow.model_validate({**base, **fields})


def test_the_line_separates_the_agent_running_from_the_task_passing() -> None:
    failed = [{"name": "total-correct", "passed": False}, {"name": "other", "passed": True}]
    assert run_line(_row(outcomeScore=0.0, integrityStatus="clean"), failed) == (
        "sum#1: agent finished; task failed: check 'total-correct' (outcome 0.00); integrity clean"
    )
    assert "task passed (outcome 1.00)" in run_line(_row(outcomeScore=1.0), ())
    gated = run_line(
        _row(
            outcomeScore=0.0,
            catastrophic=True,
            catastrophicKinds=["IntegrityCatastrophic"],
            integrityStatus="flagged",
        ),
        [{"name": "total-correct", "passed": True}],
    )
    assert "gated to 0 (IntegrityCatastrophic)" in gated and "success" not in gated
    assert run_line(_row(status="timeout"), ()).startswith("sum#1: agent timed out; ")


def test_a_real_run_names_the_failed_check_and_never_says_success(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    shutil.copytree(TASKS / "sum-numbers", tasks / "sum-numbers")
    broken = tasks / "broken"
    broken.mkdir()
    (broken / "task.yaml").write_text("name: b\nprompt: p\ntimout: 5\n", encoding="utf-8")
    result = invoke("run", str(tasks), "--agent", NOOP, "--home", str(tmp_path / "home"),
                    "--out", str(tmp_path / "out"), "--quiet")  # fmt: skip
    exited(result, 3)  # a skipped task: incomplete
    assert "sum-numbers#1: agent finished; task failed: check '" in result.stderr
    assert ": success," not in result.output
    assert "field timout: unknown field; did you mean 'timeout'?" in result.stderr
    assert result.output.count("broken/task.yaml") == 1  # named once, not again at the end
    assert "WARNING " not in result.output


def test_benchguard_toml_near_miss_keys_get_did_you_mean(tmp_path: Path) -> None:
    (tmp_path / "benchguard.toml").write_text('fromat = "json"\n', encoding="utf-8")
    result = invoke("config", env={"BENCHGUARD_CONFIG": str(tmp_path / "benchguard.toml")})
    exited(result, 2)
    assert "'fromat' (did you mean 'format'?)" in result.stderr


def test_log_records_print_in_the_one_style() -> None:
    record = logging.LogRecord("benchguard.harness.runner", logging.WARNING, "x", 1,
                               "capped read of %s", ("a",), None)  # fmt: skip
    assert _Plain().format(record) == "warning: capped read of a"
