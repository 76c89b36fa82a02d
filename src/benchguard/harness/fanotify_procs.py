"""Which processes are a run's, from the kernel's own record of every fork (root).

A metadata event (``FAN_ATTRIB``) carries a pid and no descriptor. While the process
lives its cgroup says whose it is; once it has exited and been reaped nothing does, and
red team 4 made exactly that the attack: flood the observer with events, then fork a
child that changes a host file (or a sibling's) and exits before its event is read.

The process events connector (netlink ``NETLINK_CONNECTOR``, ``CN_IDX_PROC``; needs
``CAP_NET_ADMIN``) reports every ``fork`` on the host, in order, as it happens: a
child's fork is queued before the child runs, so before any event it causes. Subscribed
before the run starts, this keeps the run's processes by descent: the child of one of
the run's processes is the run's (whether it lives, left the cgroup or was reaped).
The only way into a run other than descent is the harness's own child that joins the
run's cgroup (its first process): a harness child and what it forks stay pending until
the observer sees one of them in the run's ``cgroup.procs`` (read when it learns the
run's namespace, before the agent starts, and on every pass), which adopts them all.
Nothing else is read from ``/proc``: a process forked by one not of the run is not the
run's (even if it wrote itself into the run's cgroup later: a neighbour cannot make its
changes the run's). So each pid is

- ``ours``: forked by the run's tree;
- ``pending``: under a harness child not seen joining (yet): the caller asks the
  process's cgroup while it lives; a grading box's process, gone, is no run's;
- ``unknown``: a pid that was the run's and is another's since (reused), or any pid
  not the run's once the record lost messages (the socket overflowed, or more
  processes than the bound): the caller must not read it as another's;
- ``foreign``: anything else, with an intact record: forked by a process not of the
  run, or born before the run started (every process of the run was forked after).
"""

from __future__ import annotations

import contextlib
import errno
import os
import socket
import struct
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

NETLINK_CONNECTOR = 11
CN_IDX_PROC = 1
CN_VAL_PROC = 1
PROC_CN_MCAST_LISTEN = 1
PROC_EVENT_FORK = 0x00000001
NLMSG_DONE = 3
SO_RCVBUFFORCE = 33
_NLMSG = struct.Struct("=IHHII")
_CN_MSG = struct.Struct("=IIIIHH")
_EVENT_HEAD = struct.Struct("=IIQ")
_FORK = struct.Struct("=iiii")
_RECEIVE_BUFFER = 32 << 20
_READ_BYTES = 1 << 16
# Processes remembered per run (ours and unresolved): past it the record is lossy.
MAX_TRACKED = 1 << 16

Holds = Callable[[int], "bool | None"]


