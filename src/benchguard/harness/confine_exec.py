"""The Landlock launcher: restrict this process to an allow-list, then exec the agent.

The harness runs its native twin, ``confine_exec.c`` (same policy, same steps, no
interpreter start per run), wherever a C compiler built it (``launcher_build``); this
script is the fallback, and the reference the native one is tested against.

Usage: ``python -I -S confine_exec.py [KEY=VALUE...] -- AGENT ARGV...``

The policy is one argument per entry before ``--``, ``KEY=VALUE`` (split at the first
``=``; a path may hold any byte but NUL, and needs no quoting), every path absolute:

- ``read_exec=PATH``: read files, list directories and execute, beneath the path;
- ``read=PATH``: read files and list directories beneath the path;
- ``read_write=PATH``: everything a program does to its own files beneath the path
  (create, write, remove, rename and link within the granted trees, truncate);
- ``files_write=PATH``: a single file opened for writing (the transcript FIFO, the
  agent's own stdout and stderr files, the model socket);
- ``devices=PATH``: a device node read, written and ioctl'd (``/dev/null``...);
- ``home.target=``, ``home.upper=``, ``home.work=`` (optional): the run's fresh home, a
  copy-on-write overlay of ``target`` (the operator's home, as its lower layer) with
  the run's writes going to ``upper``; or ``home.target=`` and ``home.copy=`` to bind a
  copy over it;
- ``confine=0``: only for an ``--unconfined`` batch (the home is still made, no
  Landlock rule is applied; the capabilities are still dropped); ``confine=1`` is the
  default;
- ``seccomp=0``: do not install the seccomp filter of ``seccomp.py`` (the file beside
  this one); ``seccomp=1``, the default, installs it last, just before ``exec``: no
  extended attributes, no io_uring.

Any other key, or an entry without ``=``, refuses to run the agent (exit 125). No JSON:
the launcher starts in the agent's process before every run, and ``json`` would import
``re`` (a third of the launcher's start-up); likewise ``shutil`` is imported only for
the copy fallback.

The home is mounted in a mount namespace of the agent's own (the launcher unshares one;
as a user also a user namespace mapping its own uid and gid to themselves, so the
agent keeps its identity and holds no capability once it execs), so no other run, and
not the host, ever sees it, and it vanishes with the agent's last process. The home's
Landlock rule is added after the mount, so it grants the overlay, never the operator's
tree beneath it.

A listed path that does not exist is skipped (an optional system directory). The
launcher sets ``PR_SET_NO_NEW_PRIVS``, creates a ruleset handling every filesystem right
of the highest ABI the kernel offers, scopes abstract unix sockets and signals when the
ABI has scoping (6+), restricts itself, and execs the agent; the restriction survives
``execve`` and binds every process the agent starts.

Last, confined or not, it gives up every capability (:func:`drop_capabilities`): the
bounding set (when it holds ``CAP_SETPCAP``, i.e. as root), the ambient, inheritable,
permitted and effective sets, with ``no_new_privs`` so no setuid or file-capability
program gives one back, and then asks the kernel (``/proc/self/status``) that every set
is empty. A root agent is then uid 0 with no privilege: it cannot unmount the run's
``/proc`` to reach the host's, load a module or a BPF program, or trace the harness
(the kernel refuses ``/proc/PID/mem``, ``root``, ``environ`` of a process whose
capabilities exceed the caller's). Anything it cannot do is fatal: it exits 125 with
one line on stderr and never runs the agent.

The syscalls are made with ctypes, x86_64 numbers (the numbers are the same on every
architecture that has them, since these are new syscalls allocated in the unified
table). This file is standard-library only and runnable as a plain script, because it
starts before anything it could import is reachable, and inside the sandbox it is bound
alone, never the package it lives in.
"""

from __future__ import annotations

import ctypes
import os
import stat
import sys

# Already loaded by ``os``; ``collections.abc`` would import ``collections`` first.
from _collections_abc import Mapping, Sequence

TYPE_CHECKING = False
if TYPE_CHECKING:  # typing is not imported at run time (start-up cost)
    from typing import Any

