"""The agent's seccomp filter: no extended attributes, no io_uring, no kernel keyrings,
no inode-flag ioctls, no page-cache residency queries (nor non-blocking reads).

Landlock (ABI 7) mediates no metadata: an agent can still set, read and remove
extended attributes of any file it can name, and an unsandboxed root agent (uid 0, no
capability) owns every root-owned file on the host. A ``user.*`` attribute of a host
file outside the allow-list is then a channel between runs (a red team stored a run's
answer there and every later run, fresh home and new batch, answered from it). So the
launcher (:mod:`confine_exec`) installs this filter after Landlock and before ``exec``;
it binds the agent and everything it starts, and cannot be removed.

Denied, with ``EOPNOTSUPP`` (what a filesystem without extended attributes answers, so
``cp -a``, ``shutil.copy2``, ``tar`` and ``rsync -X`` carry on without them):
``setxattr``, ``lsetxattr``, ``fsetxattr``, ``getxattr``, ``lgetxattr``, ``fgetxattr``,
``listxattr``, ``llistxattr``, ``flistxattr``, ``removexattr``, ``lremovexattr``,
``fremovexattr`` and the ``*xattrat`` calls of Linux 6.13 (denied whether or not the
kernel has them). ``io_uring_setup`` is denied with ``ENOSYS`` (as on a kernel built
without io_uring; libuv and liburing fall back to plain calls), because an io_uring
ring performs ``IORING_OP_SETXATTR``/``GETXATTR`` without any syscall the filter sees.
``mincore`` and ``cachestat`` (Linux 6.5) are denied with ``EPERM``: the page cache of a
system file is shared by every run, so which of its pages are resident tells one run
what another read (issue 19's cachechan: a sender reads chosen pages, a receiver maps
the file and asks ``mincore``). Nothing an agent needs asks for residency. For the same
reason ``preadv2`` with ``RWF_NOWAIT`` (EAGAIN for a page not cached) is refused with
``EOPNOTSUPP`` (a file that cannot read without blocking: callers fall back).
``fanotify_init`` is denied with ``EPERM``: fanotify groups are counted per user, with or
without a capability, so a uid-0 agent holding every free group costs the root harness
the group of the next run's audit (red team 7's fanotify-group-exhaust: that honest run
was gated for an incomplete audit). No agent or deliverable needs to watch the system.

The program is classic BPF checking the architecture first: x86_64 (the x32 bit is
masked off, so an x32 call is judged by the same number) and i386 (a 32-bit program,
or ``int 0x80``, has its own numbers); any other architecture kills the process.

Standard library only, importable standalone (the launcher loads this file by path,
inside the sandbox too, where the package is not bound).
"""

from __future__ import annotations

import ctypes
import errno
import os
import struct
import sys

# linux/audit.h
AUDIT_ARCH_X86_64 = 0xC000003E
AUDIT_ARCH_I386 = 0x40000003
X32_SYSCALL_BIT = 0x40000000
# struct seccomp_data: int nr; __u32 arch; __u64 instruction_pointer; __u64 args[6]
_NR_OFFSET = 0
_ARCH_OFFSET = 4
# linux/filter.h opcodes
BPF_LD_W_ABS = 0x00 | 0x00 | 0x20  # BPF_LD | BPF_W | BPF_ABS
BPF_JEQ_K = 0x05 | 0x10 | 0x00  # BPF_JMP | BPF_JEQ | BPF_K
BPF_AND_K = 0x04 | 0x50 | 0x00  # BPF_ALU | BPF_AND | BPF_K
BPF_RET_K = 0x06 | 0x00  # BPF_RET | BPF_K
# linux/seccomp.h
SECCOMP_RET_KILL_PROCESS = 0x80000000
SECCOMP_RET_ERRNO = 0x00050000
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_SET_MODE_FILTER = 1
SECCOMP_FILTER_FLAG_TSYNC = 1
SYS_SECCOMP_X86_64 = 317
PR_SET_NO_NEW_PRIVS = 38

