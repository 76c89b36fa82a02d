"""One run's private view of the scratch parent, ``/dev``, ``/sys`` and (asked for) the
network, made by the kernel.

Usage: ``python -I -S separate_exec.py [--net] [--writable=PATH...] PARENT OWN [KEEP...]
-- COMMAND ARGV...`` (the options are optional and come first, in any order;
``--writable`` names a path the run may write, from the launcher's policy: its
``read_write`` and ``files_write`` entries).

Run as the first process of the run's own mount namespace (harness/containment), before
the namespace's init and the Landlock launcher, with the namespace's capabilities, this
does, in this order (a native port must do the same steps in the same order):

1. mounts a small tmpfs on a staging directory inside ``OWN`` (``OWN/.separate``; the
   run's scratch, which lies beneath ``PARENT``, the harness's temp directory where
   every run's scratch, every grading box and the harness's records live);
2. bind-mounts ``OWN`` and each ``KEEP`` path (the paths beneath ``PARENT`` the run's
   command names: its allow-list, an operator tree under ``/tmp``) into it, at the
   same relative place (not recursive for ``OWN``; recursive for a ``KEEP`` only when
   the plain bind is refused with EINVAL: locked mounts in a user namespace); each
   ``KEEP`` bind is made read-only with every mount beneath it
   (``mount_setattr(AT_RECURSIVE, MOUNT_ATTR_RDONLY)``: see step 6), and then each
   ``--writable`` path beneath ``PARENT`` and outside ``OWN`` (a persistent home under
   ``/tmp``) is bound from the host's tree over it, at its place, writable;
3. moves the staging tmpfs onto ``PARENT``: in this namespace ``PARENT`` now holds only
   those binds, so another run's scratch, a grading box or the tasks under ``/tmp`` are
   not there at all (ENOENT, whatever the spelling: Landlock mediates no ``chmod``,
   ``chown`` or ``utime``, but a name that does not resolve cannot be changed);
4. a private ``/dev`` (the host's nodes are shared by every run: a uid-0 agent owns
   them, so ``chmod 000 /dev/null`` broke a concurrent run and their times were a
   channel; one devpts instance carried a live channel between runs):

   a. mounts a tmpfs (``mode=755``, nosuid) on a second staging directory,
      ``OWN/.separate-dev``;
   b. the nodes ``null zero full random urandom tty`` (char 1:3 1:5 1:7 1:8 1:9 5:0,
      mode 0666): as root (euid 0) fresh nodes made with ``mknod``, so no host node is
      reachable; otherwise (an unprivileged harness's user namespace, where ``mknod``
      of a device is refused) an empty file each with the host's node bind-mounted on
      it (the agent's uid does not own a host node, so it cannot change it);
   c. the symlinks ``fd -> /proc/self/fd``, ``stdin``/``stdout``/``stderr`` ->
      ``/proc/self/fd/0..2`` and ``ptmx -> pts/ptmx``, and the directories ``pts`` and
      ``shm``; then the staging tmpfs and the node binds on it are made read-only
      (``mount_setattr(AT_RECURSIVE, MOUNT_ATTR_RDONLY)``): a node still reads and
      writes, but its mode, owner and times cannot change (EROFS), a bound host node's
      included (``utime`` to "now" needs only write access);
   d. a new devpts instance on ``pts`` (``newinstance,ptmxmode=0666,mode=620``,
      nosuid, noexec): only this run's ptys are in it;
   e. a tmpfs on ``shm`` (``mode=1777,size=64m``, nosuid, nodev, noexec);
   f. moves the staging tmpfs onto ``/dev`` (over the host's, which stays mounted
      beneath it, out of reach);
5. makes ``/sys`` and every mount beneath it read-only in this namespace
   (``mount_setattr(AT_RECURSIVE, MOUNT_ATTR_RDONLY)``): sysfs and cgroupfs keep the
   times and modes a uid-0 agent sets on their nodes, which outlive the run (EROFS
   now); skipped when ``/sys`` is not a mount point (nothing of sysfs there);
6. the root mount read-only, against atimechan (issue 19): a read of a file shared by
   every run (anything under ``/usr``) sets its atime (relatime: when the atime is not
   after the mtime, or a day old), which Landlock does not mediate and any later or
   concurrent run reads with ``stat``; the kernel updates no atime through a read-only
   mount (and a uid-0 agent, which owns those files, sets no time with ``utime``:
   EROFS). First each ``--writable`` path outside ``OWN`` and ``PARENT`` (a persistent
   home) is bound onto itself, a mount of its own that stays writable; then each of
   :data:`SYSTEM_MOUNTS` that is a mount point (a ``/usr`` of its own) and the root
   mount are made read-only, each alone (``mount_setattr`` without ``AT_RECURSIVE``:
   ``OWN``'s bind, ``/proc``, the private ``/dev`` and the binds of this step stay as
   they are). An unprivileged harness's user namespace may make its copied (locked)
   mounts read-only (tried on Linux 6.18); the agent, with no capability left, cannot
   make them writable again;
7. with ``--net``: a network namespace of the run's own (``unshare(CLONE_NEWNET)``)
   with its loopback interface up and nothing else: loopback TCP/UDP and abstract
   unix sockets are per namespace, so a sibling's server is not there to connect to
   (the model bridge of a ``network: model`` agent listens on this loopback and
   reaches the harness's proxy through a socket file in ``OWN``);
8. gives up the ambient capabilities it was started with (an unprivileged harness's
   user namespace: ``unshare --keep-caps``), returns to its working directory through
   the new mounts, and execs ``COMMAND``.

The mounts exist only in the run's namespace and vanish with its last process; the
host's view is untouched. The agent cannot undo them: the launcher drops every
capability before the agent starts (and in a user namespace the mounts are locked).

Any failure exits 125 with one line on stderr beginning like the launcher's
(``benchguard confine:``) and naming the step, so the harness records "agent could not
start" with the reason (and the availability probe, harness/containment's
``separation_works``, says which step fails on this machine), and the agent never runs
without the separation it was promised.
Standard library only, runnable as a plain script (it starts before anything else).
"""

