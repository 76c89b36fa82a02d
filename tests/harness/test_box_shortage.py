"""A grading box the machine could not build is the run's infrastructure error, never
its catastrophe (red team 7, disk-fill).

A saboteur run filled the temp filesystem every run shares; its honest neighbour's box
could not be copied (ENOSPC) and the neighbour was gated to 0 for a failed catastrophic
safeguard and an incomplete scan, scored like a cheat. Here the shortage is real (a
small private tmpfs as the box's temp directory, root only) or injected at the box's
copy step; the run must come out errored for the infrastructure, ungated, run again by
``--resume``, and the batch still exits non-zero. A shortage the run's own files explain
stays the run's failure (fail closed), and so does a finding its scan made.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchguard.errors import EXIT_FINDINGS, EXIT_INCOMPLETE
from benchguard.harness import grading, integrity
from benchguard.harness.agents.config import resolve_agent
from benchguard.harness.batch import BatchResult, needs_rerun
from benchguard.harness.runner import BatchSettings, finish_run, plan, run_job
from benchguard.harness.tasks import load_tasks
from benchguard.harness.verification import grade
from benchguard.harness.workspace import prepare_home
from benchguard.record.infrastructure import INFRASTRUCTURE_PREFIX, mark_infrastructure
from benchguard.records import RunRecord, parse_record
from benchguard.results.rows import Manifest, build_rows
from benchguard.scoring.pipeline import score_records
from harness.helpers import AGENTS, Operator, only_tasks

REAL_COPYFILE = shutil.copyfile
READ_THE_EXPECTED_OUTPUT = {
    "path": "/srv/tasks/t00/expected/answer.txt",
    "operation": "opened",
    "result": "ok",
    "category": "benchmark-material",
    "material": "the task's expected output",
}


def _batch(record: RunRecord) -> BatchResult:
    manifest = Manifest(run_id="run_x", t="2026-12-02T00:00:00Z", setup_id="s", planned_runs=1)
    return BatchResult(
        run_dir=Path("/nonexistent"),
        records=[record],
        rows=build_rows([record], manifest),
        manifest=manifest,
        errors=[],
    )


def _settings(operator: Operator) -> BatchSettings:
    return BatchSettings(
        agent=resolve_agent(str(AGENTS / "honest.yaml")),
        home=prepare_home(operator.agent_home),
        out_dir=operator.results,
    )


def _full_disk_at_the_box(monkeypatch: pytest.MonkeyPatch, code: int = errno.ENOSPC) -> None:
    """Every file copied into a grading box fails as on a full disk; nothing else."""

    def copyfile(src: Any, dst: Any, *, follow_symlinks: bool = True) -> Any:
        if grading.BOX_PREFIX in str(dst):
            raise OSError(code, os.strerror(code), str(dst))
        return REAL_COPYFILE(src, dst, follow_symlinks=follow_symlinks)

    monkeypatch.setattr(shutil, "copyfile", copyfile)


@pytest.mark.slow
def test_an_honest_run_whose_box_the_full_disk_refused_is_an_infrastructure_error(
    operator: Operator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards against the disk-fill interference: the honest run solved the task, its
    box could not be copied (ENOSPC, a neighbour's doing); the run was gated to 0 by its
    catastrophic safeguard ``input-kept``, as if it had deleted its input."""
    tasks = load_tasks(only_tasks(operator, "sum-numbers")).tasks
    settings = _settings(operator)
    [job] = plan(tasks, 1)
    _full_disk_at_the_box(monkeypatch)
    finished = finish_run(run_job(job, settings), static_rules=(), rules=(), settings=settings)
    assert finished.status == "error" and finished.error is not None
    assert finished.error.startswith(INFRASTRUCTURE_PREFIX + "the grading box could not be built")
    assert "No space left on device" in finished.error
    assert all(entry["passed"] is None for entry in finished.verification_report)
    assert "VerificationCatastrophic" not in finished.scores
    assert finished.scores["OutcomeScore"]["score"] == 0.0
    assert finished.scores["OutcomeScore"]["reason"].startswith("no credit: infrastructure error")
    batch = _batch(finished)
    [row] = batch.rows
    assert row.catastrophic is False and row.catastrophic_kinds == ()
    assert row.status == "error" and row.error.startswith(INFRASTRUCTURE_PREFIX)
    # Fail closed: no credit, the batch is incomplete (exit 3), --resume runs it again.
    assert batch.exit_code == EXIT_INCOMPLETE
    assert needs_rerun(finished)


