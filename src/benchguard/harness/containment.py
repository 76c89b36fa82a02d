"""Containing one run's process tree: its cgroup, and a pid namespace whose init dies
with the harness.

The command a run starts is wrapped, outermost first::

    sh -c 'echo 0 > cgroup.procs; exec ...'      join the run's cgroup (harness/cgroup),
                                                 its CPU share's (harness/cpu_share) and
                                                 its memory limit's (harness/memory_limit)
    setpriv --pdeathsig KILL --                  die when the harness's thread dies
    [strace ...]                                 the strace audit, when it is on
    setpriv --pdeathsig KILL --                  die when strace dies
    unshare --pid --fork --kill-child ...        a pid namespace (and a mount namespace
                                                 with its own /proc)
    [python -I -S separate_exec.py ...]          the run's private /tmp, /dev (fresh
                                                 nodes, its own devpts and /dev/shm),
                                                 read-only /sys and, unless the run has
                                                 network, its own network namespace
                                                 (harness/separate_exec; natively
                                                 ``confine-exec --separate``), then exec:
    sh -c '"$@"; exit $?'                        the namespace's init: the agent's parent
    <the agent's command>                        (setpriv to the agent uid, bwrap, ...)

Without strace, and with the native launcher built (harness/launcher_build), the first
two layers and the second ``setpriv`` are one program instead: ``confine-exec --spawn
<run cgroup>`` creates the run's first process inside the cgroup (clone3
``CLONE_INTO_CGROUP``: a member from its first instruction, no migration of a running
process, which costs an RCU grace period), with the parent-death signal set on both
itself and that process, and ends as that process ends (its code or its signal)::

    confine-exec --spawn <cgroup> [--join=<v1 cgroup.procs>...] -- unshare ... -- sh -c INIT ...

What each layer guarantees:

- the cgroup: every process the agent starts, daemonized or not, is a member; at the
  deadline, on interrupt and before verification it is frozen and killed
  (:meth:`RunContainment.end`), so no background process writes after the agent ended;
- the pid namespace: when its init exits (the agent ended) the kernel kills every other
  process in it; ``--kill-child`` kills the init when ``unshare`` dies, and the
  ``--pdeathsig`` layers kill ``unshare`` (and strace) when the harness dies, even by
  SIGKILL, so a harness killed outright takes its agents with it. Where cgroups cannot
  be delegated (an unprivileged harness), the pid namespace alone contains the run (in a
  user namespace mapping the harness's uid to itself: the agent keeps its uid and gains
  no capability after ``exec``);
- the mount namespace (as root, propagation private): the run's mounts are copies of the
  harness's, so the mount a file was opened through names the run that opened it
  (the fanotify audit attributes events by it, harness/fanotify);
- the separation (confined runs without a sandbox, root or not: :func:`separation`): in
  that namespace the harness's temp directory is a tmpfs holding only this run's own
  scratch and the top-level entries holding a path its command names (an operator's
  tree or an install under /tmp), so another run's scratch, a grading box or the
  harness's records beneath the temp directory do not exist for the agent (ENOENT).
  Landlock already refuses opening them; the separation also takes away what Landlock
  does not mediate: ``chmod``, ``chown``, ``utime`` of a sibling's files by path (red
  team 4's sibling sabotage). Its ``/dev`` is a read-only tmpfs of its own (fresh
  nodes as root, the host's bound read-only otherwise; a new devpts instance; a
  ``/dev/shm`` tmpfs), and ``/sys`` is read-only: a node's mode or times are no channel
  and no sabotage of a sibling (red team 5's devsab, ptychan, syschan). The root mount
  and the kept trees are read-only too, after each path the launcher's policy lets the
  agent write (:func:`writable_paths`) was made a mount of its own: a read through a
  read-only mount sets no atime, so the atimes of shared system files are no channel
  (issue 19's atimechan). A run whose
  task and agent ask for no host network (``network: false``, or ``network: model``
  with the model bridge) also gets a network namespace of its own, loopback only
  (red team 5's tcpchan); ``network: true`` keeps the host's network, and the record's
  ``containment.network`` says ``host``.

Unavailable pieces are recorded on the run (:meth:`RunContainment.facts`), never
silently assumed.
"""

