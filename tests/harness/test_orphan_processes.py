"""An agent's background processes never outlive its run, even outside its group.

Unsandboxed, an agent shares the harness's user: a child started with ``setsid`` (or a
double fork) leaves the process group the timeout kill covers, and could keep writing
into the shared agent home during later tasks.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from benchguard.harness.process import (
    RUN_TOKEN_ENV,
    ChildBaseline,
    become_subreaper,
    kill_run,
    read_process,
    run_process,
)
from harness.helpers import (
    AGENTS,
    GONE_WITHIN_S,
    Operator,
    eventually_gone,
    load_run,
    only_tasks,
)

pytestmark = pytest.mark.slow


def _wait_for(path: Path) -> int:
    deadline = time.monotonic() + GONE_WITHIN_S
    while time.monotonic() < deadline:
        text = path.read_text("utf-8").strip() if path.exists() else ""
        if text:
            return int(text)
        time.sleep(0.02)
    raise AssertionError(f"{path} was never written")


# The agent starts a new session (out of its process group), which starts `sleep`, and
# leaves (exits) or hangs (times out) only once both pids are written.
SETSID_AGENT = (
    "setsid /bin/sh -c 'echo $$ > session.pid; sleep 30 & echo $! > sleep.pid; wait; "
    "touch late' & "
    "while [ ! -s session.pid ] || [ ! -s sleep.pid ]; do sleep 0.01; done; {tail}"
)


@pytest.mark.parametrize(("tail", "timeout_s"), [("exit 0", 60.0), ("sleep 60", 1.0)])
def test_a_setsid_grandchild_dies_with_its_run(tmp_path: Path, tail: str, timeout_s: float) -> None:
    """Guards against a setsid'd background process surviving its run (finished or
    timed out): killing the agent's process group does not reach it."""
    finished = run_process(
        ["/bin/sh", "-c", SETSID_AGENT.format(tail=tail)],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        timeout_s=timeout_s,
        stdout_file=tmp_path / "o",
        stderr_file=tmp_path / "e",
    )
    assert finished.timed_out is (tail != "exit 0")
    session, sleeper = _wait_for(tmp_path / "session.pid"), _wait_for(tmp_path / "sleep.pid")
    assert eventually_gone(session) and eventually_gone(sleeper)
    assert finished.strays_killed >= 1
    assert not (tmp_path / "late").exists()


def test_a_run_kills_only_its_own_processes(tmp_path: Path) -> None:
    """Guards against a run's sweep under -j N killing a concurrent run's processes:
    only processes carrying the run's own token are touched."""
    become_subreaper()
    mine = subprocess.Popen(["sleep", "30"], env={"PATH": "/usr/bin:/bin", RUN_TOKEN_ENV: "a1"})
    other = subprocess.Popen(["sleep", "30"], env={"PATH": "/usr/bin:/bin", RUN_TOKEN_ENV: "b2"})
    try:
        assert kill_run("a1") == 1
        mine.wait(timeout=GONE_WITHIN_S)
        assert other.poll() is None, "the other run's process was killed"
    finally:
        for process in (mine, other):
            process.kill()
            process.wait()


def test_the_batch_sweep_spares_children_older_than_the_batch(tmp_path: Path) -> None:
    """Guards against the batch-end sweep killing a process the host program started
    before the batch (a test's server, say), while still killing a tokenless orphan."""
    become_subreaper()
    older = subprocess.Popen(["sleep", "30"])
    try:
        baseline = ChildBaseline.now()
        pid_file = tmp_path / "orphan.pid"
        # A double fork with an empty environment: no token, re-parented to us.
        subprocess.run(
            ["/bin/sh", "-c", f"env -i /bin/sh -c 'echo $$ > {pid_file}; exec sleep 30' &"],
            check=True,
        )
        orphan = _wait_for(pid_file)
        info = read_process(orphan)
        assert info is not None and info.ppid == os.getpid(), "the subreaper adopted it"
        assert baseline.sweep_new() == 1
        assert eventually_gone(orphan)
        assert older.poll() is None
    finally:
        older.kill()
        older.wait()