from __future__ import annotations

import ctypes
import os
import stat
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
CLONE_NEWNET = 0x40000000
# mount_setattr(2): the same number on every architecture (the unified syscall table).
SYS_MOUNT_SETATTR = 442
AT_FDCWD = -100
AT_RECURSIVE = 0x8000
MOUNT_ATTR_RDONLY = 0x1
SIOCGIFFLAGS = 0x8913
SIOCSIFFLAGS = 0x8914
IFF_UP = 0x1
IFNAMSIZ = 16
IFREQ_SIZE = 40
AF_INET = 2
SOCK_DGRAM = 2
EXIT_FAILED = 125
MESSAGE_PREFIX = "benchguard confine:"
STAGE = ".separate"
DEV_STAGE = ".separate-dev"
NET_OPTION = "--net"
WRITABLE_OPTION = "--writable="
# Directories the run reads that some systems mount on their own (step 6).
SYSTEM_MOUNTS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/opt")
# The run's /tmp holds only directories and mount points: no agent may write there
# (Landlock grants it nothing), so it is small.
USAGE = "[--net] [--writable=PATH...] PARENT OWN [KEEP...] -- COMMAND..."
TMP_OPTIONS = b"mode=755,size=1m,nr_inodes=4096"
SHM_OPTIONS = b"mode=1777,size=64m"
DEV_OPTIONS = b"mode=755,size=64k,nr_inodes=64"
PTS_OPTIONS = b"newinstance,ptmxmode=0666,mode=620"
# The usual set (bwrap --dev's): name, major, minor; each mode 0666.
DEV_NODES = (
    ("null", 1, 3),
    ("zero", 1, 5),
    ("full", 1, 7),
    ("random", 1, 8),
    ("urandom", 1, 9),
    ("tty", 5, 0),
)
DEV_LINKS = (
    ("fd", "/proc/self/fd"),
    ("stdin", "/proc/self/fd/0"),
    ("stdout", "/proc/self/fd/1"),
    ("stderr", "/proc/self/fd/2"),
    ("ptmx", "pts/ptmx"),
)


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


def _beneath(path: str, top: str) -> bool:
    return path.startswith(top.rstrip("/") + "/")


def _bind_beneath(libc: ctypes.CDLL, stage: str, parent: str, own: str, path: str) -> str | None:
    """Bind ``path`` at its place relative to ``parent`` in the staging tmpfs; the
    target, or None when ``path`` is not beneath ``parent`` (nothing to keep)."""
    relative = os.path.relpath(path, parent)
    if relative.startswith("..") or relative == ".":
        return None
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
    _bind(libc, path, target, recursive_fallback=path != own)
    return target


