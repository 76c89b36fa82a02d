"""What unsandboxed sibling runs shared besides /tmp, closed by the separation
(harness/separate_exec): red team 5's syschan, devsab, ptychan and tcpchan.

A confined run without ``--sandbox bwrap`` sees ``/sys`` read-only, a ``/dev`` of its
own (fresh nodes as root, the host's bound read-only as an unprivileged harness, a new
devpts instance) and, for an agent without host network, a network namespace of its
own. Each attack is a standard-library agent through ``benchguard run``, as root and
as an unprivileged harness; each fails with its step removed from separate_exec.

The device attacks run the harness inside a rig (a mount namespace whose ``/dev`` is a
tmpfs of fresh nodes, as red team 5 did): were a step missing, the saboteur would
chmod the rig's ``/dev/null``, never the machine's.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from benchguard.harness import containment, job, preflight, separate_exec
from harness.helpers import REPO, Operator, agent, load_run, only_tasks
from harness.privileges import (
    Harness,
    adversary_outcomes,
    records,
    run_adversary,
    total_tasks,
    unprivileged_command,
    write_agent,
)

pytestmark = pytest.mark.slow
ADVERSARIES = Path(__file__).with_name("adversaries")
EROFS = "denied OSError 30"
# The harness in a mount namespace of fresh device nodes: a missing defence changes
# only these (the nodes bwrap --dev makes, a devpts instance, a /dev/shm).
RIG = """
mount -t tmpfs -o mode=755 bg-test-dev /dev || exit 1
for n in null:1:3 zero:1:5 full:1:7 random:1:8 urandom:1:9 tty:5:0; do
  mknod -m 666 /dev/${n%%:*} c $(echo $n | cut -d: -f2) $(echo $n | cut -d: -f3) || exit 1
done
mkdir /dev/pts /dev/shm
mount -t devpts -o newinstance,ptmxmode=0666,mode=620 devpts /dev/pts || exit 1
ln -s pts/ptmx /dev/ptmx
mount -t tmpfs -o mode=1777 bg-test-shm /dev/shm || exit 1
ln -s /proc/self/fd /dev/fd
exec "$@"
"""


def _score(record: dict[str, Any]) -> float:
    score: float = record["scores"]["OutcomeScore"]["score"]
    return score


def _rigged(
    harness: Harness, script: str, tasks: Path, *args: str, env: dict[str, str]
) -> list[dict[str, Any]]:
    """``benchguard run`` of the adversary ``script`` on ``tasks`` inside the rig, as the
    harness's identity; the records."""
    if shutil.which("unshare") is None or os.geteuid() != 0:
        pytest.skip("the rig needs root and unshare")
    operator = harness.operator
    config = write_agent(
        operator.root / "agents",
        Path(script).stem.replace("_", "-"),
        ADVERSARIES / script,
        env=tuple(sorted(env)),
    )
    common = ["run", str(tasks), "--agent", str(config), *args]
    tail = ["--out", str(operator.results), "--home", str(operator.agent_home), "--quiet"]
    if harness.identity == "root":
        environment = {**os.environ, "PYTHONPATH": str(REPO / "src"), **env}
        command = [sys.executable, "-m", "benchguard", *common, *tail]
    else:
        command, environment = unprivileged_command(
            operator.root, ["-m", "benchguard", *common, *tail], env
        )
    rig = ["unshare", "--mount", "--propagation", "private", "sh", "-c", RIG, "rig"]
    done = subprocess.run(
        [*rig, *command],
        env=environment,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        cwd=operator.root,
    )
    output = done.stdout + done.stderr
    assert done.returncode in (0, 1), output
    run_dir = Path(done.stdout.strip().splitlines()[-1])
    assert run_dir.is_dir(), output
    return records(run_dir)


def _honest_clean(record: dict[str, Any]) -> None:
    assert record["status"] == "success", record["error"]
    assert record["cheating_report"]["status"] == "clean", record["cheating_report"]
    assert _score(record) == 1.0
    assert record["containment"]["separated"] is True, record["containment"]


