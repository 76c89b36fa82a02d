"""Pre-flight's check is agent code, contained and audited as a run is (harness/preflight).

An agent file's ``check_argv`` runs before any run. Red team 6 used it as the one
uncontained, unaudited moment of a batch: a double-forked helper outlived pre-flight
and chmodded the runs' workspaces (pfdaemon), SIGTERMed the harness (pfkill) or handed
confined runs open descriptors of the expected files over a pathname unix socket
(pffd); under ``--unconfined`` the check read the tasks and stashed them for the
audited runs (pfsteal). Each attack here is a standard-library agent
(adversaries/preflight_helper.py) through ``benchguard run``; each fails with the
defence removed (the check run bare, as before: ``RunContainment``/``RunSession`` out
of ``preflight._check_runs``).
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest

from harness.privileges import ADVERSARIES, Harness, records, total_tasks

pytestmark = pytest.mark.slow


def _agent(harness: Harness, name: str, check: list[str], argv: list[str]) -> Path:
    directory = harness.operator.root / "agents"
    directory.mkdir(parents=True, exist_ok=True)
    script = directory / "preflight_helper.py"
    script.write_bytes((ADVERSARIES / "preflight_helper.py").read_bytes())
    config = {
        "name": name,
        "argv": ["{python}", "{agent_dir}/preflight_helper.py", *argv],
        "trajectory": "jsonl",
        "model": "adversary",
    }
    if check:
        config["check_argv"] = ["{python}", "{agent_dir}/preflight_helper.py", *check]
    path = directory / f"{name}.yaml"
    path.write_text(json.dumps(config), "utf-8")
    for item in (directory, *directory.iterdir()):
        os.chmod(item, 0o755 if item.is_dir() else 0o644)
        if harness.identity == "user":
            os.chown(item, 65534, 65534)
    return path


def _alive(token: str) -> list[int]:
    """Processes whose command line carries ``token`` (the helper's), seen from the host."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            line = Path(f"/proc/{name}/cmdline").read_bytes().decode(errors="replace")
        except OSError:
            continue
        if token in line.split("\0"):
            found.append(int(name))
    return found


def _reap(token: str) -> list[int]:
    """The helpers still alive (killed here, so a failing test leaves none behind)."""
    survivors = _alive(token)
    for pid in survivors:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)
    return survivors


def _token(harness: Harness, what: str) -> str:
    return f"bg-pf-{what}-{harness.identity}-{os.getpid()}-{time.monotonic_ns()}"


def _mark(tasks: Path, token: str) -> None:
    """A seed file named ``token`` in every task: the helpers sabotage only those runs."""
    for workspace in tasks.glob("*/workspace"):
        marker = workspace / token
        marker.write_text("", "utf-8")
        os.chmod(marker, 0o644)
        if os.geteuid() == 0 and workspace.stat().st_uid != 0:
            os.chown(marker, workspace.stat().st_uid, workspace.stat().st_gid)


def _score(record: dict[str, Any]) -> float:
    score: float = record["scores"]["OutcomeScore"]["score"]
    return score


def test_a_daemonized_check_helper_dies_with_the_check(harness: Harness) -> None:
    """Guards against pfdaemon: the check double-forks a helper that watches the host's
    /proc for run launchers and chmods every run's workspace to 000. Contained, the
    helper dies when the check ends: the batch's own runs are untouched and score 1.0,
    and no process of the check is alive after the batch."""
    token = _token(harness, "chmod")
    tasks = total_tasks(harness, "pf-chmod", {"a-total": "", "b-total": ""})
    _mark(tasks, token)
    agent = _agent(harness, "pf-chmod", ["chmod", token], ["slow"])
    try:
        code, output, run_dir = harness.run(str(tasks), "--agent", str(agent), "-j", "1")
    finally:
        survivors = _reap(token)
    assert code == 0, output
    assert run_dir is not None
    found = records(run_dir)
    assert len(found) == 2
    for record in found:
        assert record["status"] == "success", record["error"]
        assert _score(record) == 1.0, record["verification_report"]
    assert survivors == [], "the check's helper outlived pre-flight"


def test_a_check_helper_cannot_stop_the_harness(harness: Harness) -> None:
    """Guards against pfkill (``--unconfined``: no Landlock signal scoping): the check's
    helper waits for a run to start, then SIGTERMs the harness (the check's python
    ancestor). Contained, it is dead before the first run: the batch finishes (exit 0,
    every run graded) instead of stopping interrupted (exit 3)."""
    token = _token(harness, "kill")
    tasks = total_tasks(harness, "pf-kill", {"a-total": ""})
    agent = _agent(harness, "pf-kill", ["kill", token], ["honest", token])
    try:
        code, output, run_dir = harness.run(
            str(tasks), "--agent", str(agent), "--unconfined", "--iterations", "2"
        )
    finally:
        survivors = _reap(token)
    assert survivors == [], "the check's helper outlived pre-flight"
    assert code == 0, output
    assert run_dir is not None
    assert [r["status"] for r in records(run_dir)] == ["success", "success"]