def _bind(libc: ctypes.CDLL, path: str, target: str, *, recursive_fallback: bool) -> None:
    # Not recursive for the run's own scratch: the staging mount lies inside it.
    error = _mount(libc, path, target, None, MS_BIND, None)
    if error == EINVAL and recursive_fallback:
        # A tree holding mounts locked by a user namespace binds only recursively.
        error = _mount(libc, path, target, None, MS_BIND | MS_REC, None)
    if error:
        raise SeparateError(f"bind of {path}: {os.strerror(error)}")


def separate(
    parent: str,
    own: str,
    keep: Sequence[str],
    *,
    net: bool = False,
    writable: Sequence[str] = (),
) -> None:
    """Steps 1 to 7 of the module's description; raises :class:`SeparateError`."""
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
        target = _bind_beneath(libc, stage, parent, own, path)
        # A kept tree is read, never written, by the run: read-only, its atimes (and
        # those of every mount beneath it) stay as they were (step 6).
        if target is not None and path != own:
            set_read_only(libc, target)
    for path in outermost(writable):
        if path != own and not _beneath(path, own) and _beneath(path, parent):
            # Over the read-only kept tree holding it: bound from the host's, writable.
            _bind_beneath(libc, stage, parent, own, path)
    error = _mount(libc, stage, parent, None, MS_MOVE, None)
    if error:
        raise SeparateError(f"move of the private {parent}: {os.strerror(error)}")
    private_dev(libc, os.path.join(own, DEV_STAGE))
    read_only_sys(libc)
    read_only_root(libc, parent, own, writable)
    if net:
        private_network(libc)
    # Harmless where there were none (root): exec then keeps root's own capabilities.
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)


def private_dev(libc: ctypes.CDLL, stage: str) -> None:
    """Step 4: a ``/dev`` of the run's own, staged at ``stage``."""
    try:
        os.mkdir(stage, 0o700)
    except OSError as exc:
        raise SeparateError(f"cannot make {stage}: {exc.strerror}") from None
    error = _mount(libc, "benchguard-dev", stage, "tmpfs", MS_NOSUID, DEV_OPTIONS)
    if error:
        raise SeparateError(f"tmpfs for /dev: {os.strerror(error)}")
    # In a user namespace (an unprivileged harness) the kernel refuses mknod of a
    # device; the host's nodes, which the agent's uid does not own, are bound instead.
    fresh = os.geteuid() == 0
    for name, major, minor in DEV_NODES:
        node = os.path.join(stage, name)
        try:
            if fresh:
                os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(major, minor))
                os.chmod(node, 0o666)  # not the umask's
            else:
                with open(node, "xb"):
                    pass
        except OSError as exc:
            raise SeparateError(f"cannot make /dev/{name}: {exc.strerror}") from None
        if not fresh:
            error = _mount(libc, f"/dev/{name}", node, None, MS_BIND, None)
            if error:
                raise SeparateError(f"bind of the host's /dev/{name}: {os.strerror(error)}")
    try:
        for name, target in DEV_LINKS:
            os.symlink(target, os.path.join(stage, name))
        os.mkdir(os.path.join(stage, "pts"), 0o755)
        os.mkdir(os.path.join(stage, "shm"), 0o1777)
    except OSError as exc:
        raise SeparateError(f"cannot populate the private /dev: {exc.strerror}") from None
    # Read-only before pts and shm are mounted on it: the nodes still read and write
    # (a device's I/O is not the filesystem's), but chmod, chown and utime are EROFS,
    # also on a bound host node, whose time an agent that may write it could set to
    # "now" (utime needs only write access for that).
    set_read_only(libc, stage)
    pts = os.path.join(stage, "pts")
    error = _mount(libc, "devpts", pts, "devpts", MS_NOSUID | MS_NOEXEC, PTS_OPTIONS)
    if error:
        raise SeparateError(f"new devpts instance on /dev/pts: {os.strerror(error)}")
    shm = os.path.join(stage, "shm")
    flags = MS_NOSUID | MS_NODEV | MS_NOEXEC
    error = _mount(libc, "benchguard-shm", shm, "tmpfs", flags, SHM_OPTIONS)
    if error:
        raise SeparateError(f"tmpfs on /dev/shm: {os.strerror(error)}")
    error = _mount(libc, stage, "/dev", None, MS_MOVE, None)
    if error:
        raise SeparateError(f"move of the private /dev: {os.strerror(error)}")