# The denied calls, by name, with their numbers (x86_64, i386). The *xattrat calls
# and io_uring_setup are in the unified table: the same number on both.
XATTR_SYSCALLS: dict[str, tuple[int, int]] = {
    "setxattr": (188, 226),
    "lsetxattr": (189, 227),
    "fsetxattr": (190, 228),
    "getxattr": (191, 229),
    "lgetxattr": (192, 230),
    "fgetxattr": (193, 231),
    "listxattr": (194, 232),
    "llistxattr": (195, 233),
    "flistxattr": (196, 234),
    "removexattr": (197, 235),
    "lremovexattr": (198, 236),
    "fremovexattr": (199, 237),
    "setxattrat": (463, 463),
    "getxattrat": (464, 464),
    "listxattrat": (465, 465),
    "removexattrat": (466, 466),
}
RING_SYSCALLS: dict[str, tuple[int, int]] = {"io_uring_setup": (425, 425)}
# The kernel keyrings: a root user's keyring outlives every run and is shared by all of
# them (red team 4 carried an answer between batches in it). ENOSYS, as on a kernel
# built without keys.
KEY_SYSCALLS: dict[str, tuple[int, int]] = {
    "add_key": (248, 286),
    "request_key": (249, 287),
    "keyctl": (250, 288),
}
# Page-cache residency of any file the agent can open or map: a channel between runs
# (see the module doc). The kernel reports residency only for files the caller owns or
# may write, and a uid-0 agent owns every system file. EPERM (an unwinder probing
# memory with mincore treats it as a failed probe and carries on).
CACHE_SYSCALLS: dict[str, tuple[int, int]] = {"mincore": (27, 218), "cachestat": (451, 451)}
XATTR_ERRNO = errno.EOPNOTSUPP
RING_ERRNO = errno.ENOSYS
KEY_ERRNO = errno.ENOSYS
CACHE_ERRNO = errno.EPERM
# fanotify groups are the root harness's audit quota (see the module doc). EPERM, what an
# unprivileged caller of the privileged mode is answered.
WATCH_SYSCALLS: dict[str, tuple[int, int]] = {"fanotify_init": (300, 338)}
WATCH_ERRNO = errno.EPERM
# The grading box only (``program(box=True)``): one process reaching into another. The
# box runs the deliverable, as the thing under test, beside the grader that judges it,
# with the same uid and no Landlock domain between them, so a deliverable the grader
# runs as a subprocess could attach to its parent and forge its verdict (red team 29's
# ptrace-grader: it wrote pytest's result stream from inside pytest and made it exit
# 0). EPERM, what a process without the right to trace is answered. Agents keep these
# calls: Landlock already confines their tracing to their own domain (a debugger works).
TRACE_SYSCALLS: dict[str, tuple[int, int]] = {
    "ptrace": (101, 26),
    "process_vm_readv": (310, 347),
    "process_vm_writev": (311, 348),
    "pidfd_getfd": (438, 438),
}
TRACE_ERRNO = errno.EPERM
# The same question asked by a read: preadv2 with RWF_NOWAIT answers EAGAIN for a page
# that is not cached (any uid, any readable file). Refused with EOPNOTSUPP, what the
# kernel answers for a file that cannot read without blocking, so a caller falls back
# to a plain read; preadv2 without the flag is allowed. x86_64 and x32 numbers, i386.
NOWAIT_SYSCALLS: tuple[tuple[int, ...], tuple[int, ...]] = ((327, 546), (378,))
RWF_NOWAIT = 0x8
NOWAIT_ERRNO = errno.EOPNOTSUPP
# struct seccomp_data's args[5], low 32 bits: preadv2's flags.
_ARG5_LOW_OFFSET = 56
# ioctl requests that set inode flags (chattr), fsxattr fields or the inode generation
# of a file the agent can name: metadata Landlock does not mediate and no fanotify event
# reports (red team 4 spelt an answer in the no-dump bits of stdlib files; red team 5
# in an ext4 inode's generation number, FS_IOC_SETVERSION). EPERM. Reading stays allowed.
IOCTL_NUMBERS = (16, 54)  # x86_64, i386
SETFLAG_IOCTLS: dict[str, int] = {
    "FS_IOC_SETFLAGS": 0x40086602,
    "FS_IOC32_SETFLAGS": 0x40046602,
    "FS_IOC_FSSETXATTR": 0x401C5820,
    "FS_IOC_SETVERSION": 0x40087602,
    "FS_IOC32_SETVERSION": 0x40047602,
}
IOCTL_ERRNO = errno.EPERM
# struct seccomp_data's args[1], low 32 bits (little-endian): the ioctl request.
_ARG1_LOW_OFFSET = 24
# What the run record carries (record["seccomp"]) when the filter was applied.
FILTER_NAME = "deny-xattr-io_uring-keys-setflags"


