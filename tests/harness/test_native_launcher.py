"""The native launcher (confine_exec.c) confines exactly as the Python one does.

Both launchers run the same probe agent under the same policy; the kernel's answers
(what it let the probe read, write, list and execute, and the process's capability,
no_new_privs and seccomp state) must be identical, and the native one must really be
the one the harness runs here (a C compiler is a system dependency).
"""

from __future__ import annotations

import dataclasses
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from benchguard.harness import cgroup, launcher_build
from benchguard.harness.confine import (
    DEVICES,
    EXIT_CONFINE_FAILED,
    LAUNCHER_PREFIX,
    SYSTEM_READ,
    SYSTEM_READ_EXEC,
    Policy,
    interpreter_trees,
    launcher_argv,
    launcher_files,
)
from benchguard.harness.containment import RunContainment
from benchguard.harness.process import (
    ChildBaseline,
    become_subreaper,
    descendants,
    own_tree,
    process_table,
    read_process,
    wait_exit,
)

# For each directory: read its file, list it, write a new file, run its script.
PROBE = r"""
for d in "$@"; do
  r=denied; cat "$d/f" >/dev/null 2>&1 && r=read
  l=denied; ls "$d" >/dev/null 2>&1 && l=listed
  w=denied; (: > "$d/new-$$") 2>/dev/null && w=wrote
  x=denied; "$d/run.sh" >/dev/null 2>&1 && x=ran
  echo "$(basename "$d") $r $l $w $x"
done
grep -E '^(Cap(Inh|Prm|Eff|Amb|Bnd)|NoNewPrivs|Seccomp):' /proc/self/status
"""
XATTR = "import os,sys\ntry:\n os.setxattr(sys.argv[1],'user.x',b'1')\nexcept OSError as e:\n print(e.errno)\nelse:\n print('set')"


def _tree(root: Path) -> dict[str, Path]:
    dirs = {}
    for name in ("granted-rw", "granted-ro", "granted-x", "hidden"):
        folder = root / name
        folder.mkdir()
        (folder / "f").write_text("material\n")
        script = folder / "run.sh"
        script.write_text("#!/bin/sh\nexit 0\n")
        script.chmod(0o755)
        dirs[name] = folder
    return dirs


def _policy(dirs: dict[str, Path]) -> Policy:
    read_exec = {*SYSTEM_READ_EXEC, *(str(p) for p in interpreter_trees())}
    read_exec.update(str(p) for p in launcher_files())
    read_exec.add(str(dirs["granted-x"]))
    return Policy(
        read_exec=tuple(sorted(read_exec)),
        read=(*SYSTEM_READ, str(dirs["granted-ro"])),
        read_write=(str(dirs["granted-rw"]),),
        devices=DEVICES,
    )


def _launch(
    policy: Policy, agent: list[str], *, python: bool, cwd: Path
) -> subprocess.CompletedProcess[str]:
    """``agent`` through the Python launcher or the native one (the same policy)."""
    saved = os.environ.get(launcher_build.CHOICE_ENV)
    os.environ[launcher_build.CHOICE_ENV] = "python" if python else "native"
    try:
        argv = launcher_argv(policy, agent)
    finally:
        if saved is None:
            del os.environ[launcher_build.CHOICE_ENV]
        else:
            os.environ[launcher_build.CHOICE_ENV] = saved
    assert (argv[0] == sys.executable) is python, argv[:3]
    return subprocess.run(argv, capture_output=True, text=True, cwd=cwd, timeout=60, check=False)


def test_the_harness_runs_the_native_launcher_here() -> None:
    """Guards against the speed-up silently not being there: CI has a C compiler
    (Makefile system-deps), so the launcher is built and the argv starts with it."""
    native = launcher_build.native_launcher()
    assert native is not None
    argv = launcher_argv(Policy(), ["/bin/true"])
    assert argv[0] == str(native)
    assert any(arg.startswith("seccomp.program=") for arg in argv)