class _MountAttr(ctypes.Structure):
    _fields_ = (
        ("attr_set", ctypes.c_uint64),
        ("attr_clr", ctypes.c_uint64),
        ("propagation", ctypes.c_uint64),
        ("userns_fd", ctypes.c_uint64),
    )


def set_read_only(libc: ctypes.CDLL, path: str, *, recursive: bool = True) -> None:
    """The mount at ``path`` (and, ``recursive``, every mount beneath it) read-only in
    this namespace."""
    attr = _MountAttr(MOUNT_ATTR_RDONLY, 0, 0, 0)
    done = libc.syscall(
        ctypes.c_long(SYS_MOUNT_SETATTR),
        ctypes.c_int(AT_FDCWD),
        os.fsencode(path),
        ctypes.c_uint(AT_RECURSIVE if recursive else 0),
        ctypes.byref(attr),
        ctypes.c_size_t(ctypes.sizeof(attr)),
    )
    if done != 0:
        raise SeparateError(f"read-only {path}: {os.strerror(ctypes.get_errno())}")


def read_only_sys(libc: ctypes.CDLL) -> None:
    """Step 5: ``/sys`` and every mount beneath it read-only in this namespace."""
    if os.path.ismount("/sys"):
        set_read_only(libc, "/sys")


def read_only_root(libc: ctypes.CDLL, parent: str, own: str, writable: Sequence[str]) -> None:
    """Step 6: each writable path outside the run's binds becomes a mount of its own,
    then the root mount (and any system directory that is a mount) read-only, alone."""
    for path in outermost(writable):
        if path == own or _beneath(path, own) or _beneath(path, parent):
            continue  # on the run's own scratch, or bound writable in step 2
        _bind(libc, path, path, recursive_fallback=True)
    for path in SYSTEM_MOUNTS:
        if os.path.ismount(path):
            set_read_only(libc, path, recursive=False)
    set_read_only(libc, "/", recursive=False)


def private_network(libc: ctypes.CDLL) -> None:
    """Step 6: a network namespace of this process's own, loopback up. By libc calls:
    importing ``socket`` (with ``enum`` and ``selectors``) would cost every run more
    than the step itself."""
    if libc.unshare(ctypes.c_int(CLONE_NEWNET)) != 0:
        raise SeparateError(f"network namespace: {os.strerror(ctypes.get_errno())}")
    handle = libc.socket(AF_INET, SOCK_DGRAM, 0)
    if handle < 0:
        raise SeparateError(f"loopback up: socket: {os.strerror(ctypes.get_errno())}")
    try:
        # struct ifreq: the interface's name, then (a union) its flags as a short.
        request = ctypes.create_string_buffer(b"lo", IFREQ_SIZE)
        flags = ctypes.c_short.from_buffer(request, IFNAMSIZ)
        done = libc.ioctl(handle, ctypes.c_ulong(SIOCGIFFLAGS), request)
        if done == 0:
            flags.value |= IFF_UP
            done = libc.ioctl(handle, ctypes.c_ulong(SIOCSIFFLAGS), request)
        if done != 0:
            error = os.strerror(ctypes.get_errno())
            raise SeparateError(f"loopback up in the run's network namespace: {error}")
    finally:
        os.close(handle)


def main(argv: Sequence[str]) -> int:
    args = list(argv)
    net = False
    writable: list[str] = []
    while args and (args[0] == NET_OPTION or args[0].startswith(WRITABLE_OPTION)):
        if args[0] == NET_OPTION:
            net = True
        else:
            writable.append(args[0][len(WRITABLE_OPTION) :])
        args = args[1:]
    if "--" not in args or args.index("--") < 2 or args.index("--") == len(args) - 1:
        sys.stderr.write(f"usage: separate_exec.py {USAGE}\n")
        return 2
    split = args.index("--")
    parent, own, keep = args[0], args[1], args[2:split]
    command = args[split + 1 :]
    try:
        here = os.getcwd()
        separate(parent, own, keep, net=net, writable=writable)
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
