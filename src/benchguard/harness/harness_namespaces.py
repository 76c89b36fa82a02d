"""Mount namespaces the harness made (sandboxes, grading boxes), known by the kernel's
identity before any process runs in them, for every fanotify observer of the batch.

Why: a bubblewrap sandbox makes a mount namespace of its own, and its binds are mounts
no observer knew. An observer learned such a namespace only by polling the live
processes of the runs' cgroups, so a short sandbox on a loaded machine (an honest agent
done in a fraction of a second, a check of the grading box) could start, open files and
end between two polls. Its namespace was then gone when the events were read: the
mount named no run, the pid no cgroup, and the kernel's path of each file was relative
to a detached bind (``/honest.py``, not the agent's own directory), so an honest run was
charged ``unattributed`` material: an agent's own script and directory (reproduced:
``-j 2 --sandbox bwrap`` as root, honest example runs under CPU load). A grading box is
the same case (a pytest check loads the harness's plugin from its checkout).

How: every sandbox the harness starts runs bwrap with ``--info-fd`` (bwrap reports the
child's ``mnt-namespace`` inode once the namespace exists) and ``--block-fd`` (the child
waits before it runs the command). Before the command runs, the harness opens
``/proc/PID/ns/mnt`` of a candidate process whose namespace is that inode (a member of
the run's cgroup for an agent's sandbox; bwrap's child for a grading box), holds it and
registers it here with its owner: the run's cgroup name, or ``None`` for the harness's
own grading boxes. Held, the namespace and its mounts outlive its processes (paths stay
whole); its mounts are listed by 64-bit unique id (never reused) on a miss and once more
on release, and the owner of each listed mount is remembered after release (bounded).

Attacker's view: an agent cannot have its opens classed as the harness's: a namespace
registered for a run is owned by that run whatever registers it, and a namespace is
owned by the harness only when the harness's own ``Popen`` of a grading box made it
(bwrap started by the harness, its report read from a FIFO in the box's directory,
which no sandbox binds). A namespace an agent makes itself is never registered here
(the observers still learn it from the run's cgroup, as the run's).

Partly covered: the mount namespace the Landlock launcher unshares inside the sandbox
for a fresh home (harness.confine_exec), where the agent itself runs, is made after bwrap
let the command go; :meth:`SandboxGate.admit_run` registers the first one a process in
the sandbox's pid namespace enters, but by polling, so a launcher namespace that lives
less than a poll can still be missed until the launcher reports and waits too.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

log = logging.getLogger(__name__)

# Registered namespaces held open at once (each costs a descriptor).
MAX_HELD = 256
# Unique mount ids whose owner is remembered after their namespace was released.
MAX_REMEMBERED_MOUNTS = 1 << 16
MAX_UNKNOWN = 4096
# bwrap's info report: a small JSON object.
MAX_INFO_BYTES = 4096
# How long a sandbox waits for its namespace to be registered before it runs anyway.
ADMIT_TIMEOUT_S = 10.0
INFO_FIFO = "bwrap-info"
BLOCK_FIFO = "bwrap-block"
# Opens the two FIFOs read-write (a FIFO opened so never blocks) as descriptors 8 and
# 9 and execs bwrap with them; they are bwrap's alone (it closes the block one before the
# command runs, and passes neither on). dash: a few milliseconds, where an interpreter
# took fifty. A caller passing descriptors of its own keeps them above 9.
WRAPPER = 'exec 8<>"$1" 9<>"$2"; shift 2; exec "$@"'
INFO_FD = "8"
BLOCK_FD = "9"


Lister = Callable[[int], "set[int] | None"]


@dataclass
class _Held:
    fd: int
    owner: str | None


@dataclass
class NamespaceRegistry:
    """The batch's registered namespaces (one per harness process; thread-safe)."""

    _lock: threading.Lock = field(default_factory=threading.Lock)
    _held: dict[int, _Held] = field(default_factory=dict)
    _mounts: dict[int, str | None] = field(default_factory=dict)
    # Mount ids no registered namespace held when asked, valid until the next register.
    _unknown: set[int] = field(default_factory=set)
    _next: int = 1
    # How a held namespace's mounts are listed (harness.fanotify's namespace_mounts,
    # given by that module when it is imported: the observers are its own; this module
    # cannot import it, which imports this one).
    lister: Lister | None = None

    def register(self, fd: int, owner: str | None) -> int | None:
        """Hold ``fd`` (an open ``/proc/PID/ns/mnt``; this registry now owns it) for
        ``owner``; a token for :meth:`release`, or None (closed) when full."""
        with self._lock:
            if len(self._held) >= MAX_HELD:
                os.close(fd)
                return None
            token = self._next
            self._next += 1
            self._held[token] = _Held(fd, owner)
            self._unknown.clear()
            self._learn(self._held[token])
            return token

    def release(self, token: int | None) -> None:
        """List the namespace once more (its mounts are all made by now), then close it;
        the owner of each of its mounts stays known."""
        if token is None:
            return
        with self._lock:
            held = self._held.pop(token, None)
            if held is None:
                return
            self._learn(held)
            with contextlib.suppress(OSError):
                os.close(held.fd)

    def lookup(self, mount: int) -> tuple[bool, str | None]:
        """``(known, owner)`` of the mount with unique id ``mount``: known when a
        registered namespace holds it (or held it); owner None for the harness's own."""
        with self._lock:
            if mount in self._mounts:
                return True, self._mounts[mount]
            if mount in self._unknown:
                return False, None
            for held in self._held.values():
                self._learn(held)
            if mount in self._mounts:
                return True, self._mounts[mount]
            if len(self._unknown) < MAX_UNKNOWN:
                self._unknown.add(mount)
            return False, None

    def fd_of(self, token: int | None) -> int | None:
        with self._lock:
            held = self._held.get(token) if token is not None else None
            return held.fd if held is not None else None

    def held(self) -> int:
        with self._lock:
            return len(self._held)

    def _learn(self, held: _Held) -> None:
        ids = self.lister(held.fd) if self.lister is not None else None
        for mount in ids or ():
            if mount in self._mounts or len(self._mounts) < MAX_REMEMBERED_MOUNTS:
                self._mounts[mount] = held.owner