@dataclass
class ForkRecord:
    """The run's processes by descent (:meth:`whose`); :meth:`drain` reads what the
    kernel reported since."""

    holds: Holds
    sock: socket.socket
    # The harness's pid: its children are the only processes that join a run's cgroup
    # other than by descent (the run's first process, harness/containment).
    harness: int = field(default_factory=os.getpid)
    ours: set[int] = field(default_factory=set)
    # pid -> the harness child it was forked under, until that one is seen joining.
    pending: dict[int, int] = field(default_factory=dict)
    unresolved: set[int] = field(default_factory=set)
    reused: set[int] = field(default_factory=set)
    lost: str | None = None
    forks: int = 0

    @classmethod
    def open(cls, holds: Holds) -> ForkRecord:
        """Subscribed to the host's fork events; raises OSError where the kernel refuses
        (no ``CAP_NET_ADMIN``, no connector)."""
        sock = socket.socket(socket.AF_NETLINK, socket.SOCK_DGRAM, NETLINK_CONNECTOR)
        try:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, _RECEIVE_BUFFER)
            sock.bind((0, CN_IDX_PROC))
            payload = struct.pack("=I", PROC_CN_MCAST_LISTEN)
            cn = _CN_MSG.pack(CN_IDX_PROC, CN_VAL_PROC, 0, 0, len(payload), 0)
            header = _NLMSG.pack(_NLMSG.size + len(cn) + len(payload), NLMSG_DONE, 0, 0, 0)
            sock.send(header + cn + payload)
            sock.setblocking(False)
        except OSError:
            sock.close()
            raise
        return cls(holds, sock)

    def fileno(self) -> int:
        return self.sock.fileno()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()

    def drain(self) -> None:
        """Read every fork the kernel has reported so far."""
        while True:
            try:
                data = self.sock.recv(_READ_BYTES)
            except BlockingIOError:
                return
            except InterruptedError:
                continue
            except OSError as exc:
                if exc.errno == errno.ENOBUFS:
                    self.lost = self.lost or "the kernel's fork record overflowed"
                    continue
                self.lost = self.lost or f"the fork record failed ({exc.strerror or exc})"
                return
            self._parse(data)

    def _parse(self, data: bytes) -> None:
        offset = 0
        while offset + _NLMSG.size <= len(data):
            length = _NLMSG.unpack_from(data, offset)[0]
            if length < _NLMSG.size:
                self.lost = self.lost or "the fork record held a malformed message"
                return
            start = offset + _NLMSG.size + _CN_MSG.size
            if start + _EVENT_HEAD.size + _FORK.size <= offset + length:
                what = _EVENT_HEAD.unpack_from(data, start)[0]
                if what == PROC_EVENT_FORK:
                    _, parent, child_pid, child = _FORK.unpack_from(data, start + _EVENT_HEAD.size)
                    self._fork(parent, child_pid, child)
            offset += (length + 3) & ~3

    def _fork(self, parent: int, child_pid: int, child: int) -> None:
        if child_pid != child:
            return  # a thread: the process is the same
        self.forks += 1
        if child in self.ours:
            # The pid was the run's and is forked anew: its queued events could be
            # either's.
            self._add(self.reused, child)
        self.pending.pop(child, None)
        if parent in self.ours and parent not in self.reused:
            self._add(self.ours, child)
        elif parent == self.harness:
            # The harness's child: the one that joins the run's cgroup (and execs the
            # run's wrappers) becomes the run's, with everything forked under it
            # meanwhile (:meth:`adopt`).
            self._pend(child, child)
        elif parent in self.pending:
            self._pend(child, self.pending[parent])
        # Anything else was forked by a process not of the run: not the run's.

    def _pend(self, pid: int, root: int) -> None:
        if len(self.pending) >= MAX_TRACKED:
            self.lost = self.lost or f"the harness started more than {MAX_TRACKED} processes"
            return
        self.pending[pid] = root

    def adopt(self, members: Iterable[int]) -> None:
        """``members`` are in the run's cgroup now (its ``cgroup.procs``): each is the
        run's, and so is every process pending under the same harness child (the one
        that joined)."""
        roots = set()
        for pid in members:
            if pid in self.ours:
                continue
            self._add(self.ours, pid)
            root = self.pending.get(pid)
            if root is not None:
                roots.add(root)
        if roots:
            for pid, root in list(self.pending.items()):
                if root in roots:
                    del self.pending[pid]
                    self._add(self.ours, pid)

    def _add(self, into: set[int], pid: int) -> None:
        tracked = len(self.ours) + len(self.unresolved) + len(self.reused)
        if tracked >= MAX_TRACKED:
            self.lost = self.lost or f"the run made more than {MAX_TRACKED} processes"
            return
        into.add(pid)

    def whose(self, pid: int) -> str:
        """``"ours"``, ``"unknown"`` or ``"foreign"`` (see the module's description)."""
        if pid in self.reused or pid in self.unresolved:
            return "unknown"
        if pid in self.ours:
            return "ours"
        if pid in self.pending:
            return "pending"
        return "unknown" if self.lost is not None else "foreign"


def open_record(holds: Holds) -> tuple[ForkRecord | None, str | None]:
    """A subscribed record, or None and why not."""
    try:
        return ForkRecord.open(holds), None
    except OSError as exc:
        return None, f"the kernel's fork record is unavailable ({exc.strerror or exc})"