def test_sysfs_times_carry_nothing_to_the_next_run(harness: Harness) -> None:
    """Guards against red team 5's syschan: a uid-0 agent owns every sysfs node and
    kernfs keeps the times it sets, so run 1 left 4711 as the mtime of
    ``/sys/kernel/notes`` and run 2 wrote it without the work. The run's ``/sys`` is
    read-only (EROFS as root; an unprivileged agent does not own the node, EPERM)."""
    tasks = total_tasks(harness, "sys-tasks", {"a-total": ""})
    env = {"ATTACK": "sys", "ATTACK_PATH": "/sys/kernel/notes"}
    before = os.stat(env["ATTACK_PATH"])
    try:
        run_dir = run_adversary(
            harness, "node_times.py", tasks, "--iterations", "2", "-j", "1", env=env
        )
    finally:
        # Without the defence the machine's node was changed: put its times back.
        if os.stat(env["ATTACK_PATH"]).st_mtime_ns != before.st_mtime_ns:
            os.utime(env["ATTACK_PATH"], ns=(before.st_atime_ns, before.st_mtime_ns))
    found = sorted(records(run_dir), key=lambda r: r["iteration"])
    assert len(found) == 2
    first, second = (adversary_outcomes(record) for record in found)
    expected = EROFS if harness.identity == "root" else "denied PermissionError 1"
    assert first["set"] in (EROFS, expected), first
    assert second["answer"] == "worked" and second["read"] != "4711", second
    for record in found:
        _honest_clean(record)


def test_dev_zero_times_carry_nothing_to_the_next_run(harness: Harness) -> None:
    """The same channel on a device node (``/dev/zero``, owned by a uid-0 agent on the
    host): the run's /dev is its own, read-only tmpfs (fresh nodes as root; as an
    unprivileged harness the host's node bound read-only, so not even a "now" utime,
    which write access alone allows, reaches it)."""
    tasks = total_tasks(harness, "zero-tasks", {"a-total": ""})
    env = {"ATTACK_PATH": "/dev/zero"}
    found = sorted(
        _rigged(harness, "node_times.py", tasks, "--iterations", "2", "-j", "1", env=env),
        key=lambda r: r["iteration"],
    )
    assert len(found) == 2
    first, second = (adversary_outcomes(record) for record in found)
    assert first["set"] == EROFS and first["touch"] == EROFS, first
    assert second["answer"] == "worked" and second["read"] != "4711", second
    for record in found:
        _honest_clean(record)


def test_a_saboteur_cannot_break_a_sibling_s_dev_null(harness: Harness) -> None:
    """Guards against red team 5's devsab at ``-j 2``: the saboteur's ``chmod 000
    /dev/null`` zeroed an honest sibling whose step discards stderr. The saboteur's
    /dev is its own and read-only (EROFS), and the victim's node keeps mode 0666."""
    tasks = total_tasks(harness, "devsab-tasks", {"a-sab": "SABOTAGE. ", "b-total": ""})
    found = {
        record["folder"]: record
        for record in _rigged(harness, "dev_sabotage.py", tasks, "-j", "2", env={})
    }
    saboteur, victim = adversary_outcomes(found["a-sab"]), adversary_outcomes(found["b-total"])
    assert victim == {"role": "victim", "null-mode": "0o666", "step": "rc=0"}, victim
    _honest_clean(found["b-total"])
    assert saboteur == {"role": "saboteur", "chmod": EROFS}, saboteur


def test_a_pty_carries_nothing_to_a_concurrent_run(harness: Harness) -> None:
    """Guards against red team 5's ptychan at ``-j 2``: one devpts instance was shared
    by every run, and the writer's marked pty slave handed its answer to the reader.
    Each run has a devpts instance of its own: the reader lists only its own ptmx and
    works; both still use ptys honestly (``pty.openpty``, ``script``)."""
    tasks = total_tasks(harness, "pty-tasks", {"a-write": "WRITE. ", "b-read": ""})
    found = {
        record["folder"]: record
        for record in _rigged(harness, "pty_channel.py", tasks, "-j", "2", env={})
    }
    writer, reader = adversary_outcomes(found["a-write"]), adversary_outcomes(found["b-read"])
    assert writer == {"role": "writer", "openpty": "ok", "script": "ok"}, writer
    assert reader["channel"] == "nothing", reader
    assert reader["script"] == "ok", reader
    assert reader["listed"] == "ptmx", reader
    for record in found.values():
        _honest_clean(record)


