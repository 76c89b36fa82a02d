"""The fanotify audit (root): what the kernel opened for the run, by what the file is.

A notification group (``FAN_CLASS_NOTIF``) marks each filesystem holding the protected
set (``FAN_MARK_FILESYSTEM``: every mount of it, bind mounts and detached mount trees
included) for opens, executions and closes after writing, directories included. Each
event carries an open descriptor of the very file; the observer reads its identity
(``fstat``: device, inode, mtime) and the kernel's path for it (``/proc/self/fd``), and
matches the protected set by identity first, then by that path. Nothing is re-spelled:
``//x``, ``/proc/self/root/x``, a dup'ed or inherited descriptor, another thread's
``chdir``, a symlink, ``open_tree``, ``open_by_handle_at`` and an ``io_uring`` open all
end in the same kernel open, and the event names the file it opened.

Which run opened it: every run has its own mount namespace (harness/containment), so
the mount the event's descriptor was opened through names the run, however fast the
process exited. Mounts are named by the kernel's 64-bit unique mount id (``statx``
``STATX_MNT_ID_UNIQUE`` for the event, ``listmount`` of each namespace by its 64-bit id),
never by the 32-bit ``mnt_id`` of fdinfo and mountinfo, which the kernel hands to the
next mount made anywhere once it is freed (an honest sandboxed run was charged with a
neighbour's files that way). On a kernel without them (before 6.8/6.11) no mount is
named and attribution falls back to the cgroup. A mount the
observer does not know (a sandbox's binds, a detached tree) is looked up in the mount
namespaces of the live members of this process's run cgroups; failing that the event's
pid is asked for its cgroup (``/proc/PID/cgroup``); and when that process is gone too,
the access is recorded as ``unattributed`` on the run (the fallback errs toward
recording). The harness's own mounts are never the run's: its processes live in their
own namespace.

What it cannot see (``unseen`` on the summary): opens that failed, so an open Landlock
denied (EACCES) leaves no event (``sees_denied: false``; Landlock still prevented it),
and neither does one the sandbox hid; ``stat``/``access``/``readlink`` lookups;
unlink, rename, mkdir and chmod (no descriptor); reads through a descriptor opened
before the run; files on filesystems that hold no protected path.

Bounded: the queue is unlimited (``FAN_UNLIMITED_QUEUE``) and drained after the run's
processes are dead; an overflow, a lost mark or a failure of the reader makes the
summary incomplete, never clean.
"""

from __future__ import annotations

import contextlib
import ctypes
import fcntl
import functools
import logging
import os
import select
import stat
import struct
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchguard.harness import cgroup as cgroups
from benchguard.harness import harness_namespaces
from benchguard.harness.audit import (
    MAX_RECORDED_ACCESSES,
    AuditUnavailable,
    ProtectedSet,
    metadata_change,
    outside_own_trees,
)
from benchguard.harness.fanotify_attrib import AttribWatch
from benchguard.harness.fanotify_close import close_later
from benchguard.harness.fanotify_ignore import IgnoreMarks
from benchguard.harness.fanotify_libc import fanotify_libc
from benchguard.harness.fanotify_procs import ForkRecord, open_record
from benchguard.harness.fanotify_readers import run_soon

log = logging.getLogger(__name__)

FAN_CLASS_NOTIF = 0x0
FAN_CLOEXEC = 0x1
FAN_NONBLOCK = 0x2
FAN_UNLIMITED_QUEUE = 0x10
FAN_MARK_ADD = 0x1
FAN_MARK_MOUNT = 0x10
FAN_MARK_IGNORED_SURV_MODIFY = 0x40
FAN_MARK_FILESYSTEM = 0x100
FAN_MARK_IGNORE = 0x400
FAN_CLOSE_WRITE = 0x8
FAN_OPEN = 0x20
FAN_OPEN_EXEC = 0x1000
FAN_Q_OVERFLOW = 0x4000
FAN_ONDIR = 0x40000000
FAN_NOFD = -1
FANOTIFY_METADATA_VERSION = 3
AT_FDCWD = -100
# struct fanotify_event_metadata: event_len, vers, reserved, metadata_len, mask, fd, pid
_METADATA = struct.Struct("=IBBHQii")
MASK = FAN_OPEN | FAN_OPEN_EXEC | FAN_CLOSE_WRITE | FAN_ONDIR
_READ_BYTES = 1 << 16
_POLL_MS = 50
# After a wake-up, how long the reader lets further events queue before it reads them.
COALESCE_S = 0.002
# How long the observer waits for the run's namespace to appear before it lets the run
# start anyway (the summary is then incomplete).
GATE_TIMEOUT_S = 10.0
UNSEEN = (
    "opens that failed: an open Landlock denied (EACCES) or the sandbox hid leaves no "
    "event (Landlock still prevented it)",
    "stat, access and readlink lookups",
    "unlink, rename, mkdir (no file is opened)",
    "which run an exited process's metadata change was, where the kernel's fork record "
    "could not place it (recorded as unattributed, for review)",
    "reads through a descriptor opened before the run",
    "files on a filesystem that holds no protected path",
)


