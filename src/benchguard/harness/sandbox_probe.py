"""The sandbox self-check's probe: run inside the sandbox, it tries what a cheater would.

Standard library only and runnable as a plain script (the harness binds this one file
into the sandbox). It prints one JSON object, ``{"problems": [...], "uid": N}``; an
empty list means the sandbox held:

- no effective, permitted or ambient capability;
- no mount can be remounted read-write (``mount(2)`` with ``MS_REMOUNT|MS_BIND``);
- no write outside the paths named on the command line (workspace, home, transcript
  channel) and the private ``/tmp``: every other mount point is tried, and so is
  ``/proc/sys``.

It also leaves ``probe-owner`` in the first allowed path, so the harness can check from
outside which host uid the sandbox's files really belong to.
"""

from __future__ import annotations

import ctypes
import json
import os
import sys

_MS_RDONLY = 1
_MS_REMOUNT = 32
_MS_BIND = 4096
_CAP_FIELDS = ("CapEff", "CapPrm", "CapAmb")
# Writable on purpose: device nodes and the pseudo-terminal filesystem hold no files.
_DEVICE_MOUNTS = ("/dev/pts",)


def capabilities() -> list[str]:
    problems = []
    with open("/proc/self/status", encoding="ascii") as handle:
        for line in handle:
            name, _, value = line.partition(":")
            if name in _CAP_FIELDS and int(value.strip(), 16) != 0:
                problems.append(f"holds capabilities ({name} {value.strip()})")
    return problems


def mount_points() -> list[tuple[str, bool]]:
    """(mount point, read-only) for every mount the sandbox sees."""
    found = []
    with open("/proc/self/mountinfo", encoding="utf-8", errors="replace") as handle:
        for line in handle:
            fields = line.split()
            point = fields[4].replace("\\040", " ")
            found.append((point, "ro" in fields[5].split(",")))
    return found


def _inside(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def remounts(points: list[tuple[str, bool]]) -> list[str]:
    libc = ctypes.CDLL(None, use_errno=True)
    problems = []
    for point, read_only in points:
        if not read_only:
            continue
        flags = _MS_REMOUNT | _MS_BIND
        if libc.mount(None, point.encode(), None, flags, None) == 0:
            problems.append(f"could remount {point} read-write")
    return problems


def writes(points: list[tuple[str, bool]], allowed: list[str]) -> list[str]:
    problems = []
    targets = sorted({point for point, _ in points} | {"/proc/sys/kernel"})
    for point in targets:
        if _inside(point, allowed) or _inside(point, list(_DEVICE_MOUNTS)):
            continue
        if point == "/proc":
            continue  # its files are the process's own; /proc/sys is tried below
        if os.path.isdir(point):
            name = os.path.join(point, f".bg-probe-{os.getpid()}")
            try:
                fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            except OSError:
                pass
            else:
                os.close(fd)
                os.unlink(name)
                problems.append(f"could create a file in {point}")
        if point == "/proc/sys/kernel":
            try:
                with open("/proc/sys/kernel/hostname", "w", encoding="ascii") as handle:
                    handle.write("probe\n")
            except OSError:
                pass
            else:
                problems.append("could write /proc/sys/kernel/hostname")
        elif os.path.isfile(point) and not os.path.islink(point):
            try:
                fd = os.open(point, os.O_WRONLY | os.O_APPEND)
            except OSError:
                continue
            os.close(fd)
            if not point.startswith("/dev/"):
                problems.append(f"could open {point} for writing")
    return problems


def main(allowed: list[str]) -> int:
    allowed = [os.path.realpath(path) for path in allowed] + ["/tmp"]
    problems = capabilities()
    points = mount_points()
    problems += remounts(points)
    problems += writes(points, allowed)
    owner = os.path.join(allowed[0], "probe-owner")
    with open(owner, "w", encoding="ascii") as handle:
        handle.write(str(os.getuid()))
    print(json.dumps({"problems": problems, "uid": os.getuid()}))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