def test_both_launchers_let_the_kernel_grant_the_same(tmp_path: Path) -> None:
    """Guards against the native launcher drifting from the Python one: the same
    policy gives the same reads, listings, writes and execs, and the same empty
    capability sets, no_new_privs and seccomp filter mode (the hidden directory is
    denied everything: a launcher that skipped Landlock fails here)."""
    dirs = _tree(tmp_path)
    policy = _policy(dirs)
    agent = ["/bin/sh", "-c", PROBE, "sh", *(str(d) for d in dirs.values())]
    answers = {}
    for python in (True, False):
        done = _launch(policy, agent, python=python, cwd=tmp_path)
        assert done.returncode == 0, done.stderr
        answers[python] = done.stdout
    assert answers[True] == answers[False]
    lines = answers[False].splitlines()
    assert "hidden denied denied denied denied" in lines
    assert "granted-rw read listed wrote ran" in lines
    assert "granted-ro read listed denied denied" in lines
    assert "granted-x read listed denied ran" in lines
    assert "Seccomp:\t2" in lines and "NoNewPrivs:\t1" in lines
    for name in ("CapInh", "CapPrm", "CapEff", "CapAmb"):
        assert f"{name}:\t0000000000000000" in lines


def test_the_native_launcher_installs_the_seccomp_filter(tmp_path: Path) -> None:
    """Guards against the filter being skipped by the native launcher: setxattr on a
    writable file answers EOPNOTSUPP under it; without the filter (seccomp=0) the same
    call gets past it (the test can fail)."""
    dirs = _tree(tmp_path)
    target = dirs["granted-rw"] / "f"
    agent = [sys.executable, "-I", "-c", XATTR, str(target)]
    filtered = _launch(_policy(dirs), agent, python=False, cwd=tmp_path)
    assert filtered.returncode == 0, filtered.stderr
    assert filtered.stdout.strip() == str(95)  # EOPNOTSUPP
    unfiltered = _launch(
        dataclasses.replace(_policy(dirs), seccomp=False), agent, python=False, cwd=tmp_path
    )
    assert unfiltered.stdout.strip() != str(95), unfiltered.stdout


@pytest.mark.parametrize(
    "bad", ["write_all=/", "read_exec", "confine=2", "home.lower=/x", "seccomp.program=zz"]
)
def test_the_native_launcher_refuses_what_it_does_not_know(tmp_path: Path, bad: str) -> None:
    """Guards against a policy entry (or a malformed filter) being skipped: the native
    launcher exits 125 with its own line, and the agent never starts."""
    native = launcher_build.native_launcher()
    assert native is not None
    dirs = _tree(tmp_path)
    marker = dirs["granted-rw"] / "ran"
    base = launcher_argv(_policy(dirs), ["/bin/sh", "-c", f": > {marker}"])
    split = base.index("--")
    argv = [*base[:split], bad, *base[split:]]
    if bad.startswith("seccomp.program="):
        argv = [a for a in base[:split] if not a.startswith("seccomp.program=")]
        argv = [*argv, bad, *base[split:]]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == EXIT_CONFINE_FAILED, done.stderr
    assert done.stderr.startswith(LAUNCHER_PREFIX), done.stderr
    assert not marker.exists()
    assert subprocess.run(base, check=False, timeout=60).returncode == 0 and marker.exists()


def test_a_launcher_writable_by_others_is_not_trusted(tmp_path: Path) -> None:
    """Guards against running a launcher someone else could have rewritten (its code
    runs before confinement on every run): group- or world-writable is refused."""
    program = tmp_path / "confine-exec-x"
    program.write_bytes(b"\x7fELF")
    program.chmod(0o755)
    assert launcher_build._trusted(program)
    program.chmod(0o775)
    assert not launcher_build._trusted(program)
    program.chmod(0o757)
    assert not launcher_build._trusted(program)
    assert not stat.S_ISREG(tmp_path.lstat().st_mode) and not launcher_build._trusted(tmp_path)