REGISTRY = NamespaceRegistry()


def _namespace_of(pid: int | str) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/mnt")
    except OSError:
        return None


def _pid_namespace_of(pid: int) -> str | None:
    try:
        return os.readlink(f"/proc/{pid}/ns/pid")
    except OSError:
        return None


def _namespace_of_fd(fd: int | None) -> str | None:
    if fd is None:
        return None
    try:
        return f"mnt:[{os.fstat(fd).st_ino}]"
    except OSError:
        return None


def lookup(mount: int) -> tuple[bool, str | None]:
    """:meth:`NamespaceRegistry.lookup` on the process's registry."""
    return REGISTRY.lookup(mount)


@dataclass
class SandboxGate:
    """One sandbox's two FIFOs (in a directory no sandbox binds): bwrap reports its
    namespace on the first and waits on the second until :meth:`admit` has registered
    it. Make it before the argv (:meth:`wrap`), admit after the process started."""

    directory: Path
    token: int | None = None
    # The launcher's namespace inside the sandbox (admit_run), when it was seen.
    followed: int | None = None
    problem: str | None = None
    _info: int = -1
    # bwrap's reported pid namespace (inode): the processes inside the sandbox.
    _sandbox_pids: object = None
    _block: int = -1

    @classmethod
    def make(cls, directory: Path) -> SandboxGate:
        gate = cls(directory)
        os.mkfifo(gate.info_path, 0o600)
        os.mkfifo(gate.block_path, 0o600)
        # Opened now, so bwrap's report waits in the FIFO however late it is read.
        gate._info = os.open(gate.info_path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        # Held read-write too: the byte that lets bwrap go never waits for a reader.
        gate._block = os.open(gate.block_path, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        return gate

    @property
    def info_path(self) -> Path:
        return self.directory / INFO_FIFO

    @property
    def block_path(self) -> Path:
        return self.directory / BLOCK_FIFO

    def wrap(self, bwrap_argv: list[str]) -> list[str]:
        """``bwrap_argv`` (``bwrap`` first) started so it reports and waits."""
        return [
            "/bin/sh",
            "-c",
            WRAPPER,
            "sh",
            str(self.info_path),
            str(self.block_path),
            bwrap_argv[0],
            "--info-fd",
            INFO_FD,
            "--block-fd",
            BLOCK_FD,
            *bwrap_argv[1:],
        ]

    def admit_run(
        self,
        run: str,
        candidates: Callable[[dict[str, object]], Iterable[int]],
        *,
        stop: Callable[[], bool] = lambda: False,
    ) -> None:
        """An agent's sandbox: its namespace is the run's (``run``: its cgroup's name;
        ``candidates``: that cgroup's processes). Then the one namespace the launcher
        unshares inside it for a fresh home (where the agent runs) is followed."""
        self._admit(run, candidates, stop)
        sandbox = self._sandbox_pids
        if self.token is not None and isinstance(sandbox, int):
            self._follow(run, candidates, stop, f"pid:[{sandbox}]")

    def _follow(
        self,
        run: str,
        candidates: Callable[[dict[str, object]], Iterable[int]],
        stop: Callable[[], bool],
        sandbox: str,
    ) -> None:
        """Register the first mount namespace other than bwrap's that a process of the
        sandbox (a member of the run's cgroup in the sandbox's own pid namespace,
        ``sandbox``) enters, as the run's. Polled: the launcher unshares it after bwrap
        let the command go, so a namespace that lived less than a poll can still be
        missed; one only (an agent that makes namespaces in a loop cannot fill the
        registry), and never the harness's own."""
        seen = {_namespace_of_fd(REGISTRY.fd_of(self.token)), _namespace_of("self")}
        deadline = time.monotonic() + ADMIT_TIMEOUT_S
        while time.monotonic() < deadline and not stop():
            for pid in candidates({}):
                name = _namespace_of(pid)
                if name is None or name in seen or _pid_namespace_of(pid) != sandbox:
                    continue
                try:
                    fd = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
                except OSError:
                    continue
                if f"mnt:[{os.fstat(fd).st_ino}]" != name:
                    os.close(fd)  # the pid moved on since: look again
                    continue
                self.followed = REGISTRY.register(fd, run)
                return
            time.sleep(0.0005)

    def admit_box(self, child_pid: Callable[[dict[str, object]], Iterable[int]]) -> None:
        """A grading box the harness itself started: its namespace is no run's."""
        self._admit(None, child_pid, lambda: False)

    def let_run(self) -> None:
        """Let the command run without registering anything."""
        self._open_block()

    def _admit(
        self,
        owner: str | None,
        candidates: Callable[[dict[str, object]], Iterable[int]],
        stop: Callable[[], bool],
        timeout_s: float = ADMIT_TIMEOUT_S,
    ) -> None:
        """Read bwrap's report, register the namespace it names (held through a process
        ``candidates(report)`` names whose namespace is that inode) for ``owner``, then
        let the command run. Always lets it run: a namespace not registered is only less
        well named (``problem`` says why), never a reason to hang the sandbox."""
        try:
            deadline = time.monotonic() + timeout_s
            report = self._report(deadline, stop)
            if report is None:
                self.problem = self.problem or "bwrap reported no namespace in time"
                return
            self._sandbox_pids = report.get("pid-namespace")
            inode = report.get("mnt-namespace")
            if not isinstance(inode, int):
                self.problem = "bwrap's report names no mount namespace"
                return
            fd = self._hold(inode, report, candidates, deadline, stop)
            if fd is None:
                self.problem = f"no process of mount namespace {inode} could be opened"
                return
            self.token = REGISTRY.register(fd, owner)
            if self.token is None:
                self.problem = f"more than {MAX_HELD} sandbox namespaces at once"
        finally:
            self._open_block()

    def close(self) -> None:
        """Release the namespace (after the observers drained what it did) and the FIFOs."""
        REGISTRY.release(self.token)
        REGISTRY.release(self.followed)
        self.token = self.followed = None
        for fd in (self._info, self._block):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._info, self._block = -1, -1
        for path in (self.info_path, self.block_path):
            with contextlib.suppress(OSError):
                path.unlink()

    def _report(self, deadline: float, stop: Callable[[], bool]) -> dict[str, object] | None:
        data = b""
        while time.monotonic() < deadline and not stop():
            try:
                chunk = os.read(self._info, MAX_INFO_BYTES)
            except BlockingIOError:
                chunk = b""
            data += chunk
            if len(data) > MAX_INFO_BYTES:
                return None
            if chunk:
                try:
                    loaded = json.loads(data.decode("utf-8", errors="replace"))
                except ValueError:
                    continue  # not all of it yet
                return loaded if isinstance(loaded, dict) else None
            time.sleep(0.001)
        return None

    @staticmethod
    def _hold(
        inode: int,
        report: dict[str, object],
        candidates: Callable[[dict[str, object]], Iterable[int]],
        deadline: float,
        stop: Callable[[], bool],
    ) -> int | None:
        name = f"mnt:[{inode}]"
        while time.monotonic() < deadline and not stop():
            for pid in candidates(report):
                try:
                    if os.readlink(f"/proc/{pid}/ns/mnt") != name:
                        continue
                    fd = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
                except OSError:
                    continue
                # The very namespace, whatever the pid became since the readlink.
                if os.fstat(fd).st_ino == inode:
                    return fd
                os.close(fd)
            time.sleep(0.001)
        return None

    def _open_block(self) -> None:
        if self._block >= 0:
            with contextlib.suppress(OSError):
                os.write(self._block, b"x")
