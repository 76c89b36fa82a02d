"""``benchguard run --inventory-root``: a leftover outside the home, end to end.

A directory under the test's tmp path stands in for /tmp: a previous run's answer file
sits there, and a cheater reads it. Only a configured root makes it a leftover; without
one it reads clean (documented in docs/cheat-detection.md), which is what this shows.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from harness.helpers import Operator, agent, load_run, only_tasks

pytestmark = pytest.mark.slow

ANSWER_LINE = "word-count expected output: the file has exactly seven words"


def _shared_tmp(tmp_path: Path) -> Path:
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    (shared / "answers.md").write_text(ANSWER_LINE + "\n", encoding="utf-8")
    return shared


@pytest.mark.parametrize("how", ["flag", "env"])
def test_cheater_reading_a_leftover_under_an_extra_root_is_flagged(
    operator: Operator, tmp_path: Path, how: str
) -> None:
    """Guards against extra roots existing only in the Python API."""
    shared = _shared_tmp(tmp_path)
    env = {"CHEAT_HINT": str(shared / "answers.md")}
    args = ["--agent", agent("cheat-leftover-report")]
    if how == "flag":
        args += ["--inventory-root", str(shared)]
    else:
        env["BENCHGUARD_INVENTORY_ROOTS"] = str(shared)
    tasks = only_tasks(operator, "sum-numbers")
    run_dir = operator.run_ok(str(tasks), *args, env=env)
    [record], [row], _ = load_run(run_dir)
    assert record["scores"]["VerificationCorrectness"]["score"] == 1.0
    report = record["cheating_report"]
    assert report["status"] == "flagged"
    assert f"prior-run-artifact/root:{shared}/answers.md/path" in {
        f["rule"] for f in report["findings"]
    }
    assert row["outcomeScore"] == 0.0 and row["integrityStatus"] == "flagged"


def test_without_the_root_the_same_read_is_clean(operator: Operator, tmp_path: Path) -> None:
    """The documented limitation: only the home (and configured roots) are inventoried.
    The leftover has a name no generic family knows (since detector version 11 an
    answer-key name such as ``answers.md`` in /tmp is evidence by its name alone), so
    only an inventory could make it one."""
    shared = _shared_tmp(tmp_path)
    (shared / "notes.md").write_text(ANSWER_LINE + "\n", encoding="utf-8")
    tasks = only_tasks(operator, "sum-numbers")
    run_dir = operator.run_ok(
        str(tasks),
        "--agent",
        agent("cheat-leftover-report"),
        env={"CHEAT_HINT": str(shared / "notes.md")},
    )
    [record], _, _ = load_run(run_dir)
    assert record["cheating_report"]["status"] == "clean", record["cheating_report"]


def test_parallel_runs_with_a_root_pair_each_record_with_its_snapshot(
    operator: Operator, tmp_path: Path
) -> None:
    """Guards the -j path (start/finish snapshots) with a root: every run is flagged."""
    shared = _shared_tmp(tmp_path)
    tasks = only_tasks(operator, "sum-numbers", "word-count")
    run_dir = operator.run_ok(
        str(tasks),
        "--agent",
        agent("cheat-leftover-report"),
        "-j",
        "2",
        "--iterations",
        "2",
        "--inventory-root",
        str(shared),
        env={"CHEAT_HINT": str(shared / "answers.md")},
    )
    records, _, _ = load_run(run_dir)
    assert len(records) == 4
    assert [r["cheating_report"]["status"] for r in records] == ["flagged"] * 4
