"""One cgroup and one pid namespace per run: nothing an agent starts outlives it.

Each attack runs through ``benchguard run`` with the harness as root (a cgroup v2 per
run and a pid namespace) and as an unprivileged user (no cgroup can be delegated: the
pid namespace, in a user namespace, alone contains the run).
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from benchguard.harness import cgroup
from benchguard.harness.cgroup import BatchCgroups, RunCgroup, sweep_stale, v2_mount
from benchguard.harness.process import read_process
from harness.helpers import GONE_WITHIN_S, REPO, only_tasks
from harness.privileges import (
    ADVERSARIES,
    Harness,
    records,
    run_adversary,
    unprivileged_command,
    write_agent,
)

pytestmark = pytest.mark.slow


def marked(marker: str) -> list[int]:
    """Live processes (seen from the harness) whose command line holds ``marker``."""
    found = []
    for name in sorted(os.listdir("/proc")):
        if not name.isdigit():
            continue
        try:
            cmdline = Path(f"/proc/{name}/cmdline").read_bytes()
        except OSError:
            continue
        info = read_process(int(name))
        if marker.encode() in cmdline and info is not None and not info.zombie:
            found.append(int(name))
    return found


def all_gone(marker: str) -> bool:
    deadline = time.monotonic() + GONE_WITHIN_S
    while marked(marker):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_a_background_writer_is_killed_before_verification(harness: Harness, jobs: str) -> None:
    """Guards against a process the agent left behind (new session, wiped environment:
    no run token) writing the right answer into the deliverable after the agent exited
    with a wrong one, before verification reads it. At -j 2 no per-run orphan sweep
    runs: the run's pid namespace (and cgroup, as root) is what stops it."""
    marker = "bg-late-" + secrets.token_hex(6)
    tasks = only_tasks(harness.operator, "sum-numbers", "word-count")
    run_dir = run_adversary(
        harness,
        "late_writer.py",
        tasks,
        "-j",
        jobs,
        "--audit",
        "none",
        env={"ATTACK": "late", "LATE_MARKER": marker},
    )
    found = records(run_dir)
    assert [r["folder"] for r in found] == ["00-sum-numbers", "01-word-count"]
    summed = found[0]
    assert summed["scores"]["VerificationCorrectness"]["score"] == 0.0, summed[
        "verification_report"
    ]
    assert summed["containment"]["pid_namespace"] is True
    assert summed["containment"]["dies_with_harness"] is True
    if harness.identity == "root":
        assert summed["containment"]["cgroup"] is True, summed["containment"]
    else:
        assert summed["containment"]["cgroup"] is False
        assert summed["containment"]["cgroup_unavailable"]
    assert all(r["strays_killed"] >= 1 for r in found), [r["strays_killed"] for r in found]
    assert all_gone(marker)


