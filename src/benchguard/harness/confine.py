"""Kernel-enforced file access for every agent process: the Landlock allow-list.

Before the agent's program starts, a small launcher (``confine_exec.c``, built by
:mod:`launcher_build`; where no C compiler is available :mod:`confine_exec`, run by the
harness's own interpreter with ``-I -S``, which does the same steps) restricts itself to
the run's allow-list and execs the agent; the kernel then refuses every open, exec, listing, create, rename or
link outside it, for the agent and everything it starts, whatever the spelling
(``//x``, ``/proc/self/root/x``, a ``dup``'d fd, a second thread, a symlink, io_uring).
Sandboxed or not, root or not: root gains nothing (Landlock is not bypassed by
capabilities), and under bwrap the launcher runs inside the sandbox, after the drop to
the agent uid, with the sandbox's own paths.

The allow-list (:func:`agent_policy`; docs/harness.md says why each item is there):

- read + execute: the system directories (:data:`SYSTEM_READ_EXEC`), the interpreter's
  installation (``sys.base_prefix`` and a venv's ``sys.prefix``, resolved: a pyenv
  install under ``/root/.pyenv`` included, never the checkout around a venv), and the
  agent's declared install (its program's tree, its own directory when its argv uses
  ``{agent_dir}``, its ``install`` paths and skills, the built-in agent's one script);
- read: ``/etc``, ``/proc``, ``/sys`` but ``/sys/fs/cgroup``, of which only the run's
  own cgroup (:func:`sysfs_read`);
- devices: ``/dev/null``, ``zero``, ``full``, ``random``, ``urandom``, ``tty``, ``ptmx``
  and ``/dev/pts``;
- single files, write: the transcript channel (the FIFO), the agent's own stdout and
  stderr files, and the model socket when the endpoint is bridged to one;
- read + write: the workspace, the run's home, the run's tmp, its ``state_env``
  directories.

Nothing else: the tasks roots, the results, the harness's checkout and installation,
other runs' scratch, the persistent home (with a fresh home) and ``/tmp`` itself are
unreachable. What Landlock does not restrict (by the kernel's design): ``stat``,
``access``, ``readlink`` and ``chdir`` on any path (names and sizes, never content),
and files opened before the restriction (the launcher inherits only stdin, stdout
and stderr).
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import os
import sys
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchguard.errors import BadInputError
from benchguard.harness import confine_exec, grant_scan, seccomp
from benchguard.harness.grant_content import Material
from benchguard.harness.launcher_build import native_launcher

SYSTEM_READ_EXEC = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
SYSTEM_READ = ("/etc", "/proc")
# /sys is granted for reading entry by entry (sysfs_read): all of it but the cgroup
# tree, of which only the run's own cgroup.
SYSFS = Path("/sys")
CGROUP_ROOT = SYSFS / "fs" / "cgroup"
DEVICES = (
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
    "/dev/tty",
    "/dev/ptmx",
    "/dev/pts",
)
# The launcher's failure code: the agent never started (see confine_exec).
EXIT_CONFINE_FAILED = confine_exec.EXIT_CONFINE_FAILED
EXIT_EXEC_FAILED = confine_exec.EXIT_EXEC_FAILED
# How the launcher's own failure lines on the agent's stderr begin.
LAUNCHER_PREFIX = confine_exec.MESSAGE_PREFIX
# The lowest ABI the harness accepts: 2 has REFER, so a hard link or rename cannot pull
# a denied file into an allowed directory.
MIN_ABI = 2


class ConfinementUnavailable(BadInputError, RuntimeError):
    """Landlock is missing and the operator did not ask to run unconfined."""


@dataclass(frozen=True)
class Confinement:
    """The batch's confinement: the Landlock ABI used, 0 when running unconfined."""

    abi: int = 0

    @property
    def active(self) -> bool:
        return self.abi >= MIN_ABI


@dataclass(frozen=True)
class Policy:
    """One run's allow-list, as absolute path strings per kind of access (sorted)."""

    read_exec: tuple[str, ...] = ()
    read: tuple[str, ...] = ()
    read_write: tuple[str, ...] = ()
    files_write: tuple[str, ...] = ()
    devices: tuple[str, ...] = ()
    # The run's fresh home for the launcher to mount (harness.home.RunHome.launcher_spec).
    home: tuple[tuple[str, str], ...] = ()
    # False for an --unconfined batch: the launcher only mounts the home.
    confine: bool = True
    # The launcher installs harness/seccomp.py's filter last (always, confined or not).
    seccomp: bool = True
    # RLIMIT_FSIZE for the agent, in bytes (the run's disk budget); None: none set.
    fsize: int | None = None

    def to_args(self) -> list[str]:
        """The launcher's policy arguments (``KEY=VALUE``, see :mod:`confine_exec`)."""
        args = [
            f"{kind}={path}" for kind in confine_exec.POLICY_KINDS for path in getattr(self, kind)
        ]
        args.extend(f"home.{key}={value}" for key, value in self.home)
        args.append(f"confine={int(self.confine)}")
        args.append(f"seccomp={int(self.seccomp)}")
        if self.fsize is not None:
            args.append(f"fsize={self.fsize}")
        return args