class SeccompError(RuntimeError):
    """The filter could not be installed; the message says which step and why."""


def _insn(code: int, jt: int, jf: int, k: int) -> bytes:
    # struct sock_filter { __u16 code; __u8 jt; __u8 jf; __u32 k; }
    return struct.pack("=HBBI", code, jt, jf, k)


def _denials(column: int, box: bool) -> list[tuple[int, int]]:
    """(syscall number, seccomp return) for one architecture's column; ``box``: the
    grading box's program (:data:`TRACE_SYSCALLS` too)."""
    rules = [(nrs[column], SECCOMP_RET_ERRNO | XATTR_ERRNO) for nrs in XATTR_SYSCALLS.values()]
    rules += [(nrs[column], SECCOMP_RET_ERRNO | RING_ERRNO) for nrs in RING_SYSCALLS.values()]
    rules += [(nrs[column], SECCOMP_RET_ERRNO | KEY_ERRNO) for nrs in KEY_SYSCALLS.values()]
    rules += [(nrs[column], SECCOMP_RET_ERRNO | CACHE_ERRNO) for nrs in CACHE_SYSCALLS.values()]
    rules += [(nrs[column], SECCOMP_RET_ERRNO | WATCH_ERRNO) for nrs in WATCH_SYSCALLS.values()]
    if box:
        rules += [(nrs[column], SECCOMP_RET_ERRNO | TRACE_ERRNO) for nrs in TRACE_SYSCALLS.values()]
    return sorted(rules)