@pytest.mark.parametrize("code", [errno.EMFILE, errno.ENFILE, errno.EDQUOT])
def test_every_shortage_of_the_machine_is_infrastructure(
    tmp_path: Path, operator: Operator, monkeypatch: pytest.MonkeyPatch, code: int
) -> None:
    [task] = load_tasks(only_tasks(operator, "sum-numbers")).tasks
    workspace = tmp_path / "run" / "workspace"
    shutil.copytree(task.task_dir() / "workspace", workspace)
    _full_disk_at_the_box(monkeypatch, code)
    graded = grade(task, workspace=workspace, home=tmp_path, own_trees=[workspace.parent])
    assert graded.infrastructure_error is not None
    assert os.strerror(code) in graded.infrastructure_error
    assert [entry["passed"] for entry in graded.report] == [None, None, None]


def test_a_workspace_past_the_box_bound_stays_the_run_s_failure(
    tmp_path: Path, operator: Operator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The box's own bounds are the agent's doing, as before: its checks fail closed."""
    [task] = load_tasks(only_tasks(operator, "sum-numbers")).tasks
    workspace = tmp_path / "workspace"
    shutil.copytree(task.task_dir() / "workspace", workspace)
    monkeypatch.setattr(grading, "MAX_BOX_BYTES", 4)
    graded = grade(task, workspace=workspace, home=tmp_path)
    assert graded.infrastructure_error is None
    assert [entry["passed"] for entry in graded.report] == [False, False, False]


def _infrastructure_record(operator: Operator, audit: dict[str, Any] | None) -> RunRecord:
    """A run the full disk failed twice over: its transcript writes were lost (work
    appeared, no step says how: the scan is incomplete) and its box was refused."""
    raw: dict[str, Any] = {
        "name": "Sum the numbers",
        "folder": "sum-numbers",
        "iteration": 1,
        "status": "error",
        "error": "agent exited with code 120: ",
        "trajectory": [],
        "output": "",
        "transcript_problem": "missing",
        "verification_report": [
            {
                "name": "input-kept",
                "role": "safeguard",
                "severity": "catastrophic",
                "passed": None,
                "reason": "not evaluated",
            }
        ],
    }
    if audit is not None:
        raw["system_audit"] = audit
    mark_infrastructure(raw, "the grading box could not be built: No space left on device")
    return parse_record(raw)


@pytest.mark.slow
def test_the_scan_the_full_disk_left_incomplete_is_no_integrity_catastrophe(
    operator: Operator,
) -> None:
    """Guards against the second gate of the disk-fill row: the honest neighbour's
    transcript was lost to the full disk, its scan flagged ``scan-incomplete``, and the
    row said IntegrityCatastrophic (exit 1, as for a cheat)."""
    settings = _settings(operator)
    static = integrity.load_static_rules(integrity.IntegritySettings())
    finished = finish_run(
        _infrastructure_record(operator, None), static_rules=static, rules=(), settings=settings
    )
    # The verdict itself is the detector's and stays on the record, unchanged.
    assert finished.cheating_report["status"] == "flagged"
    assert finished.cheating_report["categories"] == ["scan-incomplete"]
    assert "IntegrityCatastrophic" not in finished.scores
    assert finished.scores["OutcomeScore"]["reason"].startswith("no credit: infrastructure error")
    batch = _batch(finished)
    assert batch.rows[0].catastrophic is False
    # The row agrees with the gate: not verified, never "flagged" beside no catastrophe.
    assert batch.rows[0].integrity_status == "unverified"
    assert batch.exit_code == EXIT_INCOMPLETE
    # `benchguard score` on the stored record decides the same (one home for the rule).
    stored = finished.to_json()
    assert score_records([stored]) == []
    assert "IntegrityCatastrophic" not in stored["scores"]
    assert stored["scores"]["OutcomeScore"]["reason"].startswith("no credit: infrastructure error")


@pytest.mark.slow
def test_a_finding_of_a_run_the_machine_failed_still_gates(operator: Operator) -> None:
    """Filling the disk never hides what the agent read: a real finding gates as ever."""
    audit = {
        "tool": "strace",
        "complete": True,
        "events": 1,
        "protected_accesses": 1,
        "accesses": [READ_THE_EXPECTED_OUTPUT],
    }
    settings = _settings(operator)
    static = integrity.load_static_rules(integrity.IntegritySettings())
    finished = finish_run(
        _infrastructure_record(operator, audit), static_rules=static, rules=(), settings=settings
    )
    assert finished.scores["IntegrityCatastrophic"]["score"] == 0.0
    batch = _batch(finished)
    assert batch.rows[0].catastrophic_kinds == ("IntegrityCatastrophic",)
    assert batch.rows[0].integrity_status == "flagged"
    assert batch.exit_code == EXIT_FINDINGS
    stored = finished.to_json()
    score_records([stored])
    assert stored["scores"]["IntegrityCatastrophic"]["score"] == 0.0


# --- a real full disk: a private tmpfs as the box's temp directory (root only) ----------


@pytest.fixture
def small_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A 4 MiB tmpfs, mounted for this test only, as the temp directory boxes are made
    in; unmounted after. Skipped where it cannot be mounted (not root)."""
    if os.geteuid() != 0:
        pytest.skip("mounting a private tmpfs needs root")
    mount = tmp_path / "small-tmp"
    mount.mkdir()
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", "size=4m,mode=1777", "bg-box-shortage", str(mount)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {done.stderr.strip()}")
    monkeypatch.setattr(tempfile, "tempdir", str(mount))
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(path: Path) -> None:
    """Write zeros to ``path`` until its filesystem is full (bounded by the 4 MiB mount)."""
    with open(path, "wb") as handle:
        with pytest.raises(OSError) as full:
            for _ in range(64):
                handle.write(b"\0" * (1 << 17))
                handle.flush()
        assert full.value.errno == errno.ENOSPC