from __future__ import annotations

import functools
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchguard.harness.cgroup import BatchCgroups, CgroupError, RunCgroup
from benchguard.harness.confine import harness_dumpable, protect_harness
from benchguard.harness.launcher_build import native_launcher, native_separation

log = logging.getLogger(__name__)

# Joins every cgroup named before "--" (the run's v2 cgroup, then its v1 CPU share, pids
# and memory cgroups: harness/cpu_share, harness/memory_limit), then execs the rest; a
# join that fails is exit 125 with one line, never the command outside its cgroups. $0
# is the name in messages.
JOIN_SCRIPT = (
    'for f; do [ "$f" = -- ] && break; echo 0 > "$f" || '
    '{ echo "$0: cannot join the run\'s cgroup $f" >&2; exit 125; }; shift; done; '
    'shift; exec "$@"'
)
JOIN_NAME = "benchguard-join"
# Not `exec "$@"`: the init stays the agent's parent, so the agent is never pid 1 (which
# ignores signals it has no handler for) and its exit ends the namespace. $1 names the
# strays file, $2 a gate (a FIFO, or empty): the init waits until the harness opens the
# gate (the fanotify audit has learned the namespace's mounts) before the agent starts.
# The moment the agent exits, the init stops every other process in the namespace
# (`kill -STOP -1`: nothing writes from then on), counts them (its own /proc: every pid
# but its own) into the strays file for the record's strays_killed, and exits, so the
# kernel kills them all.
INIT_SCRIPT = (
    'strays=$1 gate=$2; shift 2; if [ -n "$gate" ]; then read -r _ < "$gate"; fi; '
    '"$@"; code=$?; kill -STOP -1 2>/dev/null; '
    'set -- /proc/[0-9]*; echo $(($# - 1)) > "$strays"; exit $code'
)
INIT_NAME = "benchguard-init"
SHELL = "/bin/sh"
PROBE_TIMEOUT_S = 10.0
SEPARATE_SCRIPT = Path(__file__).with_name("separate_exec.py")


def separate_script() -> Path:
    """The separation helper's file (harness/separate_exec), run before the init."""
    return SEPARATE_SCRIPT


def _under(path: str, parent: str) -> bool:
    return path.startswith(parent.rstrip("/") + "/")


def named_paths(argv: Sequence[str], parent: str) -> list[str]:
    """The existing paths beneath ``parent`` that ``argv`` names, whole or as the value
    of a ``KEY=VALUE`` entry (the launcher's allow-list, a sandbox's binds): what the
    run's command needs to find in its private ``parent``. Resolved, sorted."""
    found: set[str] = set()
    for arg in argv:
        for candidate in (arg, arg.partition("=")[2]):
            if not candidate.startswith("/"):
                continue
            real = os.path.realpath(candidate)
            for path in {os.path.normpath(candidate), real}:
                if _under(path, parent) and os.path.lexists(path):
                    found.add(real if path == real else path)
    return sorted(found)


# The launcher's policy entries the agent may write (harness/confine_exec): what the
# separation keeps writable when it makes the root mount read-only.
WRITABLE_KEYS = ("read_write", "files_write")


def writable_paths(argv: Sequence[str]) -> list[str]:
    """The existing paths ``argv``'s launcher policy lets the agent write (its
    ``read_write=`` and ``files_write=`` entries), resolved as the temp directory is,
    sorted."""
    found: set[str] = set()
    for arg in argv:
        key, sep, value = arg.partition("=")
        if sep and key in WRITABLE_KEYS and value.startswith("/") and os.path.lexists(value):
            found.add(os.path.realpath(value))
    return sorted(found)


