"""The native separation (``confine-exec --separate``) gives a run exactly the view the
Python one (``separate_exec.py``) gives, and the harness runs the native one wherever
the launcher is built.

Both separations run in the same tree, one after the other, in a fresh namespace made
as a run's is (root, and an unprivileged user in a user namespace); a probe then reports
the mount list (``/proc/self/mountinfo`` without ids, device numbers and peer groups,
in order), every name that resolves beneath the parent (type, mode, content of files),
``/dev/shm``, the working directory, the capability sets, and whether the network
namespace is the host's. The two reports must be equal, and must show the separation
(no sibling, a private ``/dev/shm``), so a step missing from either side fails here.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from benchguard.harness import containment, launcher_build
from benchguard.harness.launcher_build import native_launcher
from harness.privileges import IDENTITIES, SYSTEM_PYTHON, UNPRIVILEGED, Identity, can_run_as_user

PROBE = r"""
import json, os, sys
parent, host_net, probed = sys.argv[1], sys.argv[2], sys.argv[3:]
mounts = []
with open("/proc/self/mountinfo", encoding="utf-8", errors="surrogateescape") as f:
    for line in f:
        left, _, right = line.rstrip("\n").partition(" - ")
        fields = left.split(" ")
        # root, mount point, mount options (ids, device and peer groups differ per run)
        mounts.append([fields[3], fields[4], fields[5], right])
tree = []
for top, dirs, files in os.walk(parent):
    dirs.sort()
    for name in sorted(dirs + files):
        path = os.path.join(top, name)
        info = os.lstat(path)
        entry = [os.path.relpath(path, parent), oct(info.st_mode)]
        if os.path.isfile(path) and not os.path.islink(path):
            with open(path, "rb") as handle:
                entry.append(handle.read(200).decode("utf-8", "replace"))
        tree.append(entry)
status = {}
with open("/proc/self/status", encoding="ascii") as f:
    for line in f:
        name, _, value = line.partition(":")
        if name.startswith("Cap"):
            status[name] = value.strip()
dev = []
for top in ("/dev", "/dev/pts"):
    for name in sorted(os.listdir(top)):
        info = os.lstat(os.path.join(top, name))
        link = os.readlink(os.path.join(top, name)) if os.path.islink(os.path.join(top, name)) else None
        dev.append([top, name, oct(info.st_mode), info.st_rdev if name != "ptmx" or link else -1, link])
with open("/proc/net/dev", encoding="ascii") as f:
    interfaces = sorted(line.split(":")[0].strip() for line in f.readlines()[2:])