def _run_cgroup() -> cgroup.RunCgroup:
    batch = cgroup.BatchCgroups.open()
    assert isinstance(batch, cgroup.BatchCgroups), batch
    return batch.new_run("spawn-test")


def test_spawn_starts_the_command_inside_the_run_cgroup() -> None:
    """Guards against the run's first process starting outside its cgroup (it could
    fork a daemon before joining): the command's own first act reads /proc/self/cgroup
    and must name the run's cgroup; the spawner itself is not a member; the command's
    exit code and killing signal come back as the spawner's."""
    native = launcher_build.native_launcher()
    assert native is not None
    run = _run_cgroup()
    try:
        argv = RunContainment(run, None, (), ()).outer(
            ["/bin/sh", "-c", "cat /proc/self/cgroup; exit 7"]
        )
        assert argv[:2] == [str(native), "--spawn"]
        done = subprocess.run(argv, capture_output=True, text=True, timeout=60, check=False)
        assert done.returncode == 7, done.stderr
        assert f"0::{run.name}\n" in done.stdout
        killed = subprocess.run(
            [str(native), "--spawn", str(run.directory), "--", "/bin/sh", "-c", "kill -9 $$"],
            timeout=60,
            check=False,
        )
        assert killed.returncode == -9
    finally:
        run.remove()


def test_a_killed_spawner_takes_the_run_with_it(tmp_path: Path) -> None:
    """Guards against the command outliving the process the harness waits on: SIGKILL
    to the spawner (a harness's wait ended by force) kills the command too."""
    native = launcher_build.native_launcher()
    assert native is not None
    run = _run_cgroup()
    pid_file = tmp_path / "pid"
    try:
        spawner = subprocess.Popen(
            [
                str(native),
                "--spawn",
                str(run.directory),
                "--",
                "/bin/sh",
                "-c",
                f"echo $$ > {pid_file}; exec sleep 60",
            ],
        )
        deadline = time.monotonic() + 30
        while not pid_file.exists() or not pid_file.read_text().strip():
            assert time.monotonic() < deadline
            time.sleep(0.01)
        child = int(pid_file.read_text())
        spawner.kill()
        spawner.wait(timeout=30)
        deadline = time.monotonic() + 30
        while (info := read_process(child)) is not None and not info.zombie:
            assert time.monotonic() < deadline, "the command outlived its spawner"
            time.sleep(0.01)
    finally:
        run.remove()


def test_the_own_tree_listing_finds_every_descendant() -> None:
    """Guards against the sweeps' cheaper listing (own_tree: the children files, not
    the whole process table) missing a process: a shell with 700 children (its
    children file is longer than a page) and a double-forked orphan; own_tree must
    list exactly the descendants the full table shows, and they are swept."""
    become_subreaper()
    script = "for i in $(seq 700); do sleep 60 & done; (setsid sleep 60 &); echo ready; wait"
    shell = subprocess.Popen(["/bin/sh", "-c", script], stdout=subprocess.PIPE)
    try:
        assert shell.stdout is not None and shell.stdout.readline() == b"ready\n"
        deadline = time.monotonic() + 30
        while True:
            full = descendants([os.getpid()], process_table())
            if len(full) >= 702 or time.monotonic() > deadline:
                break
            time.sleep(0.05)
        mine = own_tree()
        assert len(full) >= 702
        assert sorted(p.pid for p in full) == sorted(p for p in mine if p != os.getpid())
    finally:
        shell.kill()
        shell.wait()
        baseline = ChildBaseline(frozenset())
        baseline.sweep_new()
    assert not [p for p in descendants([os.getpid()], process_table()) if not p.zombie]