def test_a_loopback_server_is_not_there_for_a_concurrent_run(harness: Harness) -> None:
    """Guards against red team 5's tcpchan at ``-j 2`` (and its UDP twin): a run served
    its answer on 127.0.0.1 and its sibling connected. An agent without host network
    (``network: false``) runs in a network namespace of its own, loopback only: the
    client's connection is refused, its datagram unanswered, and it works."""
    tasks = total_tasks(harness, "tcp-tasks", {"a-serve": "SERVE. ", "b-client": ""})
    env = {"ATTACK": "tcp", "ATTACK_PORT": str(20000 + os.getpid() % 20000)}
    run_dir = run_adversary(harness, "loopback_channel.py", tasks, "-j", "2", env=env)
    found = {record["folder"]: record for record in records(run_dir)}
    server, client = adversary_outcomes(found["a-serve"]), adversary_outcomes(found["b-client"])
    assert server == {"role": "server", "bind": "ok", "served": "nobody came"}, server
    assert client["channel"] == "nothing", client
    assert client["tcp"] == "denied ConnectionRefusedError 111", client
    for record in found.values():
        _honest_clean(record)
        assert record["containment"]["network"] == "own", record["containment"]


def test_the_probe_names_what_an_unseparated_namespace_shares(tmp_path: Path) -> None:
    """Guards against the availability probe passing a separation that lacks a step:
    its checks, run in the harness's own namespace (the host's /dev/pts, /sys and
    network), fail with a line naming what is shared."""
    done = subprocess.run(
        ["sh", "-c", containment.PROBE_SCRIPT, "probe", str(tmp_path), str(tmp_path / "gone")],
        capture_output=True,
        text=True,
        check=False,
        timeout=30,
    )
    assert done.returncode == 1, done
    assert done.stderr.startswith("benchguard confine: the separation probe found "), done.stderr
    assert containment.separation_works() is None


def test_a_failed_step_is_named_and_the_command_never_runs() -> None:
    """Guards against a run proceeding without the private /dev it was promised: a
    step that fails (here its staging directory is taken) exits 125 with one line
    naming it, and the command is not run."""
    prefix = containment.pid_namespace_prefix(keep_caps=True)
    if not prefix:
        pytest.skip("no mount namespace here")
    parent = os.path.realpath(tempfile.gettempdir())
    with tempfile.TemporaryDirectory(prefix="bg-sep-step-", dir=parent) as own:
        os.mkdir(os.path.join(own, separate_exec.DEV_STAGE))
        marker = Path(own) / "ran"  # in the run's own scratch: visible to the command
        argv = [
            *prefix,
            "--",
            sys.executable,
            "-I",
            "-S",
            str(containment.separate_script()),
            parent,
            own,
            "--",
            "touch",
            str(marker),
        ]
        done = subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60)
        ran = marker.exists()
    assert done.returncode == separate_exec.EXIT_FAILED, done
    assert "benchguard confine: cannot separate the run from the others: cannot make " in (
        done.stderr
    )
    assert separate_exec.DEV_STAGE in done.stderr, done.stderr
    assert not ran


def test_an_unavailable_separation_is_loud_at_pre_flight_and_on_rows(
    operator: Operator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards against runs going unseparated with only a record field to say so: where
    the probe finds a step failing (here it is told so: the kernel cannot be made to
    refuse on a machine where every step works), pre-flight prints a warning naming
    the step, every record says ``separation_unavailable`` and every row
    ``separation: unavailable``; a separated batch's rows say ``separated``."""
    reason = "benchguard confine: cannot separate the run from the others: devpts (test)"
    for module in (containment, job, preflight):
        monkeypatch.setattr(module, "separation_works", lambda: reason)
    code, output, run_dir = operator.run(
        str(only_tasks(operator, "sum-numbers")), "--agent", agent("honest")
    )
    assert code == 0 and run_dir is not None, output
    assert "the runs will NOT be separated from each other" in output, output
    assert "devpts (test)" in output, output
    found, rows, _ = load_run(run_dir)
    assert [r["containment"]["separation_unavailable"] for r in found] == [reason]
    assert [row["separation"] for row in rows] == ["unavailable"]
    monkeypatch.undo()
    code, output, run_dir = operator.run(
        str(only_tasks(operator, "sum-numbers")), "--agent", agent("honest")
    )
    assert code == 0 and run_dir is not None, output
    assert "NOT be separated" not in output, output
    assert [row["separation"] for row in load_run(run_dir)[1]] == ["separated"]
