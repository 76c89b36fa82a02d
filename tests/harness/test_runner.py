"""The runner's best-effort promises, driven through its Python API."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from benchguard.detection.models import Rule
from benchguard.harness import integrity
from benchguard.harness.agents.config import resolve_agent
from benchguard.harness.runner import BatchSettings, finish_run, new_run_dir, plan, run_job
from benchguard.harness.tasks import load_tasks
from benchguard.harness.workspace import prepare_home
from harness.helpers import AGENTS, Operator, only_tasks

pytestmark = pytest.mark.slow


def test_detection_failing_on_one_record_errors_that_run_only(
    operator: Operator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards against one unscannable record sinking detection or scoring for the batch,
    and against it being published as anything but errored.

    The failure is real: record 1's snapshot carries a corrupt rule (built without
    validation, as a damaged or hand-edited inventory could be), which the detector
    cannot apply.
    """
    monkeypatch.setenv("CHEAT_HINT", str(operator.tasks))
    tasks = load_tasks(only_tasks(operator, "sum-numbers", "word-count")).tasks
    settings = BatchSettings(
        agent=resolve_agent(str(AGENTS / "cheat-task-yaml.yaml")),
        home=prepare_home(operator.agent_home),
        out_dir=operator.results,
    )
    jobs = plan(tasks, 1)
    corrupt = Rule.model_construct(id="broken", category="broken", material="m", patterns=None)  # type: ignore[arg-type]
    static = integrity.load_static_rules(integrity.IntegritySettings())
    scanned, failed = (
        finish_run(run_job(job, settings), static_rules=static, rules=rules, settings=settings)
        for job, rules in zip(jobs, [(), (corrupt,)], strict=True)
    )
    assert scanned.status == "success"
    assert scanned.cheating_report["status"] == "flagged"
    assert scanned.scores["OutcomeScore"]["score"] == 0.0
    assert failed.status == "error" and failed.error is not None
    assert failed.error.startswith("harness error while scanning")
    assert failed.cheating_report == {} and failed.integrity_checked is False
    assert failed.scores["OutcomeScore"]["score"] == 0.0
    assert failed.scores["OutcomeScore"]["reason"].startswith("no credit: harness error")


def test_run_directories_never_collide(tmp_path: Path) -> None:
    now = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)
    first, second = new_run_dir(tmp_path, now), new_run_dir(tmp_path, now)
    assert first.name == f"run_20260102_030405_{os.getpid()}"
    assert second.name == f"{first.name}_2"


def test_inventory_failure_is_logged_and_yields_no_rules(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Guards against a failing home inventory blocking the run instead of costing its
    rules. The failure is real: the profile whose baseline the inventory needs is unknown."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "report.md").write_text("a leftover that would otherwise be a rule\n")
    snapshots = integrity.HomeSnapshots(home, (), enabled=True, profile="no-such-profile")
    with caplog.at_level("WARNING", logger=integrity.__name__):
        snapshots.before_batch()
    assert "home inventory before the batch failed" in caplog.text
    assert "no-such-profile" in caplog.text
    assert snapshots.start_task("any") == ()
    snapshots.finish_task("any")


def test_toggle_spellings_are_strict() -> None:
    env = {"BENCHGUARD_CHEAT_DETECT": "maybe"}
    with pytest.raises(integrity.IntegrityConfigError, match="BENCHGUARD_CHEAT_DETECT='maybe'"):
        integrity.IntegritySettings.resolve(env)
    settings = integrity.IntegritySettings.resolve(
        {"BENCHGUARD_CHEAT_DETECT": "off", "BENCHGUARD_CHEAT_INVENTORY": "0"}, detect=True
    )
    assert settings.detect is True and settings.inventory is False


def test_parallel_jobs_keep_records_in_batch_order(operator: Operator) -> None:
    from harness.helpers import agent, load_run

    run_dir = operator.run_ok(
        str(operator.tasks), "--agent", agent("honest"), "-j", "2", "--iterations", "2"
    )
    records, rows, _ = load_run(run_dir)
    folders = ["sum-numbers", "word-count", "write-notes", "write-report"]
    assert [(r["folder"], r["iteration"]) for r in records] == [
        (f, i) for i in (1, 2) for f in folders
    ]
    assert all(row["outcomeScore"] == 1.0 for row in rows)


def test_a_run_that_cannot_be_journaled_is_errored_with_no_credit(operator: Operator) -> None:
    """Guards against a failure while writing one run's record keeping its credit (or
    losing the run): it is written again, errored, its outcome the no-credit zero."""
    from benchguard.harness.runner import journal_record, open_journal

    tasks = load_tasks(only_tasks(operator, "sum-numbers")).tasks
    settings = BatchSettings(
        agent=resolve_agent(str(AGENTS / "honest.yaml")),
        home=prepare_home(operator.agent_home),
        out_dir=operator.results,
    )
    [job] = plan(tasks, 1)
    finished = finish_run(run_job(job, settings), static_rules=(), rules=(), settings=settings)
    assert finished.scores["OutcomeScore"]["score"] == 1.0
    journal = open_journal([job], settings, None)
    # Built past the edge parser, a lone surrogate cannot be encoded: the write fails.
    poisoned = finished.model_copy(update={"scores": {**finished.scores, "x": "\ud800"}})
    written = journal_record(journal, job.position, poisoned)
    assert written.status == "error" and written.error is not None
    assert written.error.startswith("harness error while writing the record: UnicodeEncodeError")
    assert written.scores["OutcomeScore"]["score"] == 0.0
    assert journal.finished()[0][job.position].status == "error"


def test_closing_a_transcript_channel_twice_closes_nothing_of_anyone_else(
    tmp_path: Path,
) -> None:
    """Guards against a second close() closing descriptor numbers another thread (a
    concurrent run's journal write) had opened in between: under -j 2 that failed a
    run's journal write with EBADF."""
    from benchguard.harness.transcript_channel import TranscriptChannel

    channel = TranscriptChannel(tmp_path / "channel")
    assert channel.close() is False
    reused = [os.open(tmp_path, os.O_RDONLY) for _ in range(4)]
    try:
        assert channel.close() is False
        for fd in reused:
            os.fstat(fd)  # EBADF if the second close took it
    finally:
        for fd in reused:
            os.close(fd)
        channel.remove()