# Each run first notes whether an earlier run's orphan is still alive (by the marker in
# its command line, which the harness sees too: the run's own pid namespace hides it from
# the next run, and pids inside mean nothing outside), then leaves its own: a child that
# wipes its environment and double-forks (no run token), sleeps and would then write
# into the agent home.
ORPHAN_AGENT = """\
import os, secrets, sys, time
sys.path.insert(0, {agents!r})
from scripted import solve

pids = os.environ["ORPHAN_PID_DIR"]
for name in sorted(os.listdir(pids)):
    if any(name.encode() in open(f"/proc/{{p}}/cmdline", "rb").read()
           for p in os.listdir("/proc") if p.isdigit() and os.path.exists(f"/proc/{{p}}/cmdline")):
        open(os.path.join(pids, "..", "seen-alive"), "a").write(name + "\\n")
marker = "bg-orphan-" + secrets.token_hex(6)
mine = os.path.join(pids, marker)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        script = f"touch {{mine}}.tmp && mv {{mine}}.tmp {{mine}}; sleep 30; touch $HOME/late"
        os.execve("/bin/sh", ["sh", "-c", script, marker], {{"HOME": os.environ["HOME"]}})
    os._exit(0)
while not os.path.exists(mine):
    time.sleep(0.01)
print(solve(sys.argv[1]))
"""


def _marked(marker: str) -> list[int]:
    """The live processes whose command line holds ``marker`` (seen from the harness)."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            if marker.encode() in Path(f"/proc/{name}/cmdline").read_bytes():
                info = read_process(int(name))
                if info is not None and not info.zombie:
                    found.append(int(name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("jobs", ["1", "2"])
def test_an_orphan_with_a_wiped_environment_does_not_outlive_the_batch(
    operator: Operator, tmp_path: Path, jobs: str
) -> None:
    """Guards against a double-forked, setsid'd process with a cleared environment (no
    run token to find it by) living on after `benchguard run` returns, and, with -j 1,
    against it still running while the next task runs."""
    agent_dir = tmp_path / "orphan-agent"
    agent_dir.mkdir()
    (agent_dir / "orphan_agent.py").write_text(ORPHAN_AGENT.format(agents=str(AGENTS)), "utf-8")
    (agent_dir / "orphan.yaml").write_text(
        "name: orphan\n"
        'argv: ["{python}", "{agent_dir}/orphan_agent.py", "{prompt}"]\n'
        "env: [ORPHAN_PID_DIR]\n"
        "trajectory: jsonl\n"
        "model: scripted\n",
        "utf-8",
    )
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    tasks = only_tasks(operator, "sum-numbers", "word-count")
    run_dir = operator.run_ok(
        str(tasks),
        "--agent",
        str(agent_dir / "orphan.yaml"),
        "-j",
        jobs,
        # The orphans note their pids in a directory of the test's, outside any run's
        # Landlock allow-list; what kills them is not Landlock.
        "--unconfined",
        # Untraced: under the audit the tracer kills a run's orphans itself
        # (test_adversary_audit.py); this checks the token and baseline sweeps.
        "--audit",
        "none",
        env={"ORPHAN_PID_DIR": str(pid_dir)},
    )
    records, _, _ = load_run(run_dir)
    assert [r["status"] for r in records] == ["success", "success"]
    markers = sorted(p.name for p in pid_dir.iterdir())
    assert len(markers) == 2
    deadline = time.monotonic() + GONE_WITHIN_S
    while any(_marked(m) for m in markers) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not [m for m in markers if _marked(m)], "an orphan outlived the batch"
    assert not (operator.agent_home / "late").exists()
    # Each record says an orphan was still alive when its agent ended (the run's pid
    # namespace init counted it, and the kernel killed it with the init).
    assert all(r["strays_killed"] >= 1 for r in records), records
    assert all(r["containment"]["pid_namespace"] for r in records), records
    if jobs == "1":
        assert not (tmp_path / "seen-alive").exists(), "an orphan ran into the next task"