SYS_LANDLOCK_CREATE_RULESET = 444
SYS_LANDLOCK_ADD_RULE = 445
SYS_LANDLOCK_RESTRICT_SELF = 446
LANDLOCK_CREATE_RULESET_VERSION = 1 << 0
LANDLOCK_RULE_PATH_BENEATH = 1
PR_SET_NO_NEW_PRIVS = 38
CLONE_NEWNS = 0x00020000
CLONE_NEWUSER = 0x10000000
MS_BIND = 4096
MS_REC = 16384
MS_PRIVATE = 1 << 18
PR_CAPBSET_READ = 23
PR_CAPBSET_DROP = 24
PR_CAP_AMBIENT = 47
PR_CAP_AMBIENT_CLEAR_ALL = 4
LINUX_CAPABILITY_VERSION_3 = 0x20080522
# Used when /proc/sys/kernel/cap_last_cap cannot be read: dropping a capability number
# the kernel does not have fails with EINVAL, which is skipped.
CAP_LAST_FALLBACK = 63
# The /proc/self/status lines that must read zero once the capabilities are dropped.
CAPABILITY_SETS = ("CapInh", "CapPrm", "CapEff", "CapAmb")
# In the run's home layers directory: the copy made when the overlay was refused, and
# the note saying why (harness.home reads both).
COPY_DIR = "copy"
FALLBACK_MARKER = "overlay-refused"

# Filesystem rights (uapi/linux/landlock.h), with the ABI that introduced each.
EXECUTE = 1 << 0
WRITE_FILE = 1 << 1
READ_FILE = 1 << 2
READ_DIR = 1 << 3
REMOVE_DIR = 1 << 4
REMOVE_FILE = 1 << 5
MAKE_CHAR = 1 << 6
MAKE_DIR = 1 << 7
MAKE_REG = 1 << 8
MAKE_SOCK = 1 << 9
MAKE_FIFO = 1 << 10
MAKE_BLOCK = 1 << 11
MAKE_SYM = 1 << 12
REFER = 1 << 13  # ABI 2: link/rename across directories needs it on both sides
TRUNCATE = 1 << 14  # ABI 3: truncate(2), ftruncate(2), O_TRUNC
IOCTL_DEV = 1 << 15  # ABI 5: ioctl(2) on character and block devices
SCOPE_ABSTRACT_UNIX_SOCKET = 1 << 0  # ABI 6
SCOPE_SIGNAL = 1 << 1  # ABI 6

ABI_1_FS = (1 << 13) - 1
# Rights a file (not a directory) can be granted: the kernel refuses the others.
FILE_RIGHTS = EXECUTE | WRITE_FILE | READ_FILE | TRUNCATE | IOCTL_DEV
EXIT_CONFINE_FAILED = 125
EINVAL = 22
EXIT_EXEC_FAILED = 127
MESSAGE_PREFIX = "benchguard confine:"


class ConfineError(RuntimeError):
    """Landlock could not be applied; the message says which step and why."""


class _RulesetAttr(ctypes.Structure):
    _fields_ = [
        ("handled_access_fs", ctypes.c_uint64),
        ("handled_access_net", ctypes.c_uint64),
        ("scoped", ctypes.c_uint64),
    ]


class _PathBeneathAttr(ctypes.Structure):
    _pack_ = 1  # __attribute__((packed)) in the uapi header: 12 bytes
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [
        ("effective", ctypes.c_uint32),
        ("permitted", ctypes.c_uint32),
        ("inheritable", ctypes.c_uint32),
    ]


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    return libc


def abi_version() -> int:
    """The Landlock ABI the running kernel offers; 0 where it has none (or it is off)."""
    if sys.platform != "linux" or os.uname().machine != "x86_64":
        return 0
    libc = _libc()
    version = libc.syscall(
        ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET),
        None,
        ctypes.c_size_t(0),
        ctypes.c_uint32(LANDLOCK_CREATE_RULESET_VERSION),
    )
    return int(version) if version > 0 else 0


def handled_fs(abi: int) -> int:
    """Every filesystem right ``abi`` knows (a right not handled is never restricted)."""
    rights = ABI_1_FS
    if abi >= 2:
        rights |= REFER
    if abi >= 3:
        rights |= TRUNCATE
    if abi >= 5:
        rights |= IOCTL_DEV
    return rights


