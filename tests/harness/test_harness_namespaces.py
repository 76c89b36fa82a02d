"""The harness's own sandboxes are named by the namespace it registered before they ran.

The flake this guards (reproduced before the fix: ``-j 2 --sandbox bwrap`` as root,
honest example runs under CPU load, about one batch in five ended ``review``): a bwrap
sandbox that opened protected material and ended before a fanotify observer read its
events left the observer a mount it never learned, a pid that was gone and a path
relative to a detached bind, so the access became ``unattributed`` material on an honest
run. The test makes that order certain, with no sleep: the observer cannot read before
its run's namespace exists, and that namespace is made only after the box has exited.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchguard.harness import cgroup
from benchguard.harness.audit import protected_set
from benchguard.harness.fanotify import FanotifyObserver, namespace_mounts, observe, probe_fanotify
from benchguard.harness.harness_namespaces import REGISTRY, SandboxGate
from benchguard.harness.sandbox import SandboxSpec, bwrap_argv

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="fanotify and namespaces need root")

SECRET = "expected answer 42\n"


@pytest.fixture
def tree(tmp_path: Path) -> Iterator[Path]:
    (tmp_path / "tasks" / "t1").mkdir(parents=True)
    (tmp_path / "tasks" / "t1" / "expected.txt").write_text(SECRET, "utf-8")
    for name in ("results", "scratch/bg-run-own/workspace", "box/work", "box/home"):
        (tmp_path / name).mkdir(parents=True)
    yield tmp_path


def _observer(tree: Path, run: cgroup.RunCgroup, gate: Path) -> FanotifyObserver:
    protected = protected_set(
        tasks_dirs=[tree / "tasks"],
        results_root=tree / "results",
        own_scratch=tree / "scratch" / "bg-run-own",
    )
    assert probe_fanotify() is None, probe_fanotify()
    return observe(protected, run, own_namespace=True, gate=gate)


def _run_cgroup() -> cgroup.RunCgroup:
    batch = cgroup.process_batch()
    assert isinstance(batch, cgroup.BatchCgroups), batch
    return batch.new_run("nsreg")


def _box_reads(tree: Path, target: Path) -> None:
    """A box the harness starts (as verification does) whose one process reads
    ``target`` and exits at once; returns once it is gone."""
    spec = SandboxSpec(
        workspace=tree / "box" / "work",
        home=tree / "box" / "home",
        read_only=(target.parent,),
        workspace_writable=False,
    )
    gate = SandboxGate.make(tree / "box")
    try:
        argv = bwrap_argv(
            spec, ["cat", str(target)], bwrap=shutil.which("bwrap") or "bwrap", gate=gate
        )
        box = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        gate.admit_box(lambda report: [int(str(report.get("child-pid", 0)))])
        out, err = box.communicate(timeout=60)
        assert box.returncode == 0, err
        assert out.decode() == SECRET
        assert gate.problem is None and gate.token is not None
    finally:
        gate.close()


def test_a_finished_grading_box_is_never_this_run_s_unattributed_access(tree: Path) -> None:
    """Guards against an honest run gated to review for the harness's own grading box
    of a sibling: the box read a task file and was gone, namespace and all, before this
    run's observer read the event. Registered before it ran, its mounts are the
    harness's (checked: without the registry lookup the read is recorded
    ``unattributed``)."""
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is required on CI")
    run = _run_cgroup()
    gate = tree / "gate"
    os.mkfifo(gate, 0o600)
    observer = _observer(tree, run, gate)
    member: subprocess.Popen[bytes] | None = None
    try:
        # The observer reads nothing until the run's namespace is learned (its gate).
        _box_reads(tree, tree / "tasks" / "t1" / "expected.txt")
        assert REGISTRY.held() == 0
        # Now the run's init: in its cgroup, in a mount namespace of its own, waiting
        # on the gate as the harness's init does.
        member = subprocess.Popen(
            [
                "sh",
                "-c",
                'echo 0 > "$0" && exec unshare --mount --propagation private sh -c \'read -r _ < "$0"\' "$1"',
                str(run.procs_file),
                str(gate),
            ]
        )
        member.wait(timeout=60)
    finally:
        summary = observer.finish()
        if member is not None and member.poll() is None:
            member.kill()
            member.wait(timeout=60)
        run.remove()
    assert summary["complete"], summary["incomplete_reason"]
    assert summary["accesses"] == [], summary["accesses"]
    assert summary["protected_accesses"] == 0, summary["attributed_by"]


def test_a_box_reading_material_with_no_run_watching_still_reads_it(tree: Path) -> None:
    """The gate never withholds the command: a box with no observer runs as before."""
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is required on CI")
    _box_reads(tree, tree / "tasks" / "t1" / "expected.txt")
    assert REGISTRY.held() == 0


JOIN = 'echo 0 > "$0" && exec "$@"'


def test_an_agent_sandbox_is_registered_as_its_run_s_never_the_harness_s(tree: Path) -> None:
    """Guards against an agent's opens classed as the harness's own: a sandbox started in
    a run's cgroup is registered for that run (its mounts name the run), found by the
    namespace inode bwrap reported among that cgroup's members, and so is the one the
    command unshares inside it (the launcher's, for a fresh home)."""
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is required on CI")
    run = _run_cgroup()
    spec = SandboxSpec(workspace=tree / "box" / "work", home=tree / "box" / "home")
    gate = SandboxGate.make(tree / "box")
    sandbox: subprocess.Popen[bytes] | None = None
    try:
        argv = bwrap_argv(
            spec,
            # As the launcher does for a fresh home: one more mount namespace, inside.
            ["unshare", "--mount", "sh", "-c", "read -r _; exit 0"],
            bwrap=shutil.which("bwrap") or "bwrap",
            gate=gate,
        )
        sandbox = subprocess.Popen(
            ["sh", "-c", JOIN, str(run.procs_file), *argv], stdin=subprocess.PIPE
        )
        gate.admit_run(run.name, lambda _report: run.pids())
        assert gate.problem is None and gate.token is not None and gate.followed is not None
        mounts: set[int] = set()
        for token in (gate.token, gate.followed):
            fd = REGISTRY.fd_of(token)
            assert fd is not None
            mounts |= namespace_mounts(fd) or set()
        # The command runs in the namespace followed (bwrap's own init in bwrap's).
        names = {
            f"mnt:[{os.fstat(fd).st_ino}]"
            for fd in (REGISTRY.fd_of(gate.token), REGISTRY.fd_of(gate.followed))
            if fd is not None
        }
        running = {os.readlink(f"/proc/{p}/ns/mnt") for p in run.pids()} - {_own_namespace()}
        assert len(names) == 2 and running == names
        assert mounts
        assert {REGISTRY.lookup(mount) for mount in mounts} == {(True, run.name)}
        assert sandbox.stdin is not None
        sandbox.stdin.close()
        assert sandbox.wait(timeout=60) == 0
    finally:
        gate.close()
        if sandbox is not None and sandbox.poll() is None:
            sandbox.kill()
            sandbox.wait(timeout=60)
        run.remove()
    # Released, its mounts still name the run (their ids are never reused).
    assert {REGISTRY.lookup(mount) for mount in mounts} == {(True, run.name)}


def _own_namespace() -> str:
    return os.readlink("/proc/self/ns/mnt")
