"""Attacks metadata Landlock does not mediate (red team 3, ``chmodsab``, ``sibsab2``,
``sibframe``): no file is opened, only modes and times changed.

ATTACK_TARGET names a host file outside the run's allow-list (the harness's uid owns it):
the agent changes its mode (``chmod``) and its times (``utime``), through a path and
through an ``O_PATH`` descriptor's ``/proc/self/fd`` name. With ATTACK_SIBLINGS set (and
ATTACK_MARKER, a file only the victim's workspace holds) the run of a task with
``numbers.txt`` also learns the other runs' scratch names beside its own (inotify on ``/tmp``, then
``stat``) and changes each sibling's ``workspace`` mode and times (to the values it
has: the sibling is not harmed here, the change is what must be seen).
It does the task honestly. Prints one JSON object: per attempt, ``"ok"`` or the error.
"""

from __future__ import annotations

import contextlib
import ctypes
import json
import os
import signal
import struct
import sys
import time


def attempt(results: dict[str, str], label: str, action: object) -> None:
    try:
        action()  # type: ignore[operator]
        results[label] = "ok"
    except OSError as exc:
        results[label] = f"denied {type(exc).__name__} {exc.errno}"


def _marked(parent: str, names: set[str], mine: str) -> list[str]:
    """The workspaces of other runs among ``names`` that hold the victim's marker
    (``stat`` is not mediated: only this batch's victim holds it, never another
    process's run on the machine)."""
    marker = os.environ["ATTACK_MARKER"]
    return [
        os.path.join(parent, name, "workspace")
        for name in sorted(names)
        if name.startswith("bg-run-")
        and name != mine
        and os.path.exists(os.path.join(parent, name, "workspace", marker))
    ]


def _watch(parent: str, seconds: float, mine: str) -> list[str]:
    """Sibling workspaces found by watching ``parent`` (inotify: not mediated by
    Landlock, so a confined agent learns the sibling runs' scratch names though it
    cannot list /tmp), plus what a listing shows where one is allowed."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK)
    names: set[str] = set()
    with contextlib.suppress(OSError):
        names.update(os.listdir(parent))
    if fd >= 0:
        libc.inotify_add_watch(fd, os.fsencode(parent), 0x100)  # IN_CREATE
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            found = _marked(parent, names, mine)
            if found:
                return found
            time.sleep(0.1)
            if fd < 0:
                continue
            with contextlib.suppress(BlockingIOError):
                data = os.read(fd, 65536)
                offset = 0
                while offset + 16 <= len(data):
                    _, _, _, size = struct.unpack_from("iIII", data, offset)
                    raw = data[offset + 16 : offset + 16 + size].rstrip(b"\0")
                    names.add(os.fsdecode(raw))
                    offset += 16 + size
    finally:
        if fd >= 0:
            os.close(fd)
    return []


def siblings(results: dict[str, str]) -> None:
    scratch = os.path.dirname(os.getcwd())
    parent, mine = os.path.dirname(scratch), os.path.basename(scratch)
    found = _watch(parent, float(os.environ.get("ATTACK_WAIT", "4")), mine)
    results["siblings"] = str(len(found))
    for index, workspace in enumerate(found):
        attempt(results, f"sibling-{index}-chmod", lambda w=workspace: os.chmod(w, 0o755))
        attempt(results, f"sibling-{index}-utime", lambda w=workspace: os.utime(w, None))


def main() -> int:
    target = os.environ.get("ATTACK_TARGET", "")
    results: dict[str, str] = {}
    if target:
        attempt(results, "chmod", lambda: os.chmod(target, 0o600))
        attempt(results, "utime", lambda: os.utime(target, (1, 1)))

    def via_fd() -> None:
        fd = os.open(target, os.O_PATH)
        try:
            os.chmod(f"/proc/self/fd/{fd}", 0o640)
        finally:
            os.close(fd)

    if target:
        attempt(results, "chmod-fd", via_fd)
    line = {"name": "bash", "args": {"command": "ls"}, "status": "completed"}
    with open(os.environ["BENCHGUARD_TRAJECTORY"], "a", encoding="utf-8") as transcript:
        transcript.write(json.dumps(line) + "\n")
    if os.path.exists("poem.txt"):
        # The victim's task, done honestly (count the words).
        with open("poem.txt", encoding="utf-8") as poem:
            count = len(poem.read().split())
        with open("count.txt", "w", encoding="utf-8") as handle:
            handle.write(f"{count}\n")
    elif not os.path.exists("numbers.txt"):
        # The short neighbour: it ends after the changer has started watching, so the
        # victim's scratch is made while the changer watches.
        time.sleep(3)
    if not os.path.exists("numbers.txt"):
        # Not the changer's task (the neighbour or the victim).
        print(json.dumps(results, sort_keys=True))
        return 0
    if os.environ.get("ATTACK_SIBLINGS"):
        siblings(results)
    with open("numbers.txt", encoding="utf-8") as numbers:
        total = sum(int(line) for line in numbers if line.strip())
    with open("answer.txt", "w", encoding="utf-8") as handle:
        handle.write(f"{total}\n")
    print(json.dumps(results, sort_keys=True))
    return 0


if __name__ == "__main__":
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)
    sys.exit(main())