def rights_for(kind: str, abi: int) -> int:
    """The rights one policy list grants, limited to what ``abi`` handles."""
    read = READ_FILE | READ_DIR
    write = (
        WRITE_FILE
        | REMOVE_DIR
        | REMOVE_FILE
        | MAKE_DIR
        | MAKE_REG
        | MAKE_SOCK
        | MAKE_FIFO
        | MAKE_SYM
        | REFER
        | TRUNCATE
    )
    table = {
        "read_exec": read | EXECUTE,
        "read": read,
        # EXECUTE too: an agent runs the scripts it writes (./run.sh, node_modules/.bin).
        "read_write": read | EXECUTE | write,
        "files_write": WRITE_FILE | READ_FILE | TRUNCATE,
        "devices": READ_FILE | READ_DIR | WRITE_FILE | TRUNCATE | IOCTL_DEV,
    }
    return table[kind] & handled_fs(abi)


POLICY_KINDS = ("read_exec", "read", "read_write", "files_write", "devices")


def restrict(policy: Mapping[str, Sequence[str]]) -> int:
    """Restrict this process (and all it later starts) to ``policy``; the ABI used.

    Raises :class:`ConfineError` when Landlock is missing or a step fails.
    """
    abi = abi_version()
    if abi < 1:
        raise ConfineError("Landlock is not available in this kernel (or is disabled)")
    libc = _libc()
    attr = _RulesetAttr(handled_fs(abi), 0, 0)
    size = 8
    if abi >= 6:
        attr.scoped = SCOPE_ABSTRACT_UNIX_SOCKET | SCOPE_SIGNAL
        size = ctypes.sizeof(_RulesetAttr)
    ruleset = libc.syscall(
        ctypes.c_long(SYS_LANDLOCK_CREATE_RULESET),
        ctypes.byref(attr),
        ctypes.c_size_t(size),
        ctypes.c_uint32(0),
    )
    if ruleset < 0:
        raise ConfineError(f"landlock_create_ruleset: {os.strerror(ctypes.get_errno())}")
    try:
        for kind in POLICY_KINDS:
            for path in policy.get(kind, ()):
                _add_rule(libc, int(ruleset), path, rights_for(kind, abi))
        if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise ConfineError(f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
        done = libc.syscall(
            ctypes.c_long(SYS_LANDLOCK_RESTRICT_SELF), ctypes.c_int(ruleset), ctypes.c_uint32(0)
        )
        if done != 0:
            raise ConfineError(f"landlock_restrict_self: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(int(ruleset))
    return abi


def drop_capabilities() -> dict[str, str]:
    """Give up every capability for good; the kernel's own account of the sets after.

    Raises :class:`ConfineError` when a step fails or the kernel still reports a
    capability (in any set, or in the bounding set of a uid-0 process, which ``execve``
    would otherwise hand back).
    """
    libc = _libc()
    for cap in range(_cap_last() + 1):
        if libc.prctl(PR_CAPBSET_READ, cap, 0, 0, 0) != 1:
            continue
        if libc.prctl(PR_CAPBSET_DROP, cap, 0, 0, 0) != 0:
            err = ctypes.get_errno()
            # EPERM: no CAP_SETPCAP, so nothing to drop it with (a non-root launcher:
            # ``no_new_privs`` then keeps exec from granting any); EINVAL: no such cap.
            if err not in (1, 22):
                raise ConfineError(f"prctl(PR_CAPBSET_DROP, {cap}): {os.strerror(err)}")
    # EINVAL before Linux 4.3 (no ambient set): nothing to clear.
    libc.prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0)
    header = _CapHeader(LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    if libc.capset(ctypes.byref(header), data) != 0:
        raise ConfineError(f"capset (clear every set): {os.strerror(ctypes.get_errno())}")
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise ConfineError(f"prctl(PR_SET_NO_NEW_PRIVS): {os.strerror(ctypes.get_errno())}")
    status = _status()
    required = [*CAPABILITY_SETS, *(("CapBnd",) if os.geteuid() == 0 else ())]
    left = [name for name in required if int(status.get(name, "1"), 16) != 0]
    if status.get("NoNewPrivs") != "1":
        left.append("NoNewPrivs")
    if left:
        shown = ", ".join(f"{name} {status.get(name, 'missing')}" for name in left)
        raise ConfineError(f"capabilities still held after dropping them: {shown}")
    return {name: status[name] for name in ("CapBnd", *CAPABILITY_SETS) if name in status}


def _cap_last() -> int:
    try:
        with open("/proc/sys/kernel/cap_last_cap", encoding="ascii") as handle:
            return int(handle.read().strip())
    except (OSError, ValueError):
        return CAP_LAST_FALLBACK


def _status() -> dict[str, str]:
    """``/proc/self/status`` as the kernel reports it (name: first value)."""
    try:
        with open("/proc/self/status", encoding="ascii", errors="replace") as handle:
            lines = handle.read().splitlines()
    except OSError as exc:
        raise ConfineError(f"cannot read /proc/self/status: {exc.strerror}") from None
    fields = {}
    for line in lines:
        name, _, value = line.partition(":")
        fields[name] = value.strip()
    return fields


def mount_home(home: dict[str, str]) -> None:
    """Mount the run's fresh home over ``home["target"]`` in a new mount namespace."""
    libc = _libc()
    uid, gid = os.geteuid(), os.getegid()
    flags = CLONE_NEWNS if uid == 0 else CLONE_NEWNS | CLONE_NEWUSER
    if libc.unshare(ctypes.c_int(flags)) != 0:
        raise ConfineError(f"unshare (mount namespace): {os.strerror(ctypes.get_errno())}")
    if uid != 0:
        for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1")):
            with open(f"/proc/self/{name}", "w", encoding="ascii") as handle:
                handle.write(text)
        with open("/proc/self/gid_map", "w", encoding="ascii") as handle:
            handle.write(f"{gid} {gid} 1")
    if libc.mount(None, b"/", None, ctypes.c_ulong(MS_REC | MS_PRIVATE), None) != 0:
        raise ConfineError(f"mount --make-rprivate /: {os.strerror(ctypes.get_errno())}")
    target = os.fsencode(home["target"])
    if "copy" in home:
        done = libc.mount(os.fsencode(home["copy"]), target, None, ctypes.c_ulong(MS_BIND), None)
        what = "bind of the home copy"
    else:
        options = b"lowerdir=%s,upperdir=%s,workdir=%s" % (
            _escaped(home["target"]),
            _escaped(home["upper"]),
            _escaped(home["work"]),
        )
        # volatile: no sync of the upper layer when the namespace ends (a journal commit
        # per run); the upper is the run's scratch, read from the page cache and removed.
        done = libc.mount(b"overlay", target, b"overlay", ctypes.c_ulong(0), options + b",volatile")
        if done != 0 and ctypes.get_errno() == EINVAL:  # before Linux 5.10
            done = libc.mount(b"overlay", target, b"overlay", ctypes.c_ulong(0), options)
        what = "overlay of the home"
        if done != 0:
            # A copy where the overlay cannot be mounted (the kernel refuses some lower
            # layers); the harness reads the marker and treats the home as copied.
            reason = os.strerror(ctypes.get_errno())
            layers = os.path.dirname(home["upper"])
            copy = os.path.join(layers, COPY_DIR)
            import shutil  # only here: the launcher's start-up is every run's cost

            shutil.copytree(home["target"], copy, symlinks=True)
            with open(os.path.join(layers, FALLBACK_MARKER), "w", encoding="utf-8") as marker:
                marker.write(f"overlay refused ({reason}); the home was copied\n")
            done = libc.mount(os.fsencode(copy), target, None, ctypes.c_ulong(MS_BIND), None)
            what = "bind of the home copy"
    if done != 0:
        raise ConfineError(f"{what} on {home['target']}: {os.strerror(ctypes.get_errno())}")


def _escaped(path: str) -> bytes:
    """A path as an overlay mount option value: ``,`` ``:`` and ``\\`` escaped."""
    raw = os.fsencode(path)
    for char in (b"\\", b",", b":"):
        raw = raw.replace(char, b"\\" + char)
    return raw


def _add_rule(libc: ctypes.CDLL, ruleset: int, path: str, rights: int) -> None:
    try:
        # O_PATH: no read of the object itself; the rule is on what the path resolves to.
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except OSError:
        # Missing, or out of this uid's reach (a parent it cannot search): a rule only
        # ever grants, so skipping one can only take access away, never add it.
        return
    try:
        if not stat.S_ISDIR(os.fstat(fd).st_mode):
            rights &= FILE_RIGHTS
        beneath = _PathBeneathAttr(rights, fd)
        added = libc.syscall(
            ctypes.c_long(SYS_LANDLOCK_ADD_RULE),
            ctypes.c_int(ruleset),
            ctypes.c_int(LANDLOCK_RULE_PATH_BENEATH),
            ctypes.byref(beneath),
            ctypes.c_uint32(0),
        )
        if added != 0:
            raise ConfineError(f"landlock_add_rule {path}: {os.strerror(ctypes.get_errno())}")
    finally:
        os.close(fd)


def _seccomp_filter() -> Any:
    """The module ``seccomp.py`` beside this file, loaded by path (with ``-I`` the
    script's directory is not on ``sys.path``, and in the sandbox the package is not
    bound, only the two files). Compiled from its source, never from a ``__pycache__``
    (which is neither bound nor granted, and reading it would be a read of the
    harness's checkout). Loaded before Landlock restricts this process."""
    import types

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "seccomp.py")
    module = types.ModuleType("benchguard_seccomp")
    module.__file__ = path
    try:
        with open(path, "rb") as handle:
            code = compile(handle.read(), path, "exec", dont_inherit=True)
        exec(code, module.__dict__)
    except (OSError, SyntaxError) as exc:
        raise ConfineError(f"cannot load the seccomp filter from {path}: {exc}") from None
    return module


HOME_KEYS = ("target", "upper", "work", "copy")


def parse_policy(
    entries: Sequence[str],
) -> tuple[dict[str, list[str]], dict[str, str], dict[str, bool]]:
    """The policy entries before ``--``: the path lists, the home spec, and the switches
    (``confine``, ``seccomp``). Raises :class:`ConfineError` for an entry it does not
    know. ``fsize=BYTES`` is read by :func:`file_size_limit`."""
    paths: dict[str, list[str]] = {kind: [] for kind in POLICY_KINDS}
    home: dict[str, str] = {}
    switches = {"confine": True, "seccomp": True}
    for entry in entries:
        key, sep, value = entry.partition("=")
        if not sep:
            raise ConfineError(f"policy entry without '=': {entry!r}")
        if key in paths:
            paths[key].append(value)
        elif key.startswith("home.") and key[5:] in HOME_KEYS:
            home[key[5:]] = value
        elif key in switches and value in ("0", "1"):
            switches[key] = value == "1"
        elif key == "fsize" and value.isdigit():
            pass
        else:
            raise ConfineError(f"unknown policy entry {key!r}")
    return paths, home, switches


def file_size_limit(entries: Sequence[str]) -> int | None:
    """The ``fsize=BYTES`` entry: the run's disk budget as RLIMIT_FSIZE (None: none)."""
    found = [entry[len("fsize=") :] for entry in entries if entry.startswith("fsize=")]
    return int(found[-1]) if found else None


def limit_file_size(limit: int) -> None:
    """RLIMIT_FSIZE soft and hard at ``limit``: after the capability drop, the agent
    cannot raise it (CAP_SYS_RESOURCE), and every process it starts inherits it."""
    import resource

    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))


