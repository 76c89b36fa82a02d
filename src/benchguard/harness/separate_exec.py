"""One run's private view of the scratch parent and of ``/dev/shm``, made by the kernel.

Usage: ``python -I -S separate_exec.py PARENT OWN [KEEP...] -- COMMAND ARGV...``

Run as the first process of the run's own mount namespace (harness/containment), before
the namespace's init and the Landlock launcher, this

1. mounts a small tmpfs on a staging directory inside ``OWN`` (the run's scratch, which
   lies beneath ``PARENT``, the harness's temp directory where every run's scratch,
   every grading box and the harness's records live);
2. bind-mounts ``OWN`` and each ``KEEP`` path (the paths beneath ``PARENT`` the run's
   command names: its allow-list, an operator tree under ``/tmp``) into it, at the
   same relative place;
3. moves the staging tmpfs onto ``PARENT``: in this namespace ``PARENT`` now holds only
   those binds, so another run's scratch, a grading box or the tasks under ``/tmp`` are
   not there at all (ENOENT, whatever the spelling: Landlock mediates no ``chmod``,
   ``chown`` or ``utime``, but a name that does not resolve cannot be changed);
4. mounts a fresh tmpfs on ``/dev/shm`` (the host's is shared by every process: its
   times were a channel between runs);
5. gives up the ambient capabilities it was started with (an unprivileged harness's
   user namespace: ``unshare --keep-caps``), returns to its working directory through
   the new mounts, and execs ``COMMAND``.

The mounts exist only in the run's namespace and vanish with its last process; the
host's view is untouched. The agent cannot undo them: the launcher drops every
capability before the agent starts (and in a user namespace the mounts are locked).

Any failure exits 125 with one line on stderr beginning like the launcher's
(``benchguard confine:``), so the harness records "agent could not start" with the
reason, and the agent never runs without the separation it was promised.
Standard library only, runnable as a plain script (it starts before anything else).
"""

from __future__ import annotations

import ctypes
import os
import sys
from _collections_abc import Sequence

MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_BIND = 4096
MS_MOVE = 8192
MS_REC = 16384
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
EINVAL = 22
EXIT_FAILED = 125
MESSAGE_PREFIX = "benchguard confine:"
STAGE = ".separate"
# The run's /tmp holds only directories and mount points: no agent may write there
# (Landlock grants it nothing), so it is small.
TMP_OPTIONS = b"mode=755,size=1m,nr_inodes=4096"
SHM_OPTIONS = b"mode=1777,size=64m"


class SeparateError(RuntimeError):
    """A mount step failed; the message names it."""


def _mount(
    libc: ctypes.CDLL, source: str, target: str, fstype: str | None, flags: int, data: bytes | None
) -> int:
    done = libc.mount(
        os.fsencode(source),
        os.fsencode(target),
        os.fsencode(fstype) if fstype is not None else None,
        ctypes.c_ulong(flags),
        data,
    )
    return 0 if done == 0 else ctypes.get_errno()


def outermost(paths: Sequence[str]) -> list[str]:
    """``paths`` without those lying beneath another of them (sorted)."""
    kept: list[str] = []
    for path in sorted(set(paths)):
        if not any(path == top or path.startswith(top.rstrip("/") + "/") for top in kept):
            kept.append(path)
    return kept


def separate(parent: str, own: str, keep: Sequence[str]) -> None:
    """Steps 1 to 4 of the module's description; raises :class:`SeparateError`."""
    libc = ctypes.CDLL(None, use_errno=True)
    stage = os.path.join(own, STAGE)
    try:
        os.mkdir(stage, 0o700)
    except OSError as exc:
        raise SeparateError(f"cannot make {stage}: {exc.strerror}") from None
    error = _mount(libc, "benchguard-tmp", stage, "tmpfs", MS_NOSUID | MS_NODEV, TMP_OPTIONS)
    if error:
        raise SeparateError(f"tmpfs on {stage}: {os.strerror(error)}")
    for path in outermost([own, *keep]):
        relative = os.path.relpath(path, parent)
        if relative.startswith("..") or relative == ".":
            continue
        target = os.path.join(stage, relative)
        try:
            if os.path.isdir(path):
                os.makedirs(target, exist_ok=True)
            else:
                os.makedirs(os.path.dirname(target), exist_ok=True)
                with open(target, "ab"):
                    pass
        except OSError as exc:
            raise SeparateError(f"cannot make {target}: {exc.strerror}") from None
        # Not recursive for the run's own scratch: the staging mount lies inside it.
        error = _mount(libc, path, target, None, MS_BIND, None)
        if error == EINVAL and path != own:
            # A tree holding mounts locked by a user namespace binds only recursively.
            error = _mount(libc, path, target, None, MS_BIND | MS_REC, None)
        if error:
            raise SeparateError(f"bind of {path}: {os.strerror(error)}")
    error = _mount(libc, stage, parent, None, MS_MOVE, None)
    if error:
        raise SeparateError(f"move of the private {parent}: {os.strerror(error)}")
    if os.path.isdir("/dev/shm"):
        flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
        error = _mount(libc, "benchguard-shm", "/dev/shm", "tmpfs", flags, SHM_OPTIONS)
        if error:
            raise SeparateError(f"tmpfs on /dev/shm: {os.strerror(error)}")
    # Harmless where there were none (root): exec then keeps root's own capabilities.
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)


def main(argv: Sequence[str]) -> int:
    args = list(argv)
    if "--" not in args or args.index("--") < 2 or args.index("--") == len(args) - 1:
        sys.stderr.write("usage: separate_exec.py PARENT OWN [KEEP...] -- COMMAND...\n")
        return 2
    split = args.index("--")
    parent, own, keep = args[0], args[1], args[2:split]
    command = args[split + 1 :]
    try:
        here = os.getcwd()
        separate(parent, own, keep)
        # The old working directory is the covered tree's: re-enter it by name.
        os.chdir(here)
    except (SeparateError, OSError) as exc:
        sys.stderr.write(f"{MESSAGE_PREFIX} cannot separate the run from the others: {exc}\n")
        return EXIT_FAILED
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"{MESSAGE_PREFIX} cannot run {command[0]!r}: {exc.strerror}\n")
    return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
