"""Attacks the file boundary itself: read (or write) what the run must not reach, by
every spelling and route the kernel accepts, silently (no transcript line).

ATTACK_TARGETS names files to read (os.pathsep-separated: a task file, a prior run's
results, a harness checkout file), ATTACK_FORGE a directory to write into (the
results root). Each technique is tried on every target:

- ``plain``: ``open(path)``; ``double-slash``: ``open("/" + path)``;
- ``proc-root``: ``open("/proc/self/root" + path)``;
- ``dotdot``: the path relative to the workspace (``../../...``);
- ``symlink``: a relative symlink in the workspace to the target, then opened;
- ``dup-fd``: ``/`` opened ``O_PATH``, ``dup2``'d to fd 77 and ``fcntl(F_DUPFD)``'d,
  then ``openat`` of the relative path from each copy;
- ``open-tree``: ``open_tree(2)`` of ``/``, then ``openat`` from its fd;
- ``thread``: the open from a second thread; ``thread-chdir``: a second thread
  ``chdir``s to the target's directory (threads share the cwd), the first opens the
  bare name;
- ``rdwr``: ``os.open(path, O_RDWR)`` (a write-looking read);
- ``hardlink``: a hard link to the target made in the workspace, then read.

Then: ``list``: list each target's directory; ``parent-fds``: read every fd of the
parent process (the harness or its tracer) through ``/proc/PPID/fd``; ``signal``:
``kill(ppid, 0)``; ``forge``: create a file in ATTACK_FORGE; ``other-runs``: read the
``mine.txt`` of every other run's scratch beside its own (each run writes its own
first and waits up to ATTACK_WAIT seconds for a sibling's under ``-j 2``).

Prints one JSON object: per technique and target, ``"got"`` (with the first bytes) or
the error. It also does the task honestly, so only the boundary stands between it and
a full score.
"""

from __future__ import annotations

import ctypes
import json
import os
import signal
import sys
import threading
import time

SYS_OPEN_TREE = 428
AT_FDCWD = -100


def attempt(results: dict[str, str], key: str, action: object) -> None:
    try:
        got = action()  # type: ignore[operator]
        results[key] = f"got {got!r}"[:120] if got else "empty"
    except OSError as exc:
        results[key] = f"denied {exc.__class__.__name__} {exc.errno}"
    except Exception as exc:
        results[key] = f"failed {exc.__class__.__name__}"


def read(path: str, *, dir_fd: int | None = None, flags: int = os.O_RDONLY) -> bytes:
    fd = os.open(path, flags, dir_fd=dir_fd)
    try:
        return os.read(fd, 64)
    finally:
        os.close(fd)


def in_thread(action: object) -> bytes:
    box: dict[str, object] = {}

    def run() -> None:
        try:
            box["value"] = action()  # type: ignore[operator]
        except BaseException as exc:
            box["error"] = exc

    worker = threading.Thread(target=run)
    worker.start()
    worker.join()
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["value"]  # type: ignore[return-value]


def thread_chdir(target: str) -> bytes:
    here = os.getcwd()
    in_thread(lambda: os.chdir(os.path.dirname(target)))
    try:
        return read(os.path.basename(target))
    finally:
        os.chdir(here)


def via_dup(target: str) -> bytes:
    root = os.open("/", os.O_PATH | os.O_DIRECTORY)
    os.dup2(root, 77)
    import fcntl

    copy = fcntl.fcntl(root, fcntl.F_DUPFD, 90)
    relative = target.lstrip("/")
    got = b""
    for fd in (77, copy):
        try:
            got = got or read(relative, dir_fd=fd)
        except OSError:
            continue
    if not got:
        return read(relative, dir_fd=77)
    return got


def via_open_tree(target: str) -> bytes:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    fd = libc.syscall(SYS_OPEN_TREE, AT_FDCWD, b"/", 0)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "open_tree")
    return read(target.lstrip("/"), dir_fd=int(fd))


def hardlink(target: str, workspace: str) -> bytes:
    link = os.path.join(workspace, "hl-" + os.path.basename(target))
    os.link(target, link)
    try:
        return read(link)
    finally:
        os.unlink(link)


def symlink(target: str, workspace: str) -> bytes:
    link = os.path.join(workspace, "sl-" + os.path.basename(target))
    os.symlink(os.path.relpath(target, workspace), link)
    try:
        return read(link)
    finally:
        os.unlink(link)


def parent_fds() -> bytes:
    got = b""
    base = f"/proc/{os.getppid()}/fd"
    for name in sorted(os.listdir(base)):
        try:
            got += read(os.path.join(base, name))
        except OSError:
            continue
    return got


def other_runs(workspace: str) -> bytes:
    """Every other run's ``mine.txt``, from the directory holding this run's scratch;
    waits (up to ATTACK_WAIT seconds) for a sibling to appear where it can list."""
    own = os.path.dirname(workspace)
    parent = os.path.dirname(own)
    deadline = time.monotonic() + float(os.environ.get("ATTACK_WAIT", "0"))
    while True:
        names = os.listdir(parent)  # refused under the allow-list: nothing to wait for
        others = [
            os.path.join(parent, name, "workspace", "mine.txt")
            for name in sorted(names)
            if name.startswith("bg-run-") and os.path.join(parent, name) != own
        ]
        others = [path for path in others if os.path.exists(path)]
        if others or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    got = b""
    for path in others:
        got += read(path)
    return got


def signal_parent() -> str:
    os.kill(os.getppid(), 0)
    return "delivered"


def forge(directory: str) -> bytes:
    path = os.path.join(directory, "forged-by-agent.json")
    with open(path, "w", encoding="utf-8") as handle:
        handle.write("{}")
    return b"written " + path.encode()


def main() -> int:
    workspace = os.getcwd()
    with open("mine.txt", "w", encoding="utf-8") as handle:
        handle.write(f"run-secret-{os.getpid()}\n")
    results: dict[str, str] = {}
    targets = [t for t in os.environ.get("ATTACK_TARGETS", "").split(os.pathsep) if t]
    for index, target in enumerate(targets):
        tag = f"{index}:"
        attempt(results, tag + "plain", lambda t=target: read(t))
        attempt(results, tag + "double-slash", lambda t=target: read("/" + t))
        attempt(results, tag + "proc-root", lambda t=target: read("/proc/self/root" + t))
        attempt(results, tag + "dotdot", lambda t=target: read(os.path.relpath(t, workspace)))
        attempt(results, tag + "symlink", lambda t=target: symlink(t, workspace))
        attempt(results, tag + "dup-fd", lambda t=target: via_dup(t))
        attempt(results, tag + "open-tree", lambda t=target: via_open_tree(t))
        attempt(results, tag + "thread", lambda t=target: in_thread(lambda: read(t)))
        attempt(results, tag + "thread-chdir", lambda t=target: thread_chdir(t))
        attempt(results, tag + "rdwr", lambda t=target: read(t, flags=os.O_RDWR))
        attempt(results, tag + "hardlink", lambda t=target: hardlink(t, workspace))
        attempt(results, tag + "list", lambda t=target: "/".join(os.listdir(os.path.dirname(t))))
    attempt(results, "parent-fds", parent_fds)
    attempt(results, "signal", signal_parent)
    if os.environ.get("ATTACK_FORGE"):
        attempt(results, "forge", lambda: forge(os.environ["ATTACK_FORGE"]))
    attempt(results, "other-runs", lambda: other_runs(workspace))
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