def _start_harness(harness: Harness, *args: str, env: dict[str, str]) -> subprocess.Popen[bytes]:
    """``benchguard run`` as its own process (root or the unprivileged user)."""
    operator = harness.operator
    tail = [
        "-m",
        "benchguard",
        "run",
        *args,
        "--out",
        str(operator.results),
        "--home",
        str(operator.agent_home),
        "--quiet",
    ]
    if harness.identity == "root":
        environment = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(REPO / "src"), os.environ.get("PYTHONPATH", "")]),
            **env,
        }
        argv = [sys.executable, *tail]
    else:
        argv, environment = unprivileged_command(operator.root, tail, env)
    return subprocess.Popen(
        argv,
        env=environment,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_a_harness_killed_outright_takes_its_agents_with_it(harness: Harness, sandbox: str) -> None:
    """Guards against an agent (and a child it detached into its own session) running on
    after the harness was SIGKILLed: nothing is left to stop it then, so it could keep
    writing into the home or the workspace. The run's pid namespace init is killed with
    ``unshare``, which dies with the harness (PR_SET_PDEATHSIG)."""
    marker = "bg-outlive-" + secrets.token_hex(6)
    config = write_agent(
        harness.operator.root / "agents",
        "outlive",
        ADVERSARIES / "outlive.py",
        env=("OUTLIVE_MARKER",),
    )
    tasks = only_tasks(harness.operator, "sum-numbers")
    ready = harness.operator.agent_home / "ready"
    process = _start_harness(
        harness,
        str(tasks),
        "--agent",
        str(config),
        "--sandbox",
        sandbox,
        "--audit",
        "none",
        # The agent's "ready" note in the home is read here: the home persists.
        "--home-mode",
        "persistent",
        env={"OUTLIVE_MARKER": marker},
    )
    try:
        deadline = time.monotonic() + 60
        while len(marked(marker)) < 2:
            assert process.poll() is None, "the harness ended before its agent started"
            assert time.monotonic() < deadline, "the agent never started"
            time.sleep(0.05)
        assert ready.exists() or sandbox == "bwrap"
        os.kill(process.pid, signal.SIGKILL)
        process.wait(timeout=10)
        assert all_gone(marker), f"agent processes outlived the harness: {marked(marker)}"
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
        for pid in marked(marker):  # leave nothing behind if the defence failed
            os.kill(pid, signal.SIGKILL)


def test_stale_run_cgroups_of_a_dead_harness_are_swept() -> None:
    """Guards against run cgroups (and the processes in them) left by a harness killed
    outright piling up: the next batch removes those whose owner is gone, and never one
    whose owner still runs."""
    if os.geteuid() != 0:
        pytest.skip("creating cgroups needs root here")
    batch = BatchCgroups.open()
    assert isinstance(batch, BatchCgroups), batch
    parent = batch.directory.parent
    # A harness that is gone: a pid that exited (its start time no longer matches).
    done = subprocess.run(["/bin/true"], check=True)
    assert done.returncode == 0
    stale = parent / f"h{os.getpid()}-1-0"
    stale_run = stale / "run-0-dead"
    stale_run.mkdir(parents=True)
    # And one named as today's harnesses name theirs, with this pid namespace.
    tagged = parent / f"h{os.getpid()}-1-1{cgroup._NAMESPACE_TAG}"
    tagged.mkdir()
    sleeper = subprocess.Popen(
        ["/bin/sh", "-c", 'echo 0 > "$0" && exec sleep 300', str(stale_run / "cgroup.procs")]
    )
    try:
        deadline = time.monotonic() + 10
        while not RunCgroup(stale_run, "").pids():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        assert sweep_stale(parent) == 2
        assert not stale.exists() and not tagged.exists()
        assert sleeper.wait(timeout=10) == -signal.SIGKILL
        # The live batch (this process's) is kept.
        assert batch.directory.is_dir()
    finally:
        if sleeper.poll() is None:
            sleeper.kill()
            sleeper.wait()
        batch.close()
    assert not batch.directory.exists()
    assert cgroup.live_runs() == []


_HARNESS_IN_ANOTHER_PID_NAMESPACE = """
import sys
from benchguard.harness.cgroup import BatchCgroups
batch = BatchCgroups.open()
assert isinstance(batch, BatchCgroups), batch
print(batch.directory, flush=True)
sys.stdin.readline()
batch.close()
"""


def test_a_live_harness_in_another_pid_namespace_is_never_swept() -> None:
    """Guards against a sweep killing another harness's live runs: a harness in its own
    pid namespace (a container sharing this cgroup, ``unshare --pid``) names its batch
    by a pid this namespace cannot look up, so judged by pid and start time here it
    would look gone. The batch name carries the owner's pid namespace, and a sweep
    judges only its own namespace's batches."""
    if os.geteuid() != 0:
        pytest.skip("creating cgroups and pid namespaces needs root here")
    inner = subprocess.Popen(
        [
            "unshare",
            "--pid",
            "--fork",
            "--mount-proc",
            sys.executable,
            "-c",
            _HARNESS_IN_ANOTHER_PID_NAMESPACE,
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(REPO / "src")},
    )
    try:
        assert inner.stdout is not None and inner.stdin is not None
        theirs = Path(inner.stdout.readline().strip())
        assert theirs.is_dir(), theirs
        sweep_stale(theirs.parent)
        assert theirs.is_dir(), "a live harness's batch was swept"
        inner.stdin.write("\n")
        inner.stdin.flush()
        assert inner.wait(timeout=30) == 0
        assert not theirs.exists()
    finally:
        if inner.poll() is None:
            inner.kill()
            inner.wait()


def test_the_v2_hierarchy_is_found_wherever_it_is_mounted(tmp_path: Path) -> None:
    """Guards against a harness that assumes /sys/fs/cgroup: the hybrid layout of these
    machines mounts v2 at /sys/fs/cgroup/unified, a unified host at /sys/fs/cgroup."""
    hybrid = tmp_path / "hybrid"
    hybrid.write_text(
        "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
        "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
        "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n",
        "utf-8",
    )
    unified = tmp_path / "unified"
    unified.write_text(
        "30 23 0:26 /user.slice /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate\n",
        "utf-8",
    )
    none = tmp_path / "none"
    none.write_text("22 27 0:21 / /proc rw,relatime - proc proc rw\n", "utf-8")
    assert v2_mount(hybrid) == (Path("/sys/fs/cgroup/unified"), "/")
    assert v2_mount(unified) == (Path("/sys/fs/cgroup"), "/user.slice")
    assert v2_mount(none) is None


def test_the_separation_probe_works_from_a_working_directory_under_the_temp_directory(
    tmp_path: Path,
) -> None:
    """Guards against CI's fresh clone (a checkout under /tmp): the probe returned to the
    harness's working directory after the temp directory was replaced, found it gone,
    and every run of the suite went unseparated (siblings reachable, recorded only as
    ``separation_unavailable``)."""
    here = tmp_path / "checkout"
    here.mkdir()
    probe = "from benchguard.harness import containment as c; print(c.separation_works())"
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=here,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "None", done.stdout