print(json.dumps({
    "writable": {path: os.access(path, os.W_OK) for path in probed},
    "mounts": mounts,
    "tree": tree,
    "dev": dev,
    "interfaces": interfaces,
    "shm": sorted(os.listdir("/dev/shm")),
    "cwd": os.getcwd(),
    "caps": status,
    "host_net": os.readlink("/proc/self/ns/net") == host_net,
}))
"""


def _native() -> Path:
    native = native_launcher()
    assert native is not None, "the native launcher did not build (gcc is a system dependency)"
    return native


def _namespace(identity: Identity) -> list[str]:
    """The run's first namespace, made as harness/containment makes it for ``identity``
    (the unprivileged one keeps its user namespace's capabilities for the mounts)."""
    if identity == "root":
        prefix = containment.pid_namespace_prefix(keep_caps=True)
        assert prefix, "unshare cannot make a run's namespace here"
        return [*prefix, "--"]
    return [
        "setpriv",
        f"--reuid={UNPRIVILEGED}",
        f"--regid={UNPRIVILEGED}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        "unshare",
        "--user",
        "--map-current-user",
        "--pid",
        "--fork",
        "--kill-child=SIGKILL",
        "--mount",
        "--mount-proc",
        "--ipc",
        "--keep-caps",
        "--",
    ]


def _separations(
    parent: Path, own: Path, keep: list[str], *, net: bool = False, writable: Sequence[str] = ()
) -> dict[str, list[str]]:
    script = containment.separate_script()
    options = [*(f"--writable={path}" for path in writable), *(["--net"] if net else [])]
    args = [*options, str(parent), str(own), *keep]
    return {
        "python": [str(SYSTEM_PYTHON), "-I", "-S", str(script), *args],
        "native": [str(_native()), "--separate", *args],
    }


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory the run may write on the root mount, outside the temp directory (a
    persistent home's place)."""
    path = Path(tempfile.mkdtemp(prefix="bg-native-sep-", dir="/var/tmp"))
    try:
        os.chown(path, UNPRIVILEGED, UNPRIVILEGED)
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def tree() -> Iterator[tuple[Path, Path, list[str]]]:
    """A stand-in temp directory: this run's scratch, a sibling's, an operator's tree
    and file the command names, one of them twice and one beneath another, a path
    outside the parent and a missing one."""
    parent = Path(tempfile.mkdtemp(prefix="bg-native-sep-", dir="/tmp"))
    try:
        parent.chmod(0o755)
        own = parent / "bg-run-own"
        (own / "workspace").mkdir(parents=True)
        (own / "workspace" / "answer.txt").write_text("mine\n")
        (parent / "bg-run-sibling" / "workspace").mkdir(parents=True)
        (parent / "bg-run-sibling" / "workspace" / "answer.txt").write_text("theirs\n")
        (parent / "operator" / "agents" / "bin").mkdir(parents=True)
        (parent / "operator" / "agents" / "bin" / "agent").write_text("#!/bin/sh\n")
        (parent / "operator" / "hidden-beside").write_text("not named\n")
        (parent / "operator" / "agents" / "state").mkdir()
        (parent / "install.sh").write_text("#!/bin/sh\n")
        (parent / "records").mkdir()
        (parent / "records" / "results.json").write_text("{}\n")
        for path in parent.rglob("*"):
            os.chown(path, UNPRIVILEGED, UNPRIVILEGED)
        keep = [
            str(parent / "operator" / "agents"),
            str(parent / "operator" / "agents" / "bin"),  # beneath the one above
            str(parent / "install.sh"),
            str(parent / "install.sh"),  # twice
            "/usr/bin",  # not beneath the parent: nothing to bind
        ]
        yield parent, own, keep
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def _report(
    identity: Identity,
    command: list[str],
    parent: Path,
    own: Path,
    probed: Sequence[str] = (),
) -> dict[str, object]:
    host_net = os.readlink("/proc/self/ns/net")
    probe = [str(SYSTEM_PYTHON), "-I", "-S", "-c", PROBE, str(parent), host_net, *probed]
    done = subprocess.run(
        [*_namespace(identity), *command, "--", *probe],
        cwd=own / "workspace",
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    _remove_stages(own)
    assert done.returncode == 0, done.stderr
    report: dict[str, object] = json.loads(done.stdout)
    return report


def _remove_stages(own: Path) -> None:
    """The staging directories stay behind (covered) in the run's scratch: each run
    makes its own, as every run's scratch is new."""
    for stage in (".separate", ".separate-dev"):
        if (own / stage).exists():
            (own / stage).rmdir()


def _skip_user(identity: Identity) -> None:
    if identity == "user" and not can_run_as_user():
        pytest.skip("no unprivileged user here (setpriv, /usr/bin/python3 3.11)")


@pytest.mark.parametrize("net", [False, True], ids=["host-net", "own-net"])
@pytest.mark.parametrize("identity", IDENTITIES)
def test_the_native_separation_gives_the_python_one_s_view(
    identity: Identity, net: bool, tree: tuple[Path, Path, list[str]], outside: Path
) -> None:
    """Guards the port: a step left out of (or added to) one side changes the mount
    list, the private /dev, the interfaces or what resolves under the parent, and the
    reports differ."""
    _skip_user(identity)
    parent, own, keep = tree
    state = parent / "operator" / "agents" / "state"
    writable = [str(own / "workspace"), str(state), str(outside), str(outside)]
    kept_file = parent / "operator" / "agents" / "bin" / "agent"
    probed = [*writable[:3], str(kept_file), "/usr/share", str(SYSTEM_PYTHON)]
    reports = {
        name: _report(identity, command, parent, own, probed)
        for name, command in _separations(parent, own, keep, net=net, writable=writable).items()
    }
    assert reports["native"] == reports["python"]
    # Step 6: the agent's writable paths stay writable (the workspace on its own bind,
    # the others on binds of their own); the root mount and the kept tree do not.
    assert reports["native"]["writable"] == {  # type: ignore[index]
        str(own / "workspace"): True,
        str(state): True,
        str(outside): True,
        str(kept_file): False,
        "/usr/share": False,
        str(SYSTEM_PYTHON): False,
    }
    assert any(m[1] == "/" and m[2].startswith("ro,") for m in reports["native"]["mounts"])  # type: ignore[attr-defined]
    assert reports["native"]["host_net"] is not net
    seen = reports["native"]
    names = {entry[0] for entry in seen["tree"]}  # type: ignore[attr-defined]
    # The separation is there at all (both sides could lose the same step).
    assert "bg-run-own/workspace/answer.txt" in names, names
    assert "operator/agents/bin/agent" in names and "install.sh" in names, names
    assert not names & {"bg-run-sibling", "records", "operator/hidden-beside"}, names
    assert seen["cwd"] == str(own / "workspace")
    assert any(m[1] == "/dev/shm" and "benchguard-shm" in m[3] for m in seen["mounts"])  # type: ignore[attr-defined]
    assert seen["caps"]["CapAmb"] == "0000000000000000"  # type: ignore[index]


@pytest.mark.parametrize("identity", IDENTITIES)
def test_both_separations_fail_closed_alike(
    identity: Identity, tree: tuple[Path, Path, list[str]]
) -> None:
    """A step that fails (the staging directory cannot be made) and a command that
    cannot run: exit 125, one line beginning ``benchguard confine:``, no command; a
    call without ``--``: usage, exit 2."""
    _skip_user(identity)
    parent, own, keep = tree
    (own / ".separate").mkdir()
    os.chown(own / ".separate", UNPRIVILEGED, UNPRIVILEGED)
    marker = own / "ran"
    for name, command in _separations(parent, own, keep).items():
        done = subprocess.run(
            [*_namespace(identity), *command, "--", "/bin/sh", "-c", f": > {marker}"],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        lines = done.stderr.splitlines()
        assert done.returncode == 125, (name, done.stderr)
        assert len(lines) == 1 and lines[0].startswith(
            "benchguard confine: cannot separate the run from the others: cannot make "
        ), (name, lines)
        assert not marker.exists(), name
    (own / ".separate").rmdir()
    for name, command in _separations(parent, own, keep).items():
        done = subprocess.run(
            [*_namespace(identity), *command, "--", str(own / "no-such-program")],
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        _remove_stages(own)
        lines = done.stderr.splitlines()
        assert done.returncode == 125, (name, done.stderr)
        assert len(lines) == 1 and lines[0].startswith("benchguard confine: cannot run "), lines
        usage = subprocess.run(
            [*command[: -len(keep)]], capture_output=True, text=True, timeout=60, check=False
        )
        assert usage.returncode == 2 and "usage:" in usage.stderr, (name, usage.stderr)


def test_the_harness_separates_runs_with_the_native_launcher(tmp_path: Path) -> None:
    """Guards the choice: with the launcher built, a separated run's command starts
    ``confine-exec --separate`` (no interpreter start per run), and the availability
    probe tries that same program; ``BENCHGUARD_LAUNCHER=python`` falls back to
    ``separate_exec.py``."""
    native = _native()
    run = containment.RunContainment.start("no cgroups here", "probe", separate=tmp_path)
    assert run.separated == tmp_path, run.separation_unavailable
    argv = run.inner(["/bin/true"], tmp_path / "strays")
    start = argv.index(str(containment.INIT_NAME)) - 3  # sh -c INIT_SCRIPT INIT_NAME
    separator = argv[argv.index(str(native)) : start]
    assert separator[:2] == [str(native), "--separate"], argv
    assert separator[2:4] == [os.path.realpath(tempfile.gettempdir()), str(tmp_path)], argv
    assert not any(arg.endswith("separate_exec.py") for arg in argv), argv
    assert containment.separator_programs() == [str(native)]
    probe = (
        "from benchguard.harness import containment as c;"
        "print(c.separator_programs()[-1], c.separation_works())"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={
            **os.environ,
            "BENCHGUARD_LAUNCHER": "python",
            "PYTHONPATH": os.pathsep.join(sys.path),
        },
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == [str(containment.separate_script()), "None"], done.stdout


def test_the_native_separation_ports_this_separate_exec() -> None:
    """Guards the mirror: the C source records the digest of the separate_exec.py its
    steps port, and it is this one. An edit to the script (a new step) fails here until
    the port follows it and the view test above passes again; until then the harness
    runs the script (below), never a native view that lags behind it."""
    assert launcher_build.separation_port_problem() is None


def test_a_stale_port_falls_back_to_the_script(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the fallback: with a separate_exec.py the C source does not port, runs
    are separated by the script, and the probe tries the script too."""
    monkeypatch.setattr(
        launcher_build, "separation_port_problem", lambda: "a port of another script"
    )
    assert launcher_build.native_launcher() is not None
    assert launcher_build.native_separation() is None
    script = str(containment.separate_script())
    assert containment.separator_programs() == [sys.executable, script]
    argv = containment._separate_argv("/tmp", "/tmp/own", [])
    assert argv[:4] == [sys.executable, "-I", "-S", script], argv
