"""Durable batches: no finished run is lost, one bad run never sinks the batch.

Every case goes through ``benchguard run`` with a small agent of our own
(``tests/harness/agents``), the way a hostile or broken agent would really act.
"""

from __future__ import annotations

import json
import shutil
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from benchguard.detection.models import SCAN_INCOMPLETE_CATEGORY
from harness.helpers import GONE_WITHIN_S, Operator, alive, load_run

pytestmark = pytest.mark.slow

AGENTS = Path(__file__).resolve().parent / "agents"
POISONS = ("none", "surrogate", "deep-dir", "deep-json", "nan", "tiny-steps")


def _tasks(root: Path, prompts: dict[str, str]) -> Path:
    """A tasks directory: one task per (folder, prompt), each checking answer.txt."""
    for folder, prompt in prompts.items():
        task = root / folder
        task.mkdir(parents=True)
        (task / "task.yaml").write_text(
            f"name: {folder}\nprompt: {json.dumps(prompt)}\ntimeout: 120\nverification:\n"
            "  - {name: answered, role: correctness, file: answer.txt, contains: 'ok'}\n",
            "utf-8",
        )
    return root


def _strict_json(path: Path) -> Any:
    def refuse(token: str) -> None:
        raise AssertionError(f"{path}: non-standard JSON token {token}")

    return json.loads(path.read_text("utf-8"), parse_constant=refuse)


