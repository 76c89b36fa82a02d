"""The bubblewrap sandbox: what an agent can see when ``--sandbox bwrap`` is on.

The agent gets a fresh root holding only:

- system directories, read-only: ``/usr`` (and the ``/bin``, ``/lib*``, ``/sbin``
  links or directories), a minimal ``/etc`` (users, name service, dynamic linker,
  locale, TLS roots, Debian alternatives);
- the Python interpreter, read-only: ``sys.base_prefix`` and, for a venv, the venv
  directory alone (never the checkout around it);
- read-only program paths: the agent's own directory and the built-in agent script;
- read-write: the run's workspace, the agent home, the transcript file and the run's
  own agent-state directories (``state_env``);
- read-only: the granted skill paths, and the inputs the task's prompt grants in the
  home (``harness.granted``), bound over the writable home;
- a private ``/tmp``, fresh ``/proc`` (``/proc/sys`` read-only) and ``/dev``, and new
  user, PID, IPC, UTS and cgroup namespaces; the network namespace too unless the task
  or agent needs network. The sandbox's own root and ``/dev`` are remounted read-only,
  so the only writable places are the workspace, the home, the channel and ``/tmp``.

When the harness is root, the whole ``bwrap`` command is started through ``setpriv``
as an unprivileged uid with no capability (``harness.identity``): bubblewrap then builds
unprivileged namespaces and nothing inside holds a capability, so a read-only bind
cannot be remounted writable. :func:`self_check` proves that once per batch, before
the first task, by running ``sandbox_probe.py`` in the same sandbox.

Everything else (the tasks directory, results, the harness checkout, env files, the
operator's home) does not exist inside. Paths keep their host spelling, so an argv
rendered with ``{workspace}`` works unchanged.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from benchguard.errors import BadInputError
from benchguard.harness.harness_namespaces import SandboxGate
from benchguard.harness.identity import AgentIdentity, hand_over

SYSTEM_DIRS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ETC_ENTRIES = (
    "passwd",
    "group",
    "nsswitch.conf",
    "hosts",
    "host.conf",
    "ld.so.cache",
    "ld.so.conf",
    "ld.so.conf.d",
    "localtime",
    "alternatives",
    "ssl",
    "ca-certificates",
    "mime.types",
)
# Resolver config is only useful, and only bound, when the network is on.
NETWORK_ETC_ENTRIES = ("resolv.conf", "gai.conf")
PROBE_TIMEOUT_S = 20.0


class SandboxUnavailable(BadInputError, RuntimeError):
    """bwrap is missing or cannot create namespaces on this host."""


class SandboxSelfCheckFailed(SandboxUnavailable):
    """The probe inside the sandbox could do what the sandbox must prevent."""


@dataclass(frozen=True)
class SandboxSpec:
    """What one sandboxed run may see; every path is absolute and exists."""

    workspace: Path
    home: Path
    writable_files: tuple[Path, ...] = ()
    writable_dirs: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = field(default_factory=tuple)
    # Read-only inside a writable bind (the inputs a prompt grants in the home): bound
    # after the writable binds, so they cover the home's writable view of them.
    read_only_inside: tuple[Path, ...] = ()
    network: bool = False
    # False for verification: the check reads the workspace and cannot change it.
    workspace_writable: bool = True
    # A fresh home (harness.home): the home is bound read-only, as the overlay's lower
    # layer, and this directory (the run's upper and work layers) read-write.
    home_layers: Path | None = None


def interpreter_paths() -> tuple[Path, ...]:
    """The interpreter's own trees: the base installation, and the venv if one is active.

    A venv inside a checkout is bound alone: its parent directories appear empty.
    """
    paths = [Path(sys.base_prefix).resolve()]
    venv = Path(sys.prefix).resolve()
    if venv != paths[0]:
        paths.append(venv)
    return tuple(paths)


def _system_args() -> list[str]:
    args: list[str] = []
    for name in SYSTEM_DIRS:
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", str(path.readlink()), name]
        elif path.is_dir():
            args += ["--ro-bind", name, name]
    return args


def _etc_args(network: bool) -> list[str]:
    # Made explicitly: a /etc that bwrap creates implicitly (as root) is 0700, and the
    # unprivileged agent could then not reach /etc/alternatives (awk, editors, ...).
    args: list[str] = ["--perms", "0755", "--dir", "/etc"]
    for entry in ETC_ENTRIES + (NETWORK_ETC_ENTRIES if network else ()):
        path = Path("/etc") / entry
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    return args


# Without a user namespace: used when the harness is root, so the agent can be made a
# real unprivileged host uid inside (a user namespace would map only root).
_NAMESPACES_AS_ROOT = ("--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try")


def bwrap_argv(
    spec: SandboxSpec,
    command: Sequence[str],
    *,
    bwrap: str = "bwrap",
    identity: AgentIdentity | None = None,
    gate: SandboxGate | None = None,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The full ``bwrap ... -- command`` argv for one run.

    With ``seccomp_fd`` (a descriptor the caller passes on, holding a compiled filter)
    bubblewrap installs that filter just before it executes the command.

    With ``gate`` bwrap reports its namespace and waits until the harness registered
    it (:mod:`benchguard.harness.harness_namespaces`) before the command runs.

    With ``identity`` (the harness is root) bubblewrap builds the sandbox as root and
    the command inside starts through ``setpriv`` as that unprivileged uid, with no
    capability left in any set; without it (the harness is a user) bubblewrap's own
    user namespace does the isolating and drops every capability.
    """
    args = [bwrap, *namespace_args(spec.network, identity)]
    args += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
    args += _system_args()
    args += _etc_args(spec.network)
    args += ["--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys"]
    # Sticky and world-writable like a host /tmp: bwrap would make the tmpfs root's
    # 0755, and an agent dropped from root to its own uid could not write scratch there.
    args += ["--dev", "/dev", "--perms", "1777", "--tmpfs", "/tmp"]
    read_only = sorted(
        {*interpreter_paths(), *spec.read_only}
        | (set() if spec.workspace_writable else {spec.workspace})
        | (set() if spec.home_layers is None else {spec.home})
    )
    writable = [
        spec.home if spec.home_layers is None else spec.home_layers,
        *spec.writable_dirs,
        *spec.writable_files,
    ]
    if spec.workspace_writable:
        writable.insert(1, spec.workspace)
    if identity is not None:
        # bwrap copies a host parent's mode (``/root`` is 0700); the unprivileged agent
        # must be able to walk down to what is bound for it.
        args += _traversable_parents([*read_only, *writable])
    for path in read_only:
        args += ["--ro-bind", str(path), str(path)]
    # Read-write binds come last so a read-only parent cannot shadow them.
    for path in writable:
        args += ["--bind", str(path), str(path)]
    for path in sorted(spec.read_only_inside):
        args += ["--ro-bind", str(path), str(path)]
    # bwrap's own root and /dev are tmpfs: private, but a place to stage files that no
    # one asked for; read-only, the writable set is exactly the binds above and /tmp.
    args += ["--remount-ro", "/dev", "--remount-ro", "/"]
    if seccomp_fd is not None:
        args += ["--seccomp", str(seccomp_fd)]
    args += ["--chdir", str(spec.workspace), "--"]
    args += identity.argv(command) if identity is not None else list(command)
    return gate.wrap(args) if gate is not None else args


