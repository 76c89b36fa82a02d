"""Metadata changes as fanotify reports them (root): ``FAN_ATTRIB`` on whole filesystems.

Landlock (ABI 7) mediates no metadata: ``chmod``, ``chown``, ``utimes`` and extended
attributes of any file an agent can name succeed when its uid owns the file, and an
unsandboxed root agent (uid 0, no capability) owns every root-owned file. The open
observer (:mod:`harness.fanotify`) sees none of them: no file is opened. ``FAN_ATTRIB``
needs a group reporting file identifiers (``FAN_REPORT_FID``), so this is a second
group beside it: each event names the inode by file handle, which is opened
(``open_by_handle_at``, ``O_PATH``: nothing is read) on the marked filesystem it came
from (matched by ``fsid``) to ask the kernel its path.

A handle of a file that is not a directory may open as a *disconnected* dentry once its
name has left the dentry cache (memory pressure, a busy machine): the kernel then calls
its path ``/``, and an honest run's ``chmod`` of its own file read as a change of ``/``.
So the group also reports the parent directory's handle and the entry's name
(``FAN_REPORT_DFID_NAME``; a directory's handle always reconnects), and a path is
believed only when it names the very inode the event did (``lstat`` against ``fstat``
of the opened handle). Neither spelling naming it: the change is unnamed.

Which run: an attribute event carries no descriptor, so no mount names it; the event's
pid is asked for its cgroup while it lives. A change by a process that has exited by
the time its event is read (a ``chmod`` command run by a shell, when the observer is
behind) cannot be attributed and is dropped (counted), never charged to a run.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import struct
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field

from benchguard.harness.fanotify_libc import fanotify_libc

FAN_CLASS_NOTIF = 0x0
FAN_CLOEXEC = 0x1
FAN_NONBLOCK = 0x2
FAN_UNLIMITED_QUEUE = 0x10
FAN_REPORT_FID = 0x200
FAN_REPORT_DIR_FID = 0x400
FAN_REPORT_NAME = 0x800
FAN_MARK_ADD = 0x1
FAN_MARK_FILESYSTEM = 0x100
FAN_ATTRIB = 0x4
FAN_Q_OVERFLOW = 0x4000
FAN_ONDIR = 0x40000000
FAN_EVENT_INFO_TYPE_FID = 1
FAN_EVENT_INFO_TYPE_DFID_NAME = 2
AT_FDCWD = -100
SYS_OPEN_BY_HANDLE_AT = 304
_METADATA = struct.Struct("=IBBHQii")
_INFO_HEADER = struct.Struct("=BBH")
_FSID = struct.Struct("=ii")
_HANDLE_HEAD = struct.Struct("=Ii")
# struct statfs (x86_64): f_fsid (two ints) after seven 8-byte fields.
_STATFS_SIZE = 120
_STATFS_FSID_OFFSET = 56
_READ_BYTES = 1 << 16


def _fsid(fd: int) -> tuple[int, int] | None:
    buffer = ctypes.create_string_buffer(_STATFS_SIZE)
    if fanotify_libc().fstatfs(fd, buffer) != 0:
        return None
    pair = _FSID.unpack_from(buffer, _STATFS_FSID_OFFSET)
    return int(pair[0]), int(pair[1])


@dataclass
class AttribWatch:
    """A ``FAN_ATTRIB`` group on the filesystems of ``paths``; :meth:`events` yields
    ``(pid, info)`` per change (:meth:`path` names its file)."""

    fd: int = -1
    marked: list[str] = field(default_factory=list)
    # fsid -> an open descriptor on that filesystem (open_by_handle_at's mount_fd).
    _mounts: dict[tuple[int, int], int] = field(default_factory=dict)
    _proc_fd: int = -1
    unnamed: int = 0
    overflowed: bool = False

    @classmethod
    def open(cls, paths: Sequence[str]) -> AttribWatch:
        """Raises OSError when the group or a mark cannot be made."""
        libc = fanotify_libc()
        flags = FAN_CLASS_NOTIF | FAN_CLOEXEC | FAN_NONBLOCK | FAN_UNLIMITED_QUEUE
        flags |= FAN_REPORT_FID | FAN_REPORT_DIR_FID | FAN_REPORT_NAME
        fd = int(libc.fanotify_init(flags, os.O_RDONLY | os.O_CLOEXEC))
        if fd < 0:
            error = ctypes.get_errno()
            raise OSError(error, f"fanotify_init(FAN_REPORT_FID): {os.strerror(error)}")
        watch = cls(fd)
        try:
            watch._proc_fd = os.open("/proc/self/fd", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
            for path in paths:
                held = os.open(path, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
                fsid = _fsid(held)
                if fsid is None or fsid in watch._mounts:
                    os.close(held)
                    continue
                done = libc.fanotify_mark(
                    fd,
                    FAN_MARK_ADD | FAN_MARK_FILESYSTEM,
                    FAN_ATTRIB | FAN_ONDIR,
                    AT_FDCWD,
                    os.fsencode(path),
                )
                if done != 0:
                    os.close(held)
                    error = ctypes.get_errno()
                    raise OSError(error, f"fanotify_mark FAN_ATTRIB {path}: {os.strerror(error)}")
                watch._mounts[fsid] = held
                watch.marked.append(path)
        except OSError:
            watch.close()
            raise
        return watch

    def close(self, group: Callable[[int], None] = os.close) -> None:
        """Close every descriptor; the group's own through ``group`` (closing a group
        with marks waits in the kernel: the caller may do it in the background)."""
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                group(self.fd)
        for fd in (self._proc_fd, *self._mounts.values()):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self.fd, self._proc_fd = -1, -1
        self._mounts.clear()

    def events(self) -> Iterator[tuple[int, bytes]]:
        """Everything queued now, as ``(pid, info)``: :meth:`path` names the file (asked
        only for the run's own processes: a handle opened per event costs)."""
        while True:
            try:
                data = os.read(self.fd, _READ_BYTES)
            except BlockingIOError:
                return
            except InterruptedError:
                continue
            if not data:
                return
            offset = 0
            while offset + _METADATA.size <= len(data):
                length, _, _, meta_len, mask, _, pid = _METADATA.unpack_from(data, offset)
                if length < _METADATA.size:
                    self.overflowed = True
                    return
                if mask & FAN_Q_OVERFLOW:
                    self.overflowed = True
                info = data[offset + meta_len : offset + length]
                offset += length
                yield pid, info

    def path(self, info: bytes) -> str | None:
        """The kernel's path of the file an event's info records name, verified to be
        that inode (None: gone, not one of the marked filesystems, or no spelling the
        kernel gives names it)."""
        target: int | None = None
        parent: tuple[str, str] | None = None
        directory_record = b""
        offset = 0
        try:
            while offset + _INFO_HEADER.size <= len(info):
                kind, _, length = _INFO_HEADER.unpack_from(info, offset)
                if length < _INFO_HEADER.size:
                    break
                record = info[offset : offset + length]
                offset += length
                if kind == FAN_EVENT_INFO_TYPE_FID and target is None:
                    target = self._open(record)
                elif kind == FAN_EVENT_INFO_TYPE_DFID_NAME and parent is None:
                    parent = self._entry(record)
                    directory_record = record
            if target is None and parent is not None and parent[1] == ".":
                # A directory's own change: one record, the directory and the name ".".
                target = self._open(directory_record)
            if target is None:
                return None
            try:
                want = os.fstat(target)
                shown = os.readlink(str(target), dir_fd=self._proc_fd)
            except OSError:
                return None
            candidates = []
            if parent is not None:
                directory, name = parent
                candidates.append(directory if name == "." else os.path.join(directory, name))
            candidates.append(shown)
            for candidate in candidates:
                if candidate.endswith(" (deleted)") or not candidate.startswith("/"):
                    continue
                try:
                    seen = os.stat(candidate, follow_symlinks=False)
                except OSError:
                    continue
                if (seen.st_dev, seen.st_ino) == (want.st_dev, want.st_ino):
                    return candidate
            return None
        finally:
            if target is not None:
                os.close(target)

    def _open(self, record: bytes) -> int | None:
        """An ``O_PATH`` descriptor of the inode an info record's handle names."""
        head = _INFO_HEADER.size + _FSID.size
        if len(record) < head + _HANDLE_HEAD.size:
            return None
        fsid = _FSID.unpack_from(record, _INFO_HEADER.size)
        mount = self._mounts.get((int(fsid[0]), int(fsid[1])))
        if mount is None:
            return None
        size, _ = _HANDLE_HEAD.unpack_from(record, head)
        handle = record[head : head + _HANDLE_HEAD.size + size]
        if len(handle) < _HANDLE_HEAD.size + size:
            return None
        buffer = ctypes.create_string_buffer(handle, len(handle))
        fd = int(
            fanotify_libc().syscall(
                ctypes.c_long(SYS_OPEN_BY_HANDLE_AT),
                ctypes.c_int(mount),
                buffer,
                ctypes.c_int(os.O_PATH | os.O_CLOEXEC),
            )
        )
        return fd if fd >= 0 else None

    def _entry(self, record: bytes) -> tuple[str, str] | None:
        """(the parent directory's path, the entry's name) of a DFID_NAME record."""
        head = _INFO_HEADER.size + _FSID.size
        if len(record) < head + _HANDLE_HEAD.size:
            return None
        size, _ = _HANDLE_HEAD.unpack_from(record, head)
        raw_name = record[head + _HANDLE_HEAD.size + size :].split(b"\0", 1)[0]
        fd = self._open(record)
        if fd is None or not raw_name:
            if fd is not None:
                os.close(fd)
            return None
        try:
            directory = os.readlink(str(fd), dir_fd=self._proc_fd)
        except OSError:
            return None
        finally:
            os.close(fd)
        return directory, os.fsdecode(raw_name)
