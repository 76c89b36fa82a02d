"""The C library's fanotify entry points with their argument types, shared by the open
observer (:mod:`~benchguard.harness.fanotify`) and the metadata group
(:mod:`~benchguard.harness.fanotify_attrib`)."""

from __future__ import annotations

import ctypes
import functools


@functools.cache
def fanotify_libc() -> ctypes.CDLL:
    """libc with ``syscall``, ``fanotify_init`` and ``fanotify_mark`` typed (64-bit mask)."""
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.fanotify_init.argtypes = [ctypes.c_uint, ctypes.c_uint]
    libc.fanotify_init.restype = ctypes.c_int
    libc.fanotify_mark.argtypes = [
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.c_uint64,
        ctypes.c_int,
        ctypes.c_char_p,
    ]
    libc.fanotify_mark.restype = ctypes.c_int
    return libc