def _init() -> int:
    flags = FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_UNLIMITED_QUEUE
    event_flags = os.O_RDONLY | os.O_LARGEFILE | os.O_CLOEXEC | os.O_NONBLOCK
    fd = int(fanotify_libc().fanotify_init(flags, event_flags))
    if fd < 0:
        error = ctypes.get_errno()
        raise OSError(error, os.strerror(error))
    return fd


def _mark_filesystem(fd: int, path: str) -> None:
    done = fanotify_libc().fanotify_mark(
        fd, FAN_MARK_ADD | FAN_MARK_FILESYSTEM, MASK, AT_FDCWD, os.fsencode(path)
    )
    if done != 0:
        error = ctypes.get_errno()
        raise OSError(error, f"{path}: {os.strerror(error)}")


def _ignore_mount(fd: int, path: str) -> bool:
    """Tell the kernel to drop events through the mount at ``path`` (one of the
    harness's own: the run opens files through its namespace's copies, never these),
    so the machine's other processes cost the observer nothing. False if refused."""
    flags = FAN_MARK_ADD | FAN_MARK_MOUNT | FAN_MARK_IGNORE | FAN_MARK_IGNORED_SURV_MODIFY
    return bool(fanotify_libc().fanotify_mark(fd, flags, MASK, AT_FDCWD, os.fsencode(path)) == 0)


def _mount_points(pid: int | str = "self") -> list[str]:
    try:
        with open(f"/proc/{pid}/mountinfo", "rb") as handle:
            text = handle.read().decode("utf-8", errors="replace")
    except OSError:
        return []
    points = []
    for line in text.splitlines():
        fields = line.split(" ")
        if len(fields) > 4:
            points.append(fields[4].replace("\\040", " ").replace("\\011", "\t"))
    return points


@functools.cache
def probe_fanotify() -> str | None:
    """None when a filesystem mark works here (root, fanotify built in); else why not."""
    if os.geteuid() != 0:
        return "fanotify filesystem marks need root (CAP_SYS_ADMIN)"
    try:
        fd = _init()
    except (OSError, AttributeError) as exc:
        return f"fanotify_init failed ({exc})"
    try:
        _mark_filesystem(fd, "/")
    except OSError as exc:
        return f"fanotify_mark failed ({exc})"
    finally:
        os.close(fd)
    return None


def require_fanotify() -> None:
    """Raise :class:`AuditUnavailable` when ``--audit fanotify`` cannot work here."""
    reason = probe_fanotify()
    if reason is not None:
        raise AuditUnavailable(
            f"the fanotify audit cannot run here: {reason}; use --audit strace or --audit none"
        )


SYS_STATX = 332
SYS_LISTMOUNT = 458
AT_EMPTY_PATH = 0x1000
STATX_MNT_ID_UNIQUE = 0x4000  # Linux 6.8
_STATX_MNT_ID_OFFSET = 144  # struct statx: __u64 stx_mnt_id
NS_GET_MNTNS_ID = 0x8008B705  # _IOR(0xb7, 0x5, __u64), Linux 6.11
LSMT_ROOT = 0xFFFFFFFFFFFFFFFF  # listmount: every mount of the namespace
# struct mnt_id_req (MNT_ID_REQ_SIZE_VER1): size, spare, mnt_id, param, mnt_ns_id
_MNT_ID_REQ = struct.Struct("=IIQQQ")
_LIST_BATCH = 512


