"""Opening a name beneath a directory with the kernel deciding how it resolves: openat2(2).

The harness reads files the agent left (deliverables, the run's home) by names the task
gives. A name is only safe to read if the kernel, not a user-space model of it, keeps
its resolution inside the root: ``RESOLVE_BENEATH`` makes the kernel refuse (``EXDEV``)
any resolution that leaves the directory (an absolute link, ``..`` past the root, a
magic link of /proc), and ``RESOLVE_NO_SYMLINKS`` refuses (``ELOOP``) any symlink on the
way, in every component, not just the last.

Python has no binding for openat2 (3.11), so this is the one syscall through ctypes; its
number, 437, is the same on every architecture (it was added after the tables were
unified). On a kernel without it (before 5.6) the walk is done one component at a time
with ``O_NOFOLLOW``, which refuses every link (fail closed: a link that would have stayed
inside reads as a link).
"""

from __future__ import annotations

import ctypes
import errno
import os
from pathlib import Path

SYS_OPENAT2 = 437
RESOLVE_NO_MAGICLINKS = 0x02
RESOLVE_NO_SYMLINKS = 0x04
RESOLVE_BENEATH = 0x08
READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class _OpenHow(ctypes.Structure):
    _fields_ = [
        ("flags", ctypes.c_uint64),
        ("mode", ctypes.c_uint64),
        ("resolve", ctypes.c_uint64),
    ]


_libc = ctypes.CDLL(None, use_errno=True)
_syscall = _libc.syscall
_syscall.restype = ctypes.c_long
_have_openat2: bool | None = None


def open_beneath(root: Path | int, relative: str, *, links: bool, flags: int = READ_FLAGS) -> int:
    """A descriptor for ``relative`` resolved by the kernel beneath ``root`` (a directory
    path or descriptor); ``links``: symlinks that stay beneath are followed (else any
    symlink on the way is refused). Raises ``OSError``: ``EXDEV`` when the resolution
    would leave the root, ``ELOOP`` for a refused link, ``ENOENT`` and the rest as usual."""
    global _have_openat2
    root_fd = (
        root if isinstance(root, int) else os.open(root, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    )
    try:
        if _have_openat2 is not False:
            how = _OpenHow(
                flags,
                0,
                RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS | (0 if links else RESOLVE_NO_SYMLINKS),
            )
            fd = _syscall(
                ctypes.c_long(SYS_OPENAT2),
                ctypes.c_int(root_fd),
                ctypes.c_char_p(os.fsencode(relative)),
                ctypes.byref(how),
                ctypes.c_size_t(ctypes.sizeof(how)),
            )
            if fd >= 0:
                _have_openat2 = True
                return int(fd)
            err = ctypes.get_errno()
            if err != errno.ENOSYS:
                raise OSError(err, os.strerror(err), relative)
            _have_openat2 = False
        return _walk_no_links(root_fd, relative, flags)
    finally:
        if not isinstance(root, int):
            os.close(root_fd)


def _walk_no_links(root_fd: int, relative: str, flags: int) -> int:
    """The fallback: one component at a time, no ``..``, no link anywhere."""
    parts = [p for p in relative.split("/") if p not in ("", ".")]
    if not parts or ".." in parts or relative.startswith("/"):
        raise OSError(errno.EXDEV, os.strerror(errno.EXDEV), relative)
    fd = os.dup(root_fd)
    try:
        for part in parts[:-1]:
            step = os.open(
                part, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC, dir_fd=fd
            )
            os.close(fd)
            fd = step
        return os.open(parts[-1], flags | os.O_NOFOLLOW, dir_fd=fd)
    finally:
        os.close(fd)