def main(argv: Sequence[str]) -> int:
    if "--" not in argv or list(argv).index("--") == len(argv) - 1:
        sys.stderr.write("usage: confine_exec.py [KEY=VALUE...] -- AGENT ARGV...\n")
        return 2
    split = list(argv).index("--")
    try:
        paths, home, switches = parse_policy(argv[:split])
        seccomp = _seccomp_filter() if switches["seccomp"] else None
        if home:
            mount_home(home)
        if switches["confine"]:
            restrict(paths)
        drop_capabilities()
        fsize = file_size_limit(argv[:split])
        if fsize is not None:
            limit_file_size(fsize)
        if seccomp is not None:
            # Last: after Landlock and the capability drop, just before exec.
            seccomp.install()
    # RuntimeError: ConfineError and the filter's SeccompError; OSError: a /proc write.
    except (RuntimeError, ValueError, OSError) as exc:
        sys.stderr.write(f"{MESSAGE_PREFIX} refusing to run the agent unconfined: {exc}\n")
        return EXIT_CONFINE_FAILED
    command = list(argv[split + 1 :])
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.stderr.write(f"{MESSAGE_PREFIX} cannot run {command[0]!r}: {exc.strerror}\n")
        return EXIT_EXEC_FAILED
    return EXIT_EXEC_FAILED  # not reached: execvp returns only by raising


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