@functools.cache
def pdeathsig_prefix() -> tuple[str, ...]:
    """``setpriv --pdeathsig KILL --``, or () where setpriv lacks it."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return ()
    prefix = (setpriv, "--pdeathsig", "KILL", "--")
    return prefix if _works([*prefix, "true"]) else ()


@functools.cache
def pid_namespace_prefix(keep_caps: bool = False) -> tuple[str, ...]:
    """The ``unshare`` command making a run's pid (and mount) namespace, or () where
    this harness cannot make one. ``keep_caps``: an unprivileged harness's first
    process keeps its user namespace's capabilities (the separation mounts with them,
    then gives them up before the init starts); no effect as root."""
    unshare = shutil.which("unshare")
    if unshare is None:
        return ()
    # --ipc: a run's own System V IPC and POSIX message queues (a queue or a shared
    # segment left by one run was a channel to the next: red team 4).
    common = ["--pid", "--fork", "--kill-child=SIGKILL", "--mount", "--mount-proc", "--ipc"]
    if os.geteuid() == 0:
        argv = [unshare, *common, "--propagation", "private"]
    else:
        argv = [unshare, "--user", "--map-current-user", *common]
        if keep_caps:
            argv.append("--keep-caps")
    return tuple(argv) if _works([*argv, "--", "true"]) else ()


# What the probe's command checks inside a separated namespace (each step's effect:
# the named directory kept, the other gone, the fresh /dev, its own devpts holding
# only ptmx, /sys and the root mount read-only, no interface but loopback), one word
# per failed check.
PROBE_SCRIPT = (
    'fail() { echo "benchguard confine: the separation probe found $1" >&2; exit 1; }; '
    'test -d "$1" || fail "its own scratch missing"; '
    'test ! -e "$2" || fail "another scratch visible"; '
    'test -c /dev/null && test -w /dev/null || fail "no usable /dev/null"; '
    'set -- /dev/pts/*; test "$*" = /dev/pts/ptmx || fail "a shared devpts ($*)"; '
    'test -L /dev/ptmx || fail "no /dev/ptmx link"; '
    'case " $(grep " /sys " /proc/self/mountinfo) " in *" /sys ro,"*|"  ") ;; '
    '*) fail "a writable /sys";; esac; '
    "r=; while read -r _ _ _ _ point options _; do "
    'if [ "$point" = / ]; then r=$options; fi; done < /proc/self/mountinfo; '
    'case $r in ro|ro,*) ;; *) fail "a writable root mount";; esac; '
    "n=0; while read -r line; do n=$((n + 1)); done < /proc/net/dev; "
    'test "$n" -le 3 || fail "the host network"'
)


@functools.cache
def separation_works() -> str | None:
    """None when this harness can give a run its private temp directory, /dev, a
    read-only /sys and a network namespace of its own (tried once, on a throwaway
    scratch, in a throwaway namespace: every step of harness/separate_exec, as a run
    without network has them); else why not, naming the step that failed."""
    prefix = pid_namespace_prefix(keep_caps=True)
    if not prefix:
        return "no mount namespace of the run's own (unshare failed)"
    parent = os.path.realpath(tempfile.gettempdir())
    with (
        tempfile.TemporaryDirectory(prefix="bg-separate-probe-", dir=parent) as own,
        tempfile.TemporaryDirectory(prefix="bg-separate-probe-", dir=parent) as other,
    ):
        probe = [SHELL, "-c", PROBE_SCRIPT, "probe", own, other]
        # Kept as a run's would be: the interpreter and this script may live under the
        # temp directory (a checkout in /tmp: CI's fresh clone), and the probe starts in
        # its own scratch, as a run starts in its workspace.
        keep = _kept(separator_programs(), parent, own)
        argv = [*prefix, "--", *_separate_argv(parent, own, keep, net=True), *probe]
        try:
            done = subprocess.run(
                argv, capture_output=True, timeout=PROBE_TIMEOUT_S, check=False, cwd=own
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            return f"the separation could not be tried ({exc})"
        if done.returncode != 0:
            tail = done.stderr.decode("utf-8", "replace").strip().splitlines()
            return tail[-1] if tail else f"the separation probe exited {done.returncode}"
    return None


def _kept(argv: Sequence[str], parent: str, own: str) -> list[str]:
    """The top-level entries of ``parent`` a separated command keeps: whole, so that a
    named program's interpreter or a symlink beside it (an install under /tmp) resolves
    as before. Other runs' scratch, boxes and records are top-level entries no command
    names."""
    return sorted(
        {
            os.path.join(parent, os.path.relpath(path, parent).split(os.sep, 1)[0])
            for path in named_paths(argv, parent)
            if not _under(path, own) and path != own
        }
        - {own}
    )


def separator_programs() -> list[str]:
    """What the separation runs from: the native launcher's ``--separate`` where it is
    built and ports this ``separate_exec.py`` (the same steps, no interpreter start per
    run), else this interpreter and the script (also with ``BENCHGUARD_LAUNCHER=python``)."""
    native = native_separation()
    return [str(native)] if native is not None else [sys.executable, str(SEPARATE_SCRIPT)]


def _separate_argv(
    parent: str,
    own: str,
    keep: Sequence[str],
    *,
    net: bool = False,
    writable: Sequence[str] = (),
) -> list[str]:
    # The native port takes the script's arguments after --separate (options first).
    flags = [*(["--net"] if net else []), *(f"--writable={path}" for path in writable)]
    native = native_separation()
    if native is not None:
        return [str(native), "--separate", *flags, parent, own, *keep, "--"]
    return [sys.executable, "-I", "-S", str(SEPARATE_SCRIPT), *flags, parent, own, *keep, "--"]


def _works(argv: Sequence[str]) -> bool:
    try:
        done = subprocess.run(list(argv), capture_output=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


@dataclass
class RunContainment:
    """How one run is contained, and its command wrapped accordingly."""

    cgroup: RunCgroup | None
    cgroup_unavailable: str | None
    pid_namespace: tuple[str, ...]
    pdeathsig: tuple[str, ...]
    killed_at_end: int = 0
    end_error: str | None = None
    strays_file: Path | None = None
    # The run's scratch when it is separated from the other runs (:func:`separation`).
    separated: Path | None = None
    separation_unavailable: str | None = None
    # Separated runs only: a network namespace of the run's own (loopback only).
    own_network: bool = False

    @classmethod
    def start(
        cls,
        batch: BatchCgroups | str,
        label: str,
        *,
        separate: Path | None = None,
        host_network: bool = True,
        memory: int | None = None,
    ) -> RunContainment:
        """A run's containment in ``batch`` (a reason string when the batch has no
        cgroups: the pid namespace then contains the run alone). ``separate``: the run's
        scratch, to be the only run's scratch its namespace sees (a confined run without
        a sandbox; the sandbox makes its own /tmp). ``host_network``: False gives a
        separated run a network namespace of its own (its task and agent ask for no
        host network). ``memory``: the run's memory limit in bytes
        (harness/memory_limit; None: none)."""
        # Before any agent starts: the harness's memory and root are not for the agent.
        protect_harness()
        cgroup: RunCgroup | None = None
        reason: str | None = batch if isinstance(batch, str) else None
        if isinstance(batch, BatchCgroups):
            try:
                cgroup = batch.new_run(label, memory)
            except CgroupError as exc:
                reason = str(exc)
        unavailable = separation_works() if separate is not None else None
        if separate is not None and unavailable is None:
            return cls(
                cgroup,
                reason,
                pid_namespace_prefix(keep_caps=True),
                pdeathsig_prefix(),
                separated=separate,
                own_network=not host_network,
            )
        return cls(
            cgroup,
            reason,
            pid_namespace_prefix(),
            pdeathsig_prefix(),
            separation_unavailable=unavailable,
        )

    def outer(self, argv: Sequence[str], *, traced: bool = False) -> list[str]:
        """``argv`` joining the cgroup first, dying with the harness.

        With the native launcher built (and no tracer: strace must be the harness's own
        child), ``argv`` is created inside the cgroup by the kernel (``confine-exec
        --spawn``, clone3 ``CLONE_INTO_CGROUP``, both processes with the parent-death
        signal): no shell, no ``setpriv``, no migration of a running process."""
        spawner = native_launcher() if self.cgroup is not None and not traced else None
        if self.cgroup is not None and spawner is not None:
            command = list(argv)
            # The spawned process already has the parent-death signal, and keeps it
            # across exec: inner()'s own setpriv in front of unshare would repeat it.
            if self.pdeathsig and tuple(command[: len(self.pdeathsig)]) == self.pdeathsig:
                command = command[len(self.pdeathsig) :]
            joins = [f"--join={path}" for path in self.cgroup.joins]
            return [str(spawner), "--spawn", str(self.cgroup.directory), *joins, "--", *command]
        wrapped = [*self.pdeathsig, *argv]
        if self.cgroup is not None:
            procs = [str(self.cgroup.procs_file), *map(str, self.cgroup.joins)]
            wrapped = [SHELL, "-c", JOIN_SCRIPT, JOIN_NAME, *procs, "--", *wrapped]
        return wrapped

    def inner(self, argv: Sequence[str], strays_file: Path, gate: Path | None = None) -> list[str]:
        """``argv`` as the child of a fresh pid namespace's init, which writes to
        ``strays_file`` how many processes the agent left running when it exited, and
        (with ``gate``, a FIFO) starts the agent only once the harness opened it."""
        if not self.pid_namespace:
            return list(argv)
        self.strays_file = strays_file
        separate: list[str] = []
        if self.separated is not None:
            parent = os.path.realpath(tempfile.gettempdir())
            own = str(self.separated)
            kept = _kept(argv, parent, own)
            separate = _separate_argv(
                parent, own, kept, net=self.own_network, writable=writable_paths(argv)
            )
        return [
            *self.pdeathsig,
            *self.pid_namespace,
            "--",
            *separate,
            SHELL,
            "-c",
            INIT_SCRIPT,
            INIT_NAME,
            str(strays_file),
            str(gate) if gate is not None else "",
            *argv,
        ]

    def start_error(self, returncode: int | None, stderr_file: Path) -> str | None:
        """Why the agent's program could not be started by the init (dash's own message,
        "benchguard-init: 1: PROGRAM: not found", exit 126 or 127); None when it ran."""
        if not self.pid_namespace or returncode not in (126, 127):
            return None
        try:
            with stderr_file.open("rb") as handle:
                head = handle.read(4096).decode("utf-8", errors="replace")
        except OSError:
            return None
        prefix = f"{INIT_NAME}: "
        for line in head.splitlines():
            if line.startswith(prefix):
                # "benchguard-init: 1: /path: not found" -> "/path: not found"
                return line[len(prefix) :].split(": ", 1)[-1]
        return None

    def strays(self) -> int:
        """The processes the pid namespace's init found alive when the agent exited (the
        kernel killed them with the init); 0 when it did not say."""
        if self.strays_file is None:
            return 0
        try:
            text = self.strays_file.read_text("ascii", errors="replace").strip()
        except OSError:
            return 0
        return int(text) if text.isdigit() and len(text) < 8 else 0

    def end(self) -> int:
        """Freeze and kill the run's cgroup (everything the agent left running); how many
        processes were still alive. A failure is kept for the record."""
        if self.cgroup is None:
            return 0
        try:
            killed = self.cgroup.end()
        except CgroupError as exc:
            self.end_error = str(exc)
            log.error("%s", exc)
            return 0
        self.killed_at_end += killed
        return killed

    @property
    def kills_whole_tree(self) -> bool:
        """Whether the end of the run killed every process of it without fail: its
        cgroup (no process leaves one it cannot write to) or its pid namespace (no
        process leaves one; all die with its init), and the end reported no error."""
        return (self.cgroup is not None or bool(self.pid_namespace)) and self.end_error is None

    def _share_kind(self) -> str | None:
        if self.cgroup is None or self.cgroup.share is None:
            return None
        return "cgroup1" if self.cgroup.share.join else "cgroup2"

    def _share_unavailable(self) -> str | None:
        if self.cgroup is None:
            return f"no run cgroup ({self.cgroup_unavailable})"
        return self.cgroup.share_unavailable if self.cgroup.share is None else None

    def _memory_unavailable(self) -> str | None:
        if self.cgroup is None:
            return f"no run cgroup ({self.cgroup_unavailable})"
        return self.cgroup.memory_unavailable if self.cgroup.memory is None else None

    def oom_kills(self) -> int | None:
        """How many of the run's processes the kernel killed at its memory limit (its
        memory cgroup's ``oom_kill``); None without a limit or when unreadable. Read
        before the run's cgroups are removed."""
        if self.cgroup is None or self.cgroup.memory is None:
            return None
        return self.cgroup.memory.oom_kills()

    def facts(self) -> dict[str, Any]:
        """``record["containment"]``: what contained this run."""
        memory = self.cgroup.memory if self.cgroup is not None else None
        kills = self.oom_kills()
        return {
            # Whether it had one (its name is random per run: kept off the record).
            "cgroup": self.cgroup is not None,
            "cgroup_unavailable": self.cgroup_unavailable if self.cgroup is None else None,
            "pid_namespace": bool(self.pid_namespace),
            "dies_with_harness": bool(self.pdeathsig) and bool(self.pid_namespace),
            "killed_at_end": self.killed_at_end,
            # Whether the run's namespace held no other run's scratch and a /dev/shm of
            # its own (:func:`separation_works`); why not, when it was asked for.
            "separated": self.separated is not None,
            "separation_unavailable": self.separation_unavailable,
            # Separated runs: "own", a network namespace of the run's own, loopback
            # only (the model bridge for network: model); "host", the host's network,
            # where a concurrent run's loopback server is reachable (network: true).
            # None: not made here (a sandbox makes its own; unseparated: the host's).
            "network": ("own" if self.own_network else "host") if self.separated else None,
            "end_error": self.end_error,
            # How the kernel shared CPU between this run and its siblings
            # (harness/cpu_share): "cgroup2" (cpu.weight) or "cgroup1" (cpu.shares),
            # each run the same; None: per session only (a run that setsid()s busy
            # processes can starve its siblings), and cpu_share_unavailable says why.
            "cpu_share": self._share_kind(),
            "cpu_share_unavailable": self._share_unavailable(),
            # The run's memory limit in bytes (harness/memory_limit: memory.max, or v1
            # memory.limit_in_bytes); None: unlimited, memory_limit_unavailable says why
            # (a run that exhausts the machine can then get a sibling OOM-killed).
            "memory_limit": memory.limit if memory is not None else None,
            "memory_limit_unavailable": self._memory_unavailable(),
            # Whether the kernel OOM-killed a process of this run at its own limit, and
            # how many (None: no limit, or its counter could not be read).
            "memory_limit_reached": None if kills is None else kills > 0,
            "memory_oom_kills": kills,
            # Every agent starts through the launcher, which drops every capability and
            # refuses to run the agent when the kernel still reports one.
            "agent_capabilities": "none",
            # The kernel's answer: False when /proc/<harness>/mem, root, environ need
            # CAP_SYS_PTRACE (protect_harness), None when it would not say.
            "harness_dumpable": harness_dumpable(),
        }