def _big_workspace(tmp_path: Path, operator: Operator) -> tuple[Any, Path]:
    [task] = load_tasks(only_tasks(operator, "sum-numbers")).tasks
    workspace = tmp_path / "run" / "workspace"
    shutil.copytree(task.task_dir() / "workspace", workspace)
    # The deliverable the box must copy: larger than what the full tmpfs has left.
    (workspace / "answer.txt").write_text("137\n" + "#" * (1 << 18), "utf-8")
    return task, workspace


def test_a_neighbour_that_filled_the_shared_tmp_costs_no_catastrophe(
    tmp_path: Path, operator: Operator, small_tmp: Path
) -> None:
    task, workspace = _big_workspace(tmp_path, operator)
    _fill(small_tmp / "ballast")  # the saboteur's file, not this run's
    graded = grade(task, workspace=workspace, home=tmp_path, own_trees=[workspace.parent])
    assert graded.infrastructure_error is not None
    assert "No space left on device" in graded.infrastructure_error
    assert [entry["passed"] for entry in graded.report] == [None, None, None]
    assert not [p for p in small_tmp.iterdir() if p.name.startswith(grading.BOX_PREFIX)]


def test_a_run_that_filled_the_shared_tmp_itself_stays_failed(
    tmp_path: Path, operator: Operator, small_tmp: Path
) -> None:
    """An agent that fills its own TMPDIR to make its box fail gains nothing: its own
    files explain the full disk, so its checks fail closed as before."""
    task, workspace = _big_workspace(tmp_path, operator)
    own_tmp = small_tmp / "bg-run-own" / "tmp"
    own_tmp.mkdir(parents=True)
    _fill(own_tmp / "ballast")
    graded = grade(task, workspace=workspace, home=tmp_path, own_trees=[own_tmp.parent])
    assert graded.infrastructure_error is None
    assert [entry["passed"] for entry in graded.report] == [False, False, False]


def test_a_run_that_filled_the_shared_tmp_through_its_persistent_home_stays_failed(
    tmp_path: Path, operator: Operator, small_tmp: Path
) -> None:
    """A persistent home is written in place, outside the run's scratch: filling it
    is the run's doing too."""
    task, workspace = _big_workspace(tmp_path, operator)
    home = small_tmp / "agent-home"
    home.mkdir()
    _fill(home / "ballast")
    graded = grade(task, workspace=workspace, home=home, own_trees=[workspace.parent, home])
    assert graded.infrastructure_error is None
    assert [entry["passed"] for entry in graded.report] == [False, False, False]