@pytest.mark.parametrize("python", [True, False], ids=["python", "native"])
def test_a_refused_overlay_falls_back_to_a_copy(tmp_path: Path, python: bool) -> None:
    """Guards against the copy fallback writing into the operator's home: the kernel
    refuses an overlay whose work directory is on another filesystem than its upper
    layer (/dev/shm here), so the launcher copies the home, says so in its marker, and
    the agent's write lands in the copy only."""
    home, layers = tmp_path / "home", tmp_path / "layers"
    (home / "private").mkdir(parents=True)
    (home / "private").chmod(0o700)
    (home / "f").write_text("operator's\n")
    (home / "link").symlink_to("f")
    (layers / "upper").mkdir(parents=True)
    work = Path(tempfile.mkdtemp(dir="/dev/shm"))
    try:
        assert work.stat().st_dev != layers.stat().st_dev
        policy = Policy(
            home=(("target", str(home)), ("upper", str(layers / "upper")), ("work", str(work))),
            confine=False,
            seccomp=False,
        )
        agent = ["/bin/sh", "-c", f"echo run > {home}/g; cat {home}/link"]
        done = _launch(policy, agent, python=python, cwd=tmp_path)
    finally:
        shutil.rmtree(work)
    assert done.returncode == 0, done.stderr
    assert done.stdout == "operator's\n"
    assert (layers / "overlay-refused").read_text().startswith("overlay refused (")
    assert (layers / "copy" / "g").read_text() == "run\n"
    assert (layers / "copy" / "link").is_symlink()
    assert stat.S_IMODE((layers / "copy" / "private").stat().st_mode) == 0o700
    assert not (home / "g").exists()


def test_wait_exit_returns_the_code_and_times_out_like_wait() -> None:
    """Guards against the pidfd wait losing a run's exit code or its deadline: the code
    comes back, a process past its timeout raises TimeoutExpired and is still alive
    (the caller kills it), and an already reaped process falls back to Popen's wait."""
    done = subprocess.Popen(["/bin/sh", "-c", "exit 5"])
    assert wait_exit(done, 60) == 5
    assert wait_exit(done, 60) == 5  # reaped already: Popen's own answer
    slow = subprocess.Popen(["/bin/sleep", "30"])
    try:
        with pytest.raises(subprocess.TimeoutExpired):
            wait_exit(slow, 0.2)
        assert slow.poll() is None
    finally:
        slow.kill()
        slow.wait()


@pytest.mark.parametrize("python", [True, False], ids=["python", "native"])
def test_the_fresh_home_overlay_skips_the_upper_layer_s_sync(tmp_path: Path, python: bool) -> None:
    """Guards the overlay's ``volatile`` option (no sync of the upper layer when the
    run's namespace ends: about 10 ms of every run on ext4), and that nothing is lost
    by it: the agent's home write is in the upper layer the harness reads afterwards,
    never in the operator's home. The kernel's own mount table says which options the
    home was mounted with."""
    home, layers = tmp_path / "home", tmp_path / "layers"
    home.mkdir()
    (home / "f").write_text("operator's\n")
    (layers / "upper").mkdir(parents=True)
    (layers / "work").mkdir()
    policy = Policy(
        home=(
            ("target", str(home)),
            ("upper", str(layers / "upper")),
            ("work", str(layers / "work")),
        ),
        confine=False,
        seccomp=False,
    )
    agent = ["/bin/sh", "-c", f"echo run > {home}/g; grep ' {home} ' /proc/self/mountinfo"]
    done = _launch(policy, agent, python=python, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    super_options = done.stdout.strip().rpartition(" ")[2].split(",")
    # Shown as "fsync=volatile" by kernels with the fsync= option (6.x), else "volatile".
    assert {"volatile", "fsync=volatile"} & set(super_options), done.stdout
    assert f"upperdir={layers / 'upper'}" in super_options, done.stdout
    assert (layers / "upper" / "g").read_text() == "run\n"
    assert not (home / "g").exists()
    assert not (layers / "overlay-refused").exists()