def test_no_check_helper_serves_descriptors_to_confined_runs(harness: Harness) -> None:
    """Guards against pffd: an ``--unconfined`` batch's check leaves a helper serving
    open descriptors over a pathname unix socket (Landlock ABI 7 mediates connect(2)
    only for abstract sockets); a later confined batch on a copy of the task without
    its seed asks it for the expected file's descriptor and reads it (Landlock checks
    opens, not reads). Contained, the helper is dead when the first batch ends: the
    later run finds no socket and does not pass."""
    token = _token(harness, "fd")
    # A short path (sun_path holds 108 bytes; pytest's tmp is deep), any uid may enter.
    meeting = Path(tempfile.mkdtemp(prefix="bg-pf-"))
    os.chmod(meeting, 0o777)
    sock = meeting / "s"
    tasks = total_tasks(harness, "pf-fd", {"a-total": ""})
    expected = tasks / "a-total" / "expected" / "total.txt"
    (tasks / "a-total" / "workspace" / "numbers.txt").unlink()
    serving = _agent(harness, "pf-fd-serve", ["fd", token, str(sock)], ["stash", "/nonexistent"])
    reader = _agent(harness, "pf-fd-read", [], ["fdclient", str(sock), str(expected)])
    try:
        code, output, _ = harness.run(str(tasks), "--agent", str(serving), "--unconfined")
        # Refused (2) where the audit sees the socket's chmod outside the check's trees.
        assert code in (0, 1, 2), output
        run_dir = harness.run_ok(str(tasks), "--agent", str(reader))
    finally:
        survivors = _reap(token)
        shutil.rmtree(meeting, ignore_errors=True)
    (record,) = records(run_dir)
    assert _score(record) == 0.0, record["trajectory"]
    assert survivors == [], "the check's helper outlived pre-flight"


def test_an_unconfined_check_reading_the_tasks_refuses_the_batch(harness: Harness) -> None:
    """Guards against pfsteal: under ``--unconfined`` (no Landlock, only the audit) the
    check reads every task's expected files from the tasks folder on the harness's
    command line and stashes them outside every protected root; the runs then read only
    the stash. The check is audited as a run: pre-flight refuses the batch (exit 2),
    naming the check and the file it read, and no run starts."""
    token = _token(harness, "steal")
    stash = harness.operator.root / f"{token}.json"
    tasks = total_tasks(harness, "pf-steal", {"a-total": ""})
    (tasks / "a-total" / "workspace" / "numbers.txt").unlink()
    agent = _agent(
        harness, "pf-steal", ["steal", token, str(stash), str(tasks)], ["stash", str(stash)]
    )
    code, output, run_dir = harness.run(str(tasks), "--agent", str(agent), "--unconfined")
    assert code == 2, output
    assert "pre-flight refused the batch" in output, output
    assert "check [" in output and "steal" in output, output
    assert "expected/total.txt" in output and "task-definition" in output, output
    assert run_dir is None


@pytest.mark.parametrize("confined", [True, False], ids=["confined", "unconfined"])
def test_a_run_s_daemonized_grandchild_dies_with_its_run(harness: Harness, confined: bool) -> None:
    """A run's own processes never outlive it: the agent does its task, then leaves a
    double-forked helper (its own session, re-parented away) that chmods every later
    run's workspace to 000. It dies with its run (the run's pid namespace and cgroup):
    the second run of the batch scores 1.0 and no helper is alive after the batch."""
    token = _token(harness, "plant")
    tasks = total_tasks(harness, "run-plant", {"a-total": ""})
    _mark(tasks, token)
    agent = _agent(harness, "run-plant", [], ["plant", token])
    flags = () if confined else ("--unconfined",)
    try:
        code, output, run_dir = harness.run(
            str(tasks), "--agent", str(agent), "--iterations", "2", "-j", "1", *flags
        )
    finally:
        survivors = _reap(token)
    assert code == 0, output
    assert run_dir is not None
    found = sorted(records(run_dir), key=lambda r: r["iteration"])
    assert [_score(r) for r in found] == [1.0, 1.0], [r["error"] for r in found]
    assert survivors == [], "the run's helper outlived its run"