def _assert_consistent(run_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """results.json, rows.json and manifest.json are strict JSON and agree record for
    record (same runs, same order, same status and outcome)."""
    results = _strict_json(run_dir / "results.json")
    rows = _strict_json(run_dir / "rows.json")
    manifest = _strict_json(run_dir / "manifest.json")
    records = results["records"]
    assert len(records) == len(rows)
    for record, row in zip(records, rows, strict=True):
        assert (record["folder"], record["iteration"]) == (row["taskFolder"], row["iteration"])
        assert record["status"] == row["status"]
        outcome = record["scores"].get("OutcomeScore")
        assert (outcome or {}).get("score") == row["outcomeScore"]
        assert row["runId"] == manifest["runId"] == results["run_id"] == run_dir.name
    assert manifest["plannedRuns"] == len(records) + len(manifest["notRun"])
    return records, rows


def test_each_poisoned_run_leaves_the_batch_and_every_other_run_intact(
    operator: Operator, tmp_path: Path
) -> None:
    """Guards against one agent's leftovers (a lone surrogate, a 1,100-level directory,
    JSON nested ~1,000 deep, 16 MiB of tiny steps, NaN) crashing the harness after every
    agent ran, with no results for anyone."""
    tasks = _tasks(
        tmp_path / "tasks", {f"{i}-{p}": f"POISON={p} go" for i, p in enumerate(POISONS)}
    )
    code, output, run_dir = operator.run(str(tasks), "--agent", str(AGENTS / "poison.yaml"))
    assert run_dir is not None, output
    assert "Traceback" not in output
    records, rows = _assert_consistent(run_dir)
    by_kind = {r["folder"].split("-", 1)[1]: (r, row) for r, row in zip(records, rows, strict=True)}
    assert sorted(by_kind) == sorted(POISONS)
    for kind, (record, row) in by_kind.items():
        assert record["status"] == "success", (kind, record["error"])
        assert record["scores"]["VerificationCorrectness"]["score"] == 1.0, kind
        if kind != "tiny-steps":
            assert row["outcomeScore"] == 1.0, (kind, record["scores"])
    surrogate = by_kind["surrogate"][0]["trajectory"][1]
    assert surrogate["args"]["command"] == "echo \ufffd"
    nan = by_kind["nan"][0]
    assert nan["trajectory"][1]["args"] == {"n": None, "m": None}
    assert any("non-finite" in note for note in nan["record_errors"])
    deep = by_kind["deep-json"][0]
    assert deep["trajectory"][-1]["name"] == "bash" or deep["transcript_errors"]
    # The padded record keeps a bounded window, is marked, and so is never read clean.
    tiny, tiny_row = by_kind["tiny-steps"]
    assert tiny["transcript_truncated"] is True
    assert len(tiny["trajectory"]) <= 20_000
    assert any("trajectory cut" in e for e in tiny["transcript_errors"])
    assert tiny_row["integrityStatus"] == "flagged" and tiny_row["outcomeScore"] == 0.0
    assert code == 1, "the cut record is flagged (scan incomplete): exit 1"
    assert (run_dir / "results.json").stat().st_size < 64 << 20


def _signal_batch(
    operator: Operator,
    tmp_path: Path,
    sig: signal.Signals,
    marker: str,
    *extra: str,
    audit: str = "none",
) -> Path:
    """Start a -j 2 batch of 16 sleeper runs, signal it after some runs finished, and
    return its run directory once the harness has exited. ``audit`` is the run's
    ``--audit``: "strace" stops traced agents (and their tracers) mid-run."""
    tasks = _tasks(tmp_path / "tasks", {f"t{i:02d}": f"answer ok {marker}" for i in range(4)})
    command = [sys.executable, "-m", "benchguard", "run", str(tasks), "--audit", audit, *extra]
    command += ["--agent", str(AGENTS / "sleeper.yaml"), "-j", "2", "--iterations", "4"]
    command += ["--out", str(operator.results), "--home", str(operator.agent_home), "--quiet"]
    # The sleepers note their pids in the home for this test to check: it persists.
    command += ["--home-mode", "persistent"]
    harness = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 120
        runs: list[Path] = []
        while time.monotonic() < deadline and len(runs) < 4:
            runs = list(operator.results.glob("run_*/runs/*.json"))
            time.sleep(0.05)
        assert len(runs) >= 4, "the batch did not get going"
        harness.send_signal(sig)
        out, err = harness.communicate(timeout=GONE_WITHIN_S)
    finally:
        if harness.poll() is None:
            harness.kill()
            harness.wait()
    assert harness.returncode == 3, err
    assert f"interrupted by {sig.name}" in err, err
    run_dir = Path(out.strip().splitlines()[-1])
    assert run_dir.is_dir()
    return run_dir


def _cut_audit_only(record: dict[str, Any]) -> bool:
    """Whether an interrupted run is flagged for nothing but its cut audit: no finding,
    and no category but scan-incomplete."""
    report = record.get("cheating_report") or {}
    return (
        report.get("status") == "flagged"
        and not report.get("findings")
        and bool(report.get("categories"))
        and all(c == SCAN_INCOMPLETE_CATEGORY for c in report["categories"])
    )


@pytest.mark.parametrize("audit", ["none", "strace"])
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_mid_batch_keeps_every_finished_run_kills_every_agent_and_resume_finishes(
    operator: Operator, tmp_path: Path, sig: signal.Signals, audit: str
) -> None:
    """Guards against Ctrl-C (or timeout/CI/Slurm's SIGTERM) losing the finished runs,
    being ignored until the batch ends, or leaving agents (and their detached children)
    running, with the system audit off and on (a traced agent killed mid-run is
    interrupted, not errored by its tracer); and against --resume doing anything but
    completing the same batch."""
    marker = f"MARK-{uuid.uuid4().hex}"
    run_dir = _signal_batch(operator, tmp_path, sig, marker, audit=audit)
    records, _ = _assert_consistent(run_dir)
    manifest = _strict_json(run_dir / "manifest.json")
    assert manifest["interruptedBy"] == sig.name
    statuses = [r["status"] for r in records]
    assert statuses.count("success") >= 4
    assert set(statuses) <= {"success", "interrupted"}
    assert len(records) + len(manifest["notRun"]) == 16
    assert len(records) < 16 or "interrupted" in statuses
    for record in records:
        if record["status"] == "interrupted":
            assert record["scores"]["OutcomeScore"]["score"] == 0.0
            if _cut_audit_only(record):
                # The stop killed strace before its log was whole: the record stays
                # flagged scan-incomplete and gated (fail closed), and the batch exits 3,
                # not 1 (harness/batch._is_finding). Seen about once in 40 under load.
                assert record["scores"]["IntegrityCatastrophic"]["score"] == 0.0
            else:
                assert record["scores"]["OutcomeScore"]["reason"].startswith("no credit")
    # The agents ran; the pids they wrote are their own pid namespace's, so whether
    # they outlived the batch is read by the marker on their command lines.
    assert list((operator.agent_home / "pids").iterdir())
    assert _carrying(marker) == [], "an agent process outlived the batch"

    code, output, resumed = operator.run(
        str(tmp_path / "tasks"),
        "--audit",
        audit,
        "--agent",
        str(AGENTS / "sleeper.yaml"),
        "-j",
        "2",
        "--iterations",
        "4",
        "--home-mode",
        "persistent",
        "--resume",
        str(run_dir),
    )
    assert code == 0, output
    assert resumed == run_dir
    records, rows = _assert_consistent(run_dir)
    assert [(r["folder"], r["iteration"]) for r in records] == [
        (f"t{t:02d}", i) for i in range(1, 5) for t in range(4)
    ]
    assert all(r["status"] == "success" for r in records)
    assert all(row["outcomeScore"] == 1.0 for row in rows)
    manifest = _strict_json(run_dir / "manifest.json")
    assert manifest["notRun"] == [] and manifest["interruptedBy"] is None

    # The same files an uninterrupted batch writes: same keys, runs and scores.
    code, output, fresh = operator.run(
        str(tmp_path / "tasks"),
        "--audit",
        "none",
        "--agent",
        str(AGENTS / "sleeper.yaml"),
        "-j",
        "2",
        "--iterations",
        "4",
        "--home-mode",
        "persistent",
    )
    assert code == 0 and fresh is not None, output
    fresh_records, fresh_rows = _assert_consistent(fresh)
    assert [sorted(r) for r in records] == [sorted(r) for r in fresh_records]
    volatile = {"runId", "t"}
    assert [{k: v for k, v in r.items() if k not in volatile} for r in rows] == [
        {k: v for k, v in r.items() if k not in volatile} for r in fresh_rows
    ]
    fresh_manifest = _strict_json(fresh / "manifest.json")
    assert {k for k in manifest} == {k for k in fresh_manifest}


def _carrying(marker: str) -> list[int]:
    """Live processes whose command line holds ``marker``, after a grace for reaping."""
    deadline = time.monotonic() + GONE_WITHIN_S
    while True:
        found = []
        for entry in Path("/proc").iterdir():
            if entry.name.isdigit():
                try:
                    cmdline = (entry / "cmdline").read_bytes()
                except OSError:
                    continue
                if marker.encode() in cmdline and alive(int(entry.name)):
                    found.append(int(entry.name))
        if not found or time.monotonic() > deadline:
            return found
        time.sleep(0.05)


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_a_signal_kills_sandboxed_agents_too(operator: Operator, tmp_path: Path) -> None:
    """Guards against a sandboxed agent (in its own pid namespace, as another uid when
    the harness is root) surviving an interrupted batch."""
    marker = f"MARK-{uuid.uuid4().hex}"
    run_dir = _signal_batch(operator, tmp_path, signal.SIGINT, marker, "--sandbox", "bwrap")
    records, _ = _assert_consistent(run_dir)
    assert {r["status"] for r in records} <= {"success", "interrupted"}
    assert all(r["sandboxed"] for r in records)
    assert _carrying(marker) == []


def test_resume_refuses_a_different_batch_and_a_directory_without_a_plan(
    operator: Operator, tmp_path: Path
) -> None:
    tasks = _tasks(tmp_path / "tasks", {"a-none": "POISON=none"})
    run_dir = operator.run_ok(str(tasks), "--agent", str(AGENTS / "poison.yaml"), code=0)
    code, output, _ = operator.run(
        str(tasks),
        "--agent",
        str(AGENTS / "poison.yaml"),
        "--iterations",
        "2",
        "--resume",
        str(run_dir),
    )
    assert code == 2 and "planned 1 run(s)" in output and "Traceback" not in output
    code, output, _ = operator.run(
        str(tasks), "--agent", str(AGENTS / "poison.yaml"), "--resume", str(tmp_path)
    )
    assert code == 2 and "batch.json: not found" in output
    # Resuming a complete batch runs nothing and rewrites the same files.
    before = load_run(run_dir)
    code, output, again = operator.run(
        str(tasks), "--agent", str(AGENTS / "poison.yaml"), "--resume", str(run_dir)
    )
    assert code == 0 and again == run_dir, output
    assert load_run(run_dir) == before


def test_resume_reruns_a_run_whose_journal_file_is_unusable(
    operator: Operator, tmp_path: Path
) -> None:
    """Guards against a damaged journal entry being published as a guess: the run counts
    as not run, is run again, and the problem is reported."""
    tasks = _tasks(tmp_path / "tasks", {"a-none": "POISON=none", "b-none": "POISON=none"})
    run_dir = operator.run_ok(str(tasks), "--agent", str(AGENTS / "poison.yaml"), code=0)
    damaged = run_dir / "runs" / "000001.json"
    damaged.write_text('{"schema_version": 1, "position": 1, "record": {', "utf-8")
    code, output, again = operator.run(
        str(tasks), "--agent", str(AGENTS / "poison.yaml"), "--resume", str(run_dir)
    )
    assert code == 0 and again == run_dir, output
    assert "000001.json: unusable, the run counts as not run" in output
    records, _ = _assert_consistent(run_dir)
    assert [r["status"] for r in records] == ["success", "success"]
    assert json.loads(damaged.read_text("utf-8"))["record"]["folder"] == "b-none"
