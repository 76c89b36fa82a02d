"""The bubblewrap sandbox: what an agent can see when ``--sandbox bwrap`` is on.

The agent gets a fresh root holding only:

- system directories, read-only: ``/usr`` (and the ``/bin``, ``/lib*``, ``/sbin``
  links or directories), a minimal ``/etc`` (users, name service, dynamic linker,
  locale, TLS roots, Debian alternatives);
- the Python interpreter, read-only: ``sys.base_prefix`` and, for a venv, the venv
  directory alone (never the checkout around it);
- read-only program paths: the agent's own directory and the built-in agent script;
- read-write: the run's workspace, the agent home and the transcript file;
- read-only: the granted skill paths;
- a private ``/tmp``, fresh ``/proc`` and ``/dev``, and new user, PID, IPC, UTS and
  cgroup namespaces; the network namespace too unless the task or agent needs network.

Everything else (the tasks directory, results, the harness checkout, env files, the
operator's home) does not exist inside. Paths keep their host spelling, so an argv
rendered with ``{workspace}`` works unchanged.
"""

from __future__ import annotations

import functools
import shutil
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

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


class SandboxUnavailable(RuntimeError):
    """bwrap is missing or cannot create namespaces on this host."""


@dataclass(frozen=True)
class SandboxSpec:
    """What one sandboxed run may see; every path is absolute and exists."""

    workspace: Path
    home: Path
    writable_files: tuple[Path, ...] = ()
    read_only: tuple[Path, ...] = field(default_factory=tuple)
    network: bool = False


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
    args: list[str] = []
    for entry in ETC_ENTRIES + (NETWORK_ETC_ENTRIES if network else ()):
        path = Path("/etc") / entry
        if path.exists():
            args += ["--ro-bind", str(path), str(path)]
    return args


def bwrap_argv(spec: SandboxSpec, command: Sequence[str], *, bwrap: str = "bwrap") -> list[str]:
    """The full ``bwrap ... -- command`` argv for one run."""
    args = [bwrap, "--unshare-all"]
    if spec.network:
        args.append("--share-net")
    args += ["--die-with-parent", "--new-session", "--hostname", "sandbox"]
    args += _system_args()
    args += _etc_args(spec.network)
    args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for path in sorted({*interpreter_paths(), *spec.read_only}):
        args += ["--ro-bind", str(path), str(path)]
    # Read-write binds come last so a read-only parent cannot shadow them.
    for path in (spec.home, spec.workspace, *spec.writable_files):
        args += ["--bind", str(path), str(path)]
    args += ["--chdir", str(spec.workspace), "--", *command]
    return args


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