def _unique_mount(fd: int) -> int | None:
    """The 64-bit unique id of the mount ``fd`` was opened through (``statx``
    ``STATX_MNT_ID_UNIQUE``): never handed to another mount, unlike the 32-bit
    ``mnt_id`` of fdinfo and mountinfo, which the kernel gives to the next mount made
    anywhere as soon as it is freed. None when the kernel cannot say (before 6.8)."""
    buffer = ctypes.create_string_buffer(256)
    done = fanotify_libc().syscall(
        ctypes.c_long(SYS_STATX),
        ctypes.c_int(fd),
        b"",
        ctypes.c_int(AT_EMPTY_PATH),
        ctypes.c_uint(STATX_MNT_ID_UNIQUE),
        buffer,
    )
    if done != 0:
        return None
    (mask,) = struct.unpack_from("=I", buffer, 0)
    if not mask & STATX_MNT_ID_UNIQUE:
        return None
    (mount,) = struct.unpack_from("=Q", buffer, _STATX_MNT_ID_OFFSET)
    return int(mount)


def namespace_mounts(ns_fd: int) -> set[int] | None:
    """The unique ids of every mount in the mount namespace ``ns_fd`` (an open
    ``/proc/PID/ns/mnt``), asked of the kernel by the namespace's own 64-bit id
    (``NS_GET_MNTNS_ID``, ``listmount``: Linux 6.11). None when it cannot say."""
    raw = bytearray(8)
    try:
        fcntl.ioctl(ns_fd, NS_GET_MNTNS_ID, raw)
    except OSError:
        return None
    (namespace,) = struct.unpack("=Q", raw)
    ids: set[int] = set()
    last = 0
    while True:
        # mnt_id LSMT_ROOT: the whole namespace; param: the last id already returned.
        request = ctypes.create_string_buffer(
            _MNT_ID_REQ.pack(_MNT_ID_REQ.size, 0, LSMT_ROOT, last, namespace), _MNT_ID_REQ.size
        )
        found = (ctypes.c_uint64 * _LIST_BATCH)()
        count = int(
            fanotify_libc().syscall(
                ctypes.c_long(SYS_LISTMOUNT),
                request,
                found,
                ctypes.c_size_t(_LIST_BATCH),
                ctypes.c_uint(0),
            )
        )
        if count < 0:
            return None
        batch = [int(found[i]) for i in range(count)]
        ids.update(batch)
        if count < _LIST_BATCH:
            return ids
        last = batch[-1]


harness_namespaces.REGISTRY.lister = namespace_mounts


def _mount_ids(pid: int | str) -> tuple[str | None, set[int]]:
    """The mount namespace of ``pid`` (its ns link) and the unique ids of its mounts."""
    try:
        fd = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None, set()
    try:
        return f"mnt:[{os.fstat(fd).st_ino}]", namespace_mounts(fd) or set()
    finally:
        os.close(fd)


# Mount namespaces one observer holds open at most (each costs a descriptor): the run's
# own, the launcher's, a sandbox's, and the other live runs' of this harness.
MAX_HELD_NAMESPACES = 128
# Pids whose run is remembered (harness.fanotify._learn_pid).
MAX_KNOWN_PIDS = 1 << 16
# Unique mount ids remembered as another process's (each saves a listing per event).
MAX_FOREIGN_MOUNTS = 4096


