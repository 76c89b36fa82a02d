"""The native launcher (confine_exec.c) confines exactly as the Python one does.

Both launchers run the same probe agent under the same policy; the kernel's answers
(what it let the probe read, write, list and execute, and the process's capability,
no_new_privs and seccomp state) must be identical, and the native one must really be
the one the harness runs here (a C compiler is a system dependency).
"""

from __future__ import annotations

import dataclasses
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from benchguard.harness import launcher_build
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