PR_GET_DUMPABLE = 3
PR_SET_DUMPABLE = 4


def protect_harness() -> bool:
    """Make the harness process non-dumpable; whether the kernel now says it is.

    A non-dumpable process's ``/proc/PID/{mem,root,cwd,environ,fd,maps}`` (and ptrace
    and ``process_vm_readv``) need ``CAP_SYS_PTRACE`` in the initial user namespace,
    even for a process of the same uid: an agent that shares the harness's uid (an
    unprivileged harness, or one that somehow sees the host's ``/proc``) cannot read the
    harness's memory (every task's checks and answers) or reach files through its root.
    Idempotent; children the harness execs are dumpable again (the kernel resets the
    flag on ``execve``), so the agent's own ``/proc`` stays readable to the audit.
    """
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    return harness_dumpable() is False


def harness_dumpable() -> bool | None:
    """The kernel's dumpable flag for this process (None: it would not say)."""
    libc = ctypes.CDLL(None, use_errno=True)
    flag = libc.prctl(PR_GET_DUMPABLE, 0, 0, 0, 0)
    return None if flag < 0 else flag != 0


@functools.cache
def kernel_abi() -> int:
    """The Landlock ABI this kernel offers (0: none); asked once per process."""
    return confine_exec.abi_version()


def batch_confinement(*, unconfined: bool) -> Confinement:
    """The confinement for a batch: the kernel's ABI, or unconfined when asked.

    Raises :class:`ConfinementUnavailable` when the kernel has no usable Landlock and
    ``unconfined`` is not set: nothing runs without the kernel's allow-list by accident.
    """
    if unconfined:
        return Confinement(0)
    abi = kernel_abi()
    if abi < MIN_ABI:
        found = f"ABI {abi}" if abi else "no Landlock"
        raise ConfinementUnavailable(
            f"Landlock confinement needs ABI {MIN_ABI} or later and this kernel offers "
            f"{found} (check CONFIG_SECURITY_LANDLOCK and the lsm= boot list); pass "
            "--unconfined to run without it (rows and the leaderboard then say 'unconfined')"
        )
    return Confinement(abi)


def launcher_script() -> Path:
    """The launcher's source file (standard library only, runnable as a script)."""
    return Path(confine_exec.__file__).resolve()


def seccomp_script() -> Path:
    """The seccomp filter's source file, which the launcher loads by path beside itself
    (standard library only)."""
    return Path(seccomp.__file__).resolve()


@functools.cache
def _seccomp_hex() -> str:
    return seccomp.program().hex()


def launcher_files() -> tuple[Path, ...]:
    """What the launcher runs from, bound into the sandbox and granted read + execute:
    the native program (:mod:`launcher_build`), or the Python launcher and the seccomp
    filter it loads from beside it."""
    native = native_launcher()
    if native is not None:
        return (native,)
    return (launcher_script(), seccomp_script())


def launcher_programs() -> tuple[Path, ...]:
    """Every program an exec of the launcher can name (the audit's trace knows it by
    these): the native one when built, and the Python script."""
    native = native_launcher()
    return (launcher_script(),) if native is None else (native, launcher_script())


def launcher_argv(policy: Policy, command: Sequence[str]) -> list[str]:
    """``command`` started through the launcher, confined to ``policy``: the native
    launcher where it is built (no interpreter start per run), else the Python one."""
    native = native_launcher()
    if native is None:
        return [
            sys.executable,
            "-I",
            "-S",
            str(launcher_script()),
            *policy.to_args(),
            "--",
            *command,
        ]
    args = policy.to_args()
    if policy.seccomp:
        # The native launcher installs the program seccomp.py builds: one filter source.
        args.append(f"seccomp.program={_seccomp_hex()}")
    return [str(native), *args, "--", *command]