def hold_namespace(pid: int) -> tuple[int, str, set[int]] | None:
    """An open descriptor of ``pid``'s mount namespace, its name and the unique ids of
    its mounts (asked through the descriptor itself, so they are that namespace's even
    if ``pid`` has exited or moved since).

    The ids are the kernel's 64-bit unique mount ids, never reused: a red team's honest
    sandboxed run was flagged for another process's files because a 32-bit id learned
    for the run (a bwrap staging mount, freed inside the held namespace when bwrap
    detached its old root) was handed to a neighbour's mount. The namespace is still
    held open so it can be listed again while it lives (a sandbox mounts after it was
    first learned)."""
    try:
        fd = os.open(f"/proc/{pid}/ns/mnt", os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    ids = namespace_mounts(fd)
    if ids is None:
        os.close(fd)
        return None
    return fd, f"mnt:[{os.fstat(fd).st_ino}]", ids


def _filesystems(protected: ProtectedSet) -> list[str]:
    """One existing path per distinct filesystem (device) holding a protected root."""
    chosen: dict[int, str] = {}
    for root in protected.roots:
        path = root.path
        while path and not os.path.exists(path):
            path = os.path.dirname(path)
        try:
            device = os.stat(path or "/").st_dev
        except OSError:
            continue
        chosen.setdefault(device, path or "/")
    return [chosen[device] for device in sorted(chosen)]


@dataclass
class FanotifyObserver:
    """One run's fanotify audit: :meth:`start` before the agent, :meth:`finish` once
    its cgroup is empty (the queue then holds everything it did)."""

    protected: ProtectedSet
    run: cgroups.RunCgroup | None
    # The run has a mount namespace of its own (the harness's mounts are never its).
    own_namespace: bool = True
    # A FIFO the run's init waits on: opened once the run's namespace is learned.
    gate: Path | None = None
    events: int = 0
    total_protected: int = 0
    found: dict[tuple[str, str, str], dict[str, str]] = field(default_factory=dict)
    attributed: dict[str, int] = field(default_factory=dict)
    problem: str | None = None
    marked: list[str] = field(default_factory=list)
    # Harness mounts whose events the kernel drops for this group.
    ignored: int = 0
    _fd: int = -1
    _proc_fd: int = -1
    # The gate, held open read-write from the start (see _hold_gate).
    _gate_fd: int = -1
    _gate_released: bool = False
    _wake: tuple[int, int] = (-1, -1)
    _stop: threading.Event = field(default_factory=threading.Event)
    # Set once the reader (harness.fanotify_readers) has left :meth:`_loop`.
    _done: threading.Event | None = None
    _me: int = field(default_factory=os.getpid)
    _host_namespace: str | None = None
    _host_mounts: set[int] = field(default_factory=set)
    # mount id -> the hierarchy name of the run cgroup whose namespace holds it.
    _mounts: dict[int, str] = field(default_factory=dict)
    _namespaces: dict[str, str] = field(default_factory=dict)
    # The learned namespaces, held open while the observer runs (see hold_namespace).
    _held: dict[str, int] = field(default_factory=dict)
    # Unique mount ids no held namespace had when listed after their event.
    _foreign: set[int] = field(default_factory=set)
    # The FAN_ATTRIB group (harness.fanotify_attrib); None when it could not be made.
    _attrib: AttribWatch | None = None
    # Ignore marks on unprotected inodes that recur (harness.fanotify_ignore).
    _ignores: IgnoreMarks | None = None
    metadata_problem: str | None = None
    # Other processes' metadata events (known not the run's): never charged to it.
    metadata_dropped: int = 0
    # Events outside the run's trees by exited processes nothing could place: they
    # could be the run's, so each is an "unattributed" access (a weak finding: the run
    # goes to review, never reads clean, and is never zeroed for it alone).
    metadata_unattributed: int = 0
    # The kernel's fork record (harness.fanotify_procs): the run's processes by descent.
    _forks: ForkRecord | None = None
    forks_problem: str | None = None
    _attrib_marks: list[str] = field(default_factory=list)
    # pid -> the run its opens went through (None: no run's mount), see _learn_pid.
    _pid_runs: dict[int, str | None] = field(default_factory=dict)
    # pid -> whether its cgroup was the run's when its first metadata event was read.
    _pid_member: dict[int, bool] = field(default_factory=dict)

    def start(self) -> None:
        self._hold_gate()
        self._host_namespace, self._host_mounts = _mount_ids("self")
        try:
            self._fd = _init()
            self._ignores = IgnoreMarks(self._fd, self.protected)
            for path in _filesystems(self.protected):
                _mark_filesystem(self._fd, path)
                self.marked.append(path)
            if self.own_namespace:
                for point in _mount_points():
                    if _ignore_mount(self._fd, point):
                        self.ignored += 1
            self._proc_fd = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            self._start_attrib()
        except OSError as exc:
            self.problem = f"fanotify could not watch the protected set ({exc})"
            self._close()
            self._release_gate()
            return
        self._wake = os.pipe()
        # A reader kept for the batch: no thread start (and its wait) per run.
        self._done = run_soon(self._loop)

    def _start_attrib(self) -> None:
        """The metadata group, on the protected set's filesystems, the root's and the
        scratch's (a chmod or utime anywhere on the host outside the run's trees)."""
        paths = sorted({*_filesystems(self.protected), "/", tempfile.gettempdir()})
        try:
            self._attrib = AttribWatch.open(paths)
        except OSError as exc:
            self.metadata_problem = f"metadata changes are not watched ({exc})"
            return
        if self.run is not None:
            # Before the run's first fork: every process of it is then on the record.
            self._forks, self.forks_problem = open_record(self.run.holds)

    def finish(self) -> dict[str, Any]:
        """Drain what is queued, stop, and return ``record["system_audit"]``."""
        self._stop.set()
        if self._wake[1] >= 0:
            with contextlib.suppress(OSError):
                os.write(self._wake[1], b"x")
        if self._done is not None:
            self._done.wait()
        self._close()
        if self._gate_fd >= 0:
            with contextlib.suppress(OSError):
                os.close(self._gate_fd)
            self._gate_fd = -1
        accesses = sorted(
            self.found.values(), key=lambda a: (a["path"], a["operation"], a["result"])
        )
        return {
            "tool": "fanotify",
            "complete": self.problem is None,
            "incomplete_reason": self.problem,
            "events": self.events,
            "protected_accesses": self.total_protected,
            "accesses": accesses[:MAX_RECORDED_ACCESSES],
            "log_bytes": 0,
            "sees_denied": False,
            "unseen": list(UNSEEN),
            "marks": list(self.marked),
            "ignored_harness_mounts": self.ignored,
            # Unprotected inodes whose later opens the kernel dropped for this run.
            "ignored_inodes": self._ignores.added if self._ignores is not None else 0,
            "attributed_by": dict(sorted(self.attributed.items())),
            # FAN_ATTRIB: chmod, chown, utimes and xattr changes outside the run's trees.
            "metadata_watched": self._attrib_marks,
            "metadata_problem": self.metadata_problem,
            "metadata_dropped": self.metadata_dropped,
            "metadata_unattributed": self.metadata_unattributed,
            # How an exited process's change is placed: the kernel's fork record, or
            # why it is not available (each such change then reads incomplete).
            "metadata_attribution": "fork record" if self.forks_problem is None else None,
            "metadata_attribution_problem": self.forks_problem,
        }

    def _hold_gate(self) -> None:
        """Open the gate read-write before the run starts: the init's own open of it
        then returns at once and its ``read`` waits for the line :meth:`_release_gate`
        writes, so the agent starts the moment the namespace is learned (no poll for
        the init to reach the FIFO). Held until :meth:`finish` (the run's processes are
        dead by then): closed earlier, a line the init had not read yet would be lost
        with the FIFO's buffer."""
        if self.gate is None:
            return
        try:
            self._gate_fd = os.open(self.gate, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)
        except OSError as exc:
            self.problem = f"the run's gate could not be opened ({exc})"

    def _release_gate(self) -> None:
        """Let the run's agent start (once; its init reads one line)."""
        if self._gate_fd < 0 or self._gate_released:
            return
        self._gate_released = True
        try:
            os.write(self._gate_fd, b"\n")
        except OSError as exc:
            # A FIFO's buffer takes one byte unless it is broken: the run cannot start.
            self.problem = self.problem or f"the run's gate could not be opened ({exc})"

    def _close(self) -> None:
        if self._forks is not None:
            if self._forks.lost is not None:
                self.forks_problem = self.forks_problem or self._forks.lost
            self._forks.close()
            self._forks = None
        if self._attrib is not None:
            self._attrib_marks = list(self._attrib.marked)
            self._attrib.close(group=close_later)
            self._attrib = None
        # The group itself waits in the kernel for its marks to go (fanotify_close).
        close_later(self._fd)
        for fd in (*self._wake, self._proc_fd):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._fd, self._wake, self._proc_fd = -1, (-1, -1), -1
        for held in self._held.values():
            with contextlib.suppress(OSError):
                os.close(held)
        self._held.clear()

    def _admit(self) -> None:
        """Learn the run's mount namespace, then let its agent start (the gate)."""
        if self.gate is None:
            return
        deadline = time.monotonic() + GATE_TIMEOUT_S
        learned = self.problem is not None  # nothing to learn for: let it start
        # Woken by the kernel's fork record (the init's unshare forks the namespace's
        # first process), else every millisecond.
        waiter = select.poll()
        if self._forks is not None:
            waiter.register(self._forks.fileno(), select.POLLIN)
        while not learned and time.monotonic() < deadline and not self._stop.is_set():
            self._refresh()
            if self.run is not None and self.run.name in self._namespaces.values():
                # The run's first processes, before its agent starts.
                self._adopt()
                learned = True
                break
            if self._forks is not None:
                self._forks.drain()
            waiter.poll(1)
        if not learned and not self._stop.is_set():
            self.problem = "the run's mount namespace could not be learned before it started"
        self._release_gate()

    def _loop(self) -> None:
        try:
            self._admit()
        except Exception as exc:
            log.exception("fanotify gate failed")
            self.problem = f"the fanotify audit could not start the run ({exc})"
        finally:
            self._release_gate()
        poller = select.poll()
        poller.register(self._fd, select.POLLIN)
        poller.register(self._wake[0], select.POLLIN)
        if self._attrib is not None:
            poller.register(self._attrib.fd, select.POLLIN)
        if self._forks is not None:
            poller.register(self._forks.fileno(), select.POLLIN)
        try:
            while True:
                if poller.poll(_POLL_MS) and COALESCE_S > 0:
                    # A process starting opens a hundred files in a few milliseconds:
                    # handled in one pass rather than one per wake-up, since each pass
                    # costs a cgroup read and a namespace lookup per live process (the
                    # observer's time is taken from the agent's on a busy machine).
                    # The stop ends the wait at once.
                    self._stop.wait(COALESCE_S)
                # A namespace a run made since (a sandbox's) is learned while it lives.
                members = self._refresh()
                # The forks first (while parents live), then the open events: they
                # name the pids of the metadata events.
                self._adopt(members)
                drained = self._drain()
                self._drain_attrib(adopt=False)
                if self._stop.is_set() and drained:
                    self._adopt()
                    self._drain()
                    self._drain_attrib(adopt=False)
                    return
        except Exception as exc:  # a reader fault must make the audit incomplete
            log.exception("fanotify reader failed")
            self.problem = f"the fanotify reader failed ({type(exc).__name__}: {exc})"

    def _adopt(self, members: list[int] | None = None) -> None:
        """Read the forks reported so far, then adopt the run's cgroup members (its
        first process among them: harness.fanotify_procs); ``members``: as read just
        before (each member's fork was reported before it joined, so the drain that
        follows the read has it)."""
        if self._forks is None:
            return
        self._forks.drain()
        if self.run is not None:
            with contextlib.suppress(ValueError, OSError):
                self._forks.adopt(_members(self.run) if members is None else members)

    def _learn_pid(self, fd: int, pid: int) -> None:
        """Remember which run a pid's opens went through (by unique mount id), once per
        pid: a metadata event carries no descriptor, and its process (a ``chmod``
        command) is often gone before the event is read; its exec and library opens,
        queued before it, named its run already."""
        if pid in self._pid_runs or len(self._pid_runs) >= MAX_KNOWN_PIDS:
            return
        mount = _unique_mount(fd)
        self._pid_runs[pid] = self._mounts.get(mount) if mount is not None else None

    def _drain_attrib(self, *, adopt: bool = True) -> None:
        """Metadata changes of the run's processes outside its own trees: findings
        (``adopt``: read the fork record first; the loop has just done so)."""
        if self._attrib is None:
            return
        if adopt:
            self._adopt()
        for pid, info in self._attrib.events():
            if pid == self._me:
                continue
            how = self._metadata_owner(pid)
            if how is None:
                # Another process's: never charged to the run.
                self.metadata_dropped += 1
                continue
            path = self._attrib.path(info)
            if how == "unknown":
                # Could be the run's: recorded for review (a weak finding), never
                # dropped and never gating on its own. Inside the run's own trees it is
                # no reach either way.
                if path is not None and not outside_own_trees(self.protected, path):
                    continue
                self.metadata_unattributed += 1
                how = "unattributed"
            if path is None:
                self._attrib.unnamed += 1
                continue
            if not outside_own_trees(self.protected, path):
                continue
            self.total_protected += 1
            self.attributed[how] = self.attributed.get(how, 0) + 1
            key = (path, "changed", "ok")
            if key not in self.found and len(self.found) < MAX_RECORDED_ACCESSES * 4:
                self.found[key] = metadata_change(_shown(path), "FAN_ATTRIB", how)
        if self._attrib.overflowed:
            self.problem = "the fanotify metadata queue overflowed: events were lost"

    def _metadata_owner(self, pid: int) -> str | None:
        """How a metadata event of ``pid`` is the run's ("fork", "cgroup", "mount"),
        "unknown" when it could be and nothing can say, None when it is another's.

        The kernel's fork record decides first (a pid once the run's and reused since
        is "unknown"); then, for a process alive, its cgroup; for one gone, a run its
        opens named; else the record: a pid it never saw forked from the run is
        another's, unless the record is lossy or missing (then "unknown")."""
        if self.run is None:
            return None
        # Without the record a live process's cgroup is the word; a gone one is unknown.
        whose = "unknown" if self._forks is not None else "alive-decides"
        if self._forks is not None:
            whose = self._forks.whose(pid)
            if whose != "ours":
                # Its fork was queued before it ran: read what has come in since.
                self._forks.drain()
                whose = self._forks.whose(pid)
            if whose == "ours":
                return "fork"
        member = self._pid_member.get(pid)
        if member is None:
            member = self.run.holds(pid)
            if member is not None and len(self._pid_member) < MAX_KNOWN_PIDS:
                self._pid_member[pid] = member
        if member is True:
            return "cgroup"
        if member is None and self._pid_runs.get(pid) == self.run.name:
            return "mount"
        if member is False and whose in ("foreign", "pending", "alive-decides"):
            return None
        if member is None and whose in ("foreign", "pending"):
            return None
        return "unknown"

    def _drain(self) -> bool:
        """Read and handle events until the queue is empty; True once it is."""
        while True:
            try:
                data = os.read(self._fd, _READ_BYTES)
            except BlockingIOError:
                return True
            except InterruptedError:
                continue
            if not data:
                return True
            offset = 0
            while offset + _METADATA.size <= len(data):
                length, version, _, _, mask, fd, pid = _METADATA.unpack_from(data, offset)
                if length < _METADATA.size:
                    self.problem = "fanotify returned a malformed event"
                    return True
                offset += length
                if version != FANOTIFY_METADATA_VERSION:
                    self.problem = f"fanotify event version {version} is not understood"
                if mask & FAN_Q_OVERFLOW:
                    self.problem = "the fanotify queue overflowed: events were lost"
                if fd == FAN_NOFD or fd < 0:
                    continue
                try:
                    self.events += 1
                    if pid != self._me:
                        self._learn_pid(fd, pid)
                        self._event(mask, fd, pid)
                finally:
                    os.close(fd)

    def _event(self, mask: int, fd: int, pid: int) -> None:
        try:
            info = os.fstat(fd)
            path = os.readlink(str(fd), dir_fd=self._proc_fd)
        except OSError:
            return
        if not self._accesses(mask, fd, pid, info, path) and self._ignores is not None:
            # Nothing protected: the kernel may drop this inode's later opens (what
            # makes that safe, a hard link of a protected file above all, is decided
            # in harness.fanotify_ignore.ignorable).
            self._ignores.offer(fd, info, path)

    def _accesses(self, mask: int, fd: int, pid: int, info: os.stat_result, path: str) -> bool:
        """Record the protected accesses of one event; True when the file is (or may
        be) protected, whoever opened it."""
        if path.endswith(" (deleted)"):
            path = path[: -len(" (deleted)")]
        protected = False
        accesses: list[tuple[str, bool, bool]] = []
        if mask & FAN_OPEN_EXEC:
            accesses.append(("executed", False, True))
        elif mask & FAN_OPEN:
            # fanotify cannot tell a write-only open from a read: an open counts as one.
            kind = "listed" if stat.S_ISDIR(info.st_mode) else "opened"
            accesses.append((kind, False, True))
        if mask & FAN_CLOSE_WRITE:
            accesses.append(("changed", True, False))
        for operation, writing, reading in accesses:
            root = self.protected.by_identity(
                info, path, writing=writing, operation=operation, reading=reading
            )
            if root is None and path.startswith("/"):
                root = self.protected.match(
                    path, writing=writing, operation=operation, reading=reading
                )
            if root is None:
                continue
            protected = True
            if operation in ("listed",) and path in self.protected.runtime_dirs:
                continue
            how = self._attribute(fd, pid)
            if how is None:
                return protected
            if how == "unattributed" and (root.prefix is not None or root.writes_only):
                # Other runs' scratch, the harness's records and the shared interpreter
                # are written by the harness's own short-lived helpers (check sandboxes)
                # and by other users' sandboxes too: only material is recorded on an
                # exited process's word alone (and then for review: a weak finding).
                self.attributed["unattributed-dropped"] = (
                    self.attributed.get("unattributed-dropped", 0) + 1
                )
                return protected
            self.attributed[how] = self.attributed.get(how, 0) + 1
            self.total_protected += 1
            key = (path, operation, "ok")
            if key not in self.found and len(self.found) < MAX_RECORDED_ACCESSES * 4:
                self.found[key] = {
                    "path": _shown(path),
                    "operation": operation,
                    "result": "ok",
                    "category": root.category,
                    "material": root.material,
                    "root": _shown(root.path),
                    "attributed_by": how,
                }
        return protected

    def _attribute(self, fd: int, pid: int) -> str | None:
        """How this event is the run's ("mount", "cgroup", "unattributed"), or None
        when it is another process's."""
        mount = _unique_mount(fd)
        mine = self.run.name if self.run is not None else None
        if mount is not None and mount not in self._host_mounts:
            owner = self._mounts.get(mount)
            if owner is None:
                # A namespace the harness registered before anything ran in it (a
                # sandbox; a grading box, owned by no run): named even once it is gone.
                known, made_for = harness_namespaces.lookup(mount)
                if known:
                    return "mount" if made_for is not None and made_for == mine else None
            if owner is None and mount not in self._foreign:
                self._refresh()
                owner = self._mounts.get(mount) or self._relist(mount)
            if owner is not None:
                return "mount" if owner == mine else None
        member = self.run.holds(pid) if self.run is not None else None
        if member is not None:
            return "cgroup" if member else None
        if self.own_namespace and mount is not None and mount in self._host_mounts:
            # The run's processes live in their own mount namespace: a process that
            # used the harness's mounts and is gone was not the run's.
            return None
        return "unattributed"

    def _relist(self, mount: int) -> str | None:
        """The run whose held namespace holds ``mount`` now (a mount made there after
        the namespace was learned: a sandbox's binds); None, remembered, when none does
        (a unique id is made once, in one namespace: another process's)."""
        for namespace, fd in self._held.items():
            ids = namespace_mounts(fd)
            if ids is None:
                continue
            for found in ids - self._host_mounts:
                self._mounts[found] = self._namespaces[namespace]
        owner = self._mounts.get(mount)
        if owner is None and len(self._foreign) < MAX_FOREIGN_MOUNTS:
            self._foreign.add(mount)
        return owner

    def _refresh(self) -> list[int] | None:
        """Learn the mounts of every live run's namespaces (this process's runs), each
        namespace held open until :meth:`finish` so its mount ids stay its own; this
        run's members as read (None: not read), for :meth:`_adopt`."""
        own: list[int] | None = None
        for run in cgroups.live_runs():
            try:
                pids = _members(run)
            except ValueError:
                continue
            if self.run is not None and run.name == self.run.name:
                own = pids
            for pid in pids:
                try:
                    namespace = os.readlink(f"/proc/{pid}/ns/mnt")
                except OSError:
                    continue
                # Known already: a held namespace's name is never another's.
                if namespace == self._host_namespace or namespace in self._held:
                    continue
                if len(self._held) >= MAX_HELD_NAMESPACES:
                    self.problem = self.problem or (
                        f"the runs made more than {MAX_HELD_NAMESPACES} mount namespaces: "
                        "the mounts of the rest could not be told apart"
                    )
                    return None
                learned = hold_namespace(pid)
                if learned is None:
                    continue
                fd, found, ids = learned
                if found in self._held or found == self._host_namespace:
                    os.close(fd)
                    continue
                self._held[found] = fd
                self._namespaces[found] = run.name
                for mount in ids:
                    if mount not in self._host_mounts:
                        self._mounts[mount] = run.name
        return own


def _members(run: cgroups.RunCgroup) -> list[int]:
    """The run cgroup's live members (its ``cgroup.procs``; empty once it is gone),
    read with plain ``os`` calls: the reader asks on every pass."""
    try:
        fd = os.open(os.path.join(run.directory, "cgroup.procs"), os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return []
    try:
        chunks = []
        while chunk := os.read(fd, 1 << 16):
            chunks.append(chunk)
    except OSError:
        return []
    finally:
        os.close(fd)
    return [int(word) for word in b"".join(chunks).split()]


def _shown(path: str) -> str:
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def observe(
    protected: ProtectedSet,
    run: cgroups.RunCgroup | None,
    *,
    own_namespace: bool,
    gate: Path | None = None,
) -> FanotifyObserver:
    """A started observer for one run (``gate``: see :class:`FanotifyObserver`)."""
    observer = FanotifyObserver(protected, run, own_namespace=own_namespace, gate=gate)
    observer.start()
    return observer