def namespace_args(network: bool, identity: AgentIdentity | None) -> list[str]:
    """The namespaces to unshare; the network one unless ``network`` is asked for."""
    if identity is None:
        return ["--unshare-all", *(["--share-net"] if network else [])]
    return [*_NAMESPACES_AS_ROOT, *([] if network else ["--unshare-net"])]


def _traversable_parents(paths: Sequence[Path]) -> list[str]:
    parents: set[Path] = set()
    for path in paths:
        parents.update(p for p in path.parents if p != Path("/"))
    args: list[str] = []
    for parent in sorted(parents, key=lambda p: (len(p.parts), str(p))):
        if str(parent) in SYSTEM_DIRS or Path(str(parent)).is_symlink():
            continue
        args += ["--perms", "0755", "--dir", str(parent)]
    return args


def probe_script() -> Path:
    return Path(__file__).with_name("sandbox_probe.py").resolve()


def self_check(spec: SandboxSpec, identity: AgentIdentity | None, *, bwrap: str = "bwrap") -> None:
    """Run the probe in a sandbox built like an agent's; raise when it got through.

    ``spec.workspace`` is a throwaway directory the probe may write. Raises
    :class:`SandboxSelfCheckFailed` naming every problem the probe found, or when the
    probe's files belong to host root.
    """
    probe = probe_script()
    checked = SandboxSpec(
        workspace=spec.workspace,
        home=spec.home,
        writable_files=spec.writable_files,
        read_only=(*spec.read_only, probe),
        network=spec.network,
    )
    allowed = [str(p) for p in (spec.workspace, spec.home, *spec.writable_files)]
    command = [sys.executable, "-I", str(probe), *allowed]
    argv = bwrap_argv(checked, command, bwrap=bwrap, identity=identity)
    try:
        result = subprocess.run(
            argv, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False, env=_probe_env()
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxSelfCheckFailed(f"sandbox self-check could not run: {exc}") from None
    detail = result.stderr.decode("utf-8", errors="replace").strip()[-2000:]
    try:
        verdict = json.loads(result.stdout.decode("utf-8", errors="replace"))
        problems = [str(p) for p in verdict["problems"]]
        uid = int(verdict["uid"])
    except (ValueError, KeyError, TypeError):
        raise SandboxSelfCheckFailed(
            f"sandbox self-check failed: the probe exited {result.returncode} without a "
            f"verdict ({detail or 'no message'})"
        ) from None
    marker = spec.workspace / "probe-owner"
    owner = marker.stat().st_uid
    marker.unlink()
    if os.geteuid() == 0 and owner == 0:
        problems.append("files written inside the sandbox belong to host root")
    if identity is not None and owner != identity.uid:
        problems.append(f"files written inside belong to uid {owner}, not {identity.uid}")
    if problems:
        raise SandboxSelfCheckFailed(
            "sandbox self-check failed, refusing to run the batch: "
            + "; ".join(problems)
            + f" (probe uid {uid})"
        )


def self_check_in_scratch(
    home: Path, identity: AgentIdentity | None, *, bwrap: str = "bwrap"
) -> None:
    """:func:`self_check` with a fresh throwaway workspace, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="bg-probe-") as scratch:
        workspace = Path(scratch).resolve()
        hand_over(identity, workspace)
        self_check(SandboxSpec(workspace=workspace, home=home), identity, bwrap=bwrap)


def _probe_env() -> dict[str, str]:
    return {"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"}


def exposure_problems(binds: Sequence[Path], protected: Sequence[Path]) -> list[str]:
    """Binds that would bring protected material (tasks, results) into view.

    A bind of a directory shows everything under it, so an agent directory that happens
    to hold the tasks tree would silently undo the sandbox; this is refused up front.
    """
    problems = []
    for bound in binds:
        mount = bound.resolve()
        for material in protected:
            target = material.resolve()
            if target == mount or target.is_relative_to(mount):
                problems.append(
                    f"sandbox bind {mount} would expose {target}; keep the agent home, agent "
                    "programs and skills in directories that hold no tasks or results"
                )
    return problems


@functools.cache
def probe_bwrap() -> str:
    """Check once per process that bwrap exists and can build a sandbox; its path.

    Raises ``SandboxUnavailable`` with the reason and the usual fix.
    """
    found = shutil.which("bwrap")
    if found is None:
        raise SandboxUnavailable(
            "--sandbox bwrap needs bubblewrap, and 'bwrap' is not on PATH; "
            "install it (Debian/Ubuntu: apt-get install bubblewrap, or `make system-deps`)"
        )
    probe = [found, "--unshare-all", "--die-with-parent", "--new-session", *_system_args()]
    probe += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp", "--", "true"]
    try:
        result = subprocess.run(probe, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise SandboxUnavailable(f"bwrap could not be started: {exc}") from None
    if result.returncode != 0:
        detail = result.stderr.decode("utf-8", errors="replace").strip() or "no message"
        raise SandboxUnavailable(
            f"bwrap cannot create its namespaces on this host ({detail}); unprivileged "
            "user namespaces may be disabled (check sysctl kernel.unprivileged_userns_clone, "
            "user.max_user_namespaces, or an AppArmor userns restriction), or the harness "
            "runs inside a container that forbids them"
        )
    return found