def interpreter_trees() -> tuple[Path, ...]:
    """The harness interpreter's installation (base and venv), resolved: ``{python}``
    and the launcher itself run from it."""
    trees = {Path(sys.base_prefix).resolve(), Path(sys.prefix).resolve()}
    executable = Path(sys.executable).resolve()
    if not any(executable.is_relative_to(tree) for tree in trees):
        trees.add(executable.parent)
    return tuple(sorted(trees))


def agent_policy(
    *,
    agent_paths: Iterable[Path],
    workspace: Path,
    home: Path,
    tmp: Path,
    writable_dirs: Iterable[Path] = (),
    writable_files: Iterable[Path] = (),
    home_spec: dict[str, str] | None = None,
    confine: bool = True,
    own_cgroup: Path | None = None,
    fsize: int | None = None,
) -> Policy:
    """The allow-list for one run (see the module doc); ``agent_paths`` is the agent's
    declared install (program tree, agent directory, install paths, skills, scripts);
    ``own_cgroup`` the run's cgroup directory (None: no cgroup of its own)."""
    read_exec = {*SYSTEM_READ_EXEC, *(str(p) for p in interpreter_trees())}
    read_exec.update(str(p) for p in agent_paths)
    return Policy(
        read_exec=tuple(sorted(read_exec)),
        read=tuple(sorted({*SYSTEM_READ, *sysfs_read(own_cgroup)})),
        read_write=tuple(sorted({str(workspace), str(home), str(tmp), *map(str, writable_dirs)})),
        files_write=tuple(sorted({str(p) for p in writable_files})),
        devices=DEVICES,
        home=tuple(sorted((home_spec or {}).items())),
        confine=confine,
        fsize=fsize,
    )


def sysfs_read(own_cgroup: Path | None, sysfs: Path = SYSFS) -> tuple[str, ...]:
    """What of ``/sys`` a run may read: every entry but ``fs``, every entry of ``fs``
    but ``cgroup``, and of the cgroup tree only ``own_cgroup`` (sorted).

    Another run's ``cgroup.procs`` lists its pids, and an agent that forks a chosen
    number of processes writes a number there that a concurrent agent reads (cgchan, red
    team 9): the tree is the one part of ``/sys`` that changes with what other runs do.
    An honest program still reads its own limits (libuv's ``cpu.max`` and
    ``memory.max``, a JVM's container support) in its own cgroup. Landlock grants only,
    so the rest of ``/sys`` is named entry by entry; an entry that appears later (a
    filesystem mounted under ``/sys/fs`` after the run starts) is simply not readable.
    """
    grants: list[str] = []
    with contextlib.suppress(OSError):
        for entry in sorted(os.listdir(sysfs)):
            if entry != "fs":
                grants.append(str(sysfs / entry))
        for entry in sorted(os.listdir(sysfs / "fs")):
            if entry != "cgroup":
                grants.append(str(sysfs / "fs" / entry))
    cgroups = sysfs / "fs" / "cgroup"
    if own_cgroup is not None and own_cgroup.is_relative_to(cgroups) and own_cgroup != cgroups:
        grants.append(str(own_cgroup))
    return tuple(sorted(grants))


def exposure_problems(
    granted: Iterable[Path],
    protected: Iterable[Path],
    *,
    where: str,
    fields: Mapping[Path, str] | None = None,
    bounds: grant_scan.Bounds | None = None,
    material: Material | None = None,
) -> list[str]:
    """Granted paths that would bring protected material into the agent's reach: a
    directory grant covers everything beneath it, so an agent install that holds the
    tasks or the results would undo the confinement. Each names both paths.

    Beyond this batch's ``protected`` roots, every grant is searched (bounded) for
    benchmark material of any batch: an earlier batch's results, another copy of the
    task folders, the harness's checkout (:mod:`benchguard.harness.grant_scan`).
    ``fields``: which field of the agent file granted each path, for the message;
    ``material``: this batch's task files, searched for by content (git objects, copies
    under other names: :mod:`benchguard.harness.grant_content`)."""
    problems = []
    protected = tuple(protected)
    for path in granted:
        grant = os.path.realpath(path)
        for root in protected:
            target = os.path.realpath(root)
            if target == grant or target.startswith(grant.rstrip("/") + "/"):
                problems.append(
                    f"{where}: the agent's install path {grant} would expose {target}; keep "
                    "the agent's files in a directory that holds no tasks or results"
                )
    if problems:
        return problems
    for path in sorted(set(granted)):
        found = grant_scan.scan(path, bounds=bounds or grant_scan.Bounds(), material=material)
        if found is not None:
            field = grant_scan.label(path, fields)
            problems.append(grant_scan.problem(where, field, path, found))
    return problems