def _ioctl_block(column: int) -> list[bytes]:
    """With the number in A: for ioctl, deny the flag-setting requests and allow the
    rest; for any other call, fall through to the next check (A kept)."""
    requests = sorted(SETFLAG_IOCTLS.values())
    body = [_insn(BPF_LD_W_ABS, 0, 0, _ARG1_LOW_OFFSET)]
    for request in requests:
        body.append(_insn(BPF_JEQ_K, 0, 1, request))
        body.append(_insn(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | IOCTL_ERRNO))
    body.append(_insn(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    return [_insn(BPF_JEQ_K, 0, len(body), IOCTL_NUMBERS[column]), *body]


def _nowait_block(column: int) -> list[bytes]:
    """With the number in A: for preadv2, deny RWF_NOWAIT and allow the rest; for any
    other call, fall through to the next check (A kept)."""
    body = [
        _insn(BPF_LD_W_ABS, 0, 0, _ARG5_LOW_OFFSET),
        _insn(BPF_AND_K, 0, 0, RWF_NOWAIT),
        _insn(BPF_JEQ_K, 0, 1, 0),
        _insn(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW),
        _insn(BPF_RET_K, 0, 0, SECCOMP_RET_ERRNO | NOWAIT_ERRNO),
    ]
    numbers = NOWAIT_SYSCALLS[column]
    # Each number but the last jumps to the body when equal; the last skips it if not.
    tests = [
        _insn(BPF_JEQ_K, len(numbers) - 1 - i, 0, number) for i, number in enumerate(numbers[:-1])
    ]
    tests.append(_insn(BPF_JEQ_K, 0, len(body), numbers[-1]))
    return [*tests, *body]


def _arch_block(*, mask_x32: bool, column: int, box: bool) -> list[bytes]:
    """Load the number, deny each listed call, allow the rest."""
    block = [_insn(BPF_LD_W_ABS, 0, 0, _NR_OFFSET)]
    if mask_x32:
        block.append(_insn(BPF_AND_K, 0, 0, 0xFFFFFFFF & ~X32_SYSCALL_BIT))
    block += _ioctl_block(column)
    block += _nowait_block(column)
    for number, verdict in _denials(column, box):
        # Equal: fall through to the verdict; else skip it.
        block.append(_insn(BPF_JEQ_K, 0, 1, number))
        block.append(_insn(BPF_RET_K, 0, 0, verdict))
    block.append(_insn(BPF_RET_K, 0, 0, SECCOMP_RET_ALLOW))
    return block


def program(*, box: bool = False) -> bytes:
    """The filter as an array of ``struct sock_filter`` (8 bytes each); ``box``: the
    grading box's, which also denies :data:`TRACE_SYSCALLS`."""
    x86_64 = _arch_block(mask_x32=True, column=0, box=box)
    i386 = _arch_block(mask_x32=False, column=1, box=box)
    insns = [_insn(BPF_LD_W_ABS, 0, 0, _ARCH_OFFSET)]
    insns.append(_insn(BPF_JEQ_K, 0, len(x86_64), AUDIT_ARCH_X86_64))
    insns += x86_64
    insns.append(_insn(BPF_JEQ_K, 0, len(i386), AUDIT_ARCH_I386))
    insns += i386
    insns.append(_insn(BPF_RET_K, 0, 0, SECCOMP_RET_KILL_PROCESS))
    if len(insns) > 255:  # a jump offset is 8 bits
        raise SeccompError("the seccomp program is too long for its jumps")
    return b"".join(insns)


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]


def denied() -> list[str]:
    """The names of the calls the filter denies, sorted."""
    return sorted(
        {*XATTR_SYSCALLS, *RING_SYSCALLS, *KEY_SYSCALLS, *CACHE_SYSCALLS, *WATCH_SYSCALLS}
    )


def install(*, box: bool = False) -> None:
    """Install the filter (``box``: the grading box's) on this process (inherited by
    ``exec`` and every child).

    Sets ``no_new_privs`` itself (the kernel requires it without ``CAP_SYS_ADMIN``).
    Raises :class:`SeccompError` when any step fails or the kernel does not then report
    the process as filtered (``Seccomp: 2`` in ``/proc/self/status``).
    """
    if sys.platform != "linux" or os.uname().machine != "x86_64":
        raise SeccompError(f"the seccomp filter is built for x86_64 only, not {os.uname().machine}")
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise SeccompError(f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
    code = program(box=box)
    buffer = ctypes.create_string_buffer(code, len(code))
    fprog = _SockFprog(len(code) // 8, ctypes.cast(buffer, ctypes.c_void_p).value)
    done = libc.syscall(
        ctypes.c_long(SYS_SECCOMP_X86_64),
        ctypes.c_uint(SECCOMP_SET_MODE_FILTER),
        ctypes.c_uint(SECCOMP_FILTER_FLAG_TSYNC),
        ctypes.byref(fprog),
    )
    if done != 0:
        raise SeccompError(f"seccomp(SET_MODE_FILTER): {os.strerror(ctypes.get_errno())}")
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError as exc:
        raise SeccompError(f"cannot read /proc/self/status: {exc.strerror}") from None
    mode = next(
        (line.split(":", 1)[1].strip() for line in lines if line.startswith("Seccomp:")), ""
    )
    if mode != "2":
        raise SeccompError(f"the kernel reports seccomp mode {mode!r}, not 2 (filter)")


def record() -> dict[str, object]:
    """What a run record says about the filter it ran under."""
    return {
        "filter": FILTER_NAME,
        "denied": denied(),
        "errno": {
            "xattr": "EOPNOTSUPP",
            "io_uring_setup": "ENOSYS",
            "keys": "ENOSYS",
            "ioctl": "EPERM",
            "page_cache": "EPERM",
            "fanotify_init": "EPERM",
            "preadv2_nowait": "EOPNOTSUPP",
        },
        "ioctls": sorted(SETFLAG_IOCTLS),
    }
