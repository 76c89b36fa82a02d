"""Reading a strace ``-y`` log into the audit summary, by what the kernel named.

strace runs with ``-y``: every descriptor argument and every descriptor a call returns
is printed with the path the kernel holds for it (read from ``/proc/PID/fd``), and
``AT_FDCWD`` with the calling thread's working directory. So nothing is re-resolved
here for a call that succeeded:

- an open is matched by the path of the descriptor it returned (``//x``,
  ``/proc/self/root/x``, a relative path after a ``chdir`` in another thread, a symlink
  with a relative target: the kernel already resolved them), then by that file's
  (device, inode) against the protected set's identities (a hard link or another
  mount of a protected file);
- a listing by the path of the descriptor listed (whatever made it: ``dup2``,
  ``fcntl``, an inherited fd);
- a call that makes a descriptor or a view of the tree the log cannot follow
  (``open_tree``, ``open_by_handle_at``, ``pidfd_getfd``, ``io_uring_setup``, ``fsopen``,
  ``fsmount``, ``fspick``, ``move_mount``, ``mount``, ``chroot``, ``pivot_root``), or a
  file call this module does not know, makes the summary incomplete when it succeeded:
  never clean.

A call that failed has no descriptor: its path is the agent's spelling, made absolute
against the kernel's path of its directory descriptor (with the ``/proc/self/root``-style
prefixes taken off) and resolved by the harness after the run. A failure (not found,
denied: the sandbox hides the path, Landlock answers EACCES) is recorded as an attempt
("tried"). Lookups (stat, access, readlink) and executions carry no descriptor either
and are resolved the same way.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchguard.harness.audit import (
    MAX_LOG_BYTES,
    MAX_RECORDED_ACCESSES,
    ProtectedSet,
    metadata_change,
    outside_own_trees,
)

_LINE = re.compile(r"^(\d+) +(.*)$")
# strace -qq's line for a syscall stop of a process that vanished before strace read it.
_UNNAMED_DETACHED = re.compile(r"^\?\?\?\( *<detached \.\.\.>$")
_CALL = re.compile(r"^(\w+)\((.*)\) += (.*)$", re.DOTALL)
# A descriptor as strace -y prints it: AT_FDCWD or a number, then <the kernel's path>
# (strace escapes '>' inside it), then "(deleted)" for a file since unlinked.
_FD = re.compile(r"^(AT_FDCWD|-?\d+)(?:<([^>]*)>)?(\(deleted\))?$")
_RETURN = re.compile(r"^(-?\d+|\?)(?:<([^>]*)>)?(?:\(deleted\))?(?: (E[A-Z0-9]+))?")
# --decode-pids=pidns: a pid from inside the run's pid namespace, as strace names it.
_TRANSLATED = re.compile(r"/\* (\d+) in strace's PID NS \*/")
_ESCAPE = re.compile(rb"\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)")
_SIMPLE_ESCAPES = {
    b"n": b"\n",
    b"t": b"\t",
    b"r": b"\r",
    b"v": b"\v",
    b"f": b"\f",
    b'"': b'"',
    b"\\": b"\\",
}
# Spellings that name the root or the working directory through /proc.
_PROC_ROOT = re.compile(r"^/proc/(?:self|thread-self|\d+(?:/task/\d+)?)/root(?=/|$)")
# What strace -y names a descriptor that is no file in any tree: reopening one through
# /dev/fd/N (bash's process substitution does) reaches the object the process already
# held, whose writer is itself in the audited tree, so there is nothing new to match.
_NOT_A_FILE = re.compile(r"^(?:pipe|socket|anon_inode):")
_PROC_CWD = re.compile(r"^/proc/(?:self|thread-self|\d+(?:/task/\d+)?)/cwd(?=/|$)")
# Paths that name the calling process's own state (its descriptors, its pids' view of
# /proc): resolved by the harness after the run they would name the *harness's*
# descriptors and processes (``/proc/self/fd/4`` is then whatever the harness holds
# as fd 4, another run's scratch while it removes it). They are matched as spelled and
# never resolved or stat'ed in the harness's view; a descriptor behind them was
# audited when the process made it.
_PROCESS_VIEW = re.compile(r"^/(?:proc|dev/(?:fd|stdin|stdout|stderr))(?=/|$)")

_OPEN = frozenset({"open", "creat", "openat", "openat2"})
_EXEC = frozenset({"execve", "execveat"})
_LIST = frozenset({"getdents", "getdents64"})
# name -> (index of the directory descriptor or None, index of the path)
_LOOKUP: dict[str, tuple[int | None, int]] = {
    "stat": (None, 0),
    "lstat": (None, 0),
    "newfstatat": (0, 1),
    "fstatat64": (0, 1),
    "statx": (0, 1),
    "access": (None, 0),
    "faccessat": (0, 1),
    "faccessat2": (0, 1),
    "readlink": (None, 0),
    "readlinkat": (0, 1),
    "statfs": (None, 0),
    "getxattr": (None, 0),
    "lgetxattr": (None, 0),
    "listxattr": (None, 0),
    "llistxattr": (None, 0),
    "inotify_add_watch": (None, 1),
    "fanotify_mark": (3, 4),
    "name_to_handle_at": (0, 1),
    "utime": (None, 0),
}
# name -> [(descriptor index or None, path index), ...] of every path it changes.
_CHANGE: dict[str, tuple[tuple[int | None, int], ...]] = {
    "unlink": ((None, 0),),
    "unlinkat": ((0, 1),),
    "rename": ((None, 0), (None, 1)),
    "renameat": ((0, 1), (2, 3)),
    "renameat2": ((0, 1), (2, 3)),
    "mkdir": ((None, 0),),
    "mkdirat": ((0, 1),),
    "rmdir": ((None, 0),),
    "chmod": ((None, 0),),
    "fchmodat": ((0, 1),),
    "fchmodat2": ((0, 1),),
    "chown": ((None, 0),),
    "lchown": ((None, 0),),
    "fchownat": ((0, 1),),
    "truncate": ((None, 0),),
    "utimensat": ((0, 1),),
    "futimesat": ((0, 1),),
    "utimes": ((None, 0),),
    "mknod": ((None, 0),),
    "mknodat": ((0, 1),),
    "setxattr": ((None, 0),),
    "lsetxattr": ((None, 0),),
    "removexattr": ((None, 0),),
    "lremovexattr": ((None, 0),),
}
# Metadata changes: name -> (directory descriptor index or None, path index or None:
# the descriptor itself is the target). Landlock mediates none of them, so a successful
# one outside the run's own trees is a finding (audit.OUTSIDE_METADATA).
_METADATA: dict[str, tuple[int | None, int | None]] = {
    "chmod": (None, 0),
    "fchmodat": (0, 1),
    "fchmodat2": (0, 1),
    "chown": (None, 0),
    "lchown": (None, 0),
    "fchownat": (0, 1),
    "utime": (None, 0),
    "utimes": (None, 0),
    "utimensat": (0, 1),
    "futimesat": (0, 1),
    "setxattr": (None, 0),
    "lsetxattr": (None, 0),
    "removexattr": (None, 0),
    "lremovexattr": (None, 0),
    "setxattrat": (0, 1),
    "removexattrat": (0, 1),
    "fchmod": (0, None),
    "fchown": (0, None),
    "fsetxattr": (0, None),
    "fremovexattr": (0, None),
}
_FORKS = frozenset({"clone", "clone3", "fork", "vfork"})
# Calls held for processes not yet known to the log (see _Parser.unborn).
MAX_UNBORN = 200_000
# Calls after which the log no longer says what a descriptor or path reaches.
UNINTERPRETABLE = frozenset(
    {
        "open_tree",
        "open_by_handle_at",
        "pidfd_getfd",
        "io_uring_setup",
        "fsopen",
        "fsmount",
        "fspick",
        "move_mount",
        "mount",
        "mount_setattr",
        "chroot",
        "pivot_root",
        # Another process's memory or syscalls, which this log does not show: a red team
        # traced a child it had made untraced and read every task through it.
        "ptrace",
        "process_vm_readv",
        "process_vm_writev",
    }
)
# A child made with this flag is never attached by strace -f: what it does is unseen.
_UNTRACED = "CLONE_UNTRACED"
# File calls that reach no file content and make nothing the log must follow.
_HARMLESS = frozenset(
    {"getcwd", "umount", "umount2", "swapoff", "acct", "quotactl", "uselib", "swapon"}
)
# The harness's wrapper programs (harness/identity, harness/sandbox, containment).
WRAPPER_PROGRAMS = frozenset({"setpriv", "bwrap", "unshare"})
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
UNSEEN = (
    "reads through memory the agent held before the run",
    "access by a process not descended from the agent",
)
# How many distinct uninterpretable calls the summary names.
_MAX_NAMED = 20


def _unescape(text: str) -> str:
    """strace's C-style escapes decoded to bytes, returned as a str with surrogate
    escapes for bytes that are not UTF-8 (so it compares equal to ``os`` paths)."""
    raw = text.encode("utf-8", "surrogateescape")
    if b"\\" not in raw:
        return text

    def one(match: re.Match[bytes]) -> bytes:
        code = match.group(1)
        if code.startswith(b"x"):
            return bytes([int(code[1:], 16)])
        if code[:1] in b"01234567":
            return bytes([int(code, 8) & 0xFF])
        return _SIMPLE_ESCAPES.get(code, code)

    return _ESCAPE.sub(one, raw).decode("utf-8", "surrogateescape")


def _shown(path: str) -> str:
    """A path as the record shows it: bytes that are not UTF-8 as backslash escapes."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")


def split_args(text: str) -> list[str]:
    """The top-level arguments of one call (quotes, brackets and braces respected)."""
    args: list[str] = []
    depth, start, quoted, escaped = 0, 0, False, False
    for index, char in enumerate(text):
        if quoted:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                quoted = False
        elif char == '"':
            quoted = True
        elif char in "{[(":
            depth += 1
        elif char in "}])":
            depth -= 1
        elif char == "," and depth == 0:
            args.append(text[start:index].strip())
            start = index + 1
    tail = text[start:].strip()
    if tail or args:
        args.append(tail)
    return args


def _string(arg: str) -> str | None:
    if len(arg) >= 2 and arg[0] == '"':
        end = arg.rfind('"')
        return _unescape(arg[1:end]) if end > 0 else None
    return None


@dataclass
class _Cell:
    """A working directory shared by the threads (CLONE_FS) that share it."""

    path: str


@dataclass
class _Parser:
    protected: ProtectedSet
    start_cwd: str
    cwd: dict[int, _Cell] = field(default_factory=dict)
    pending: dict[int, str] = field(default_factory=dict)
    events: int = 0
    found: dict[tuple[str, str, str], dict[str, str]] = field(default_factory=dict)
    total_protected: int = 0
    # Paths this run made itself (a new file, a truncated one, a directory, a rename's
    # target): what it wrote is not protected material.
    created: set[str] = field(default_factory=set)
    # Successful accesses the path rules did not match: checked by identity after the
    # log is read (path -> (operation, writing, reading)).
    unmatched: dict[str, tuple[str, bool, bool]] = field(default_factory=dict)
    uninterpreted: dict[str, int] = field(default_factory=dict)
    unparsed: int = 0
    # Paths the run opened with O_CREAT (an unconfined run's own new file outside its
    # trees): a metadata change to one is not a reach into the host.
    opened_create: set[str] = field(default_factory=set)
    # The log's first process is the harness's unshare (the run's pid namespace). The
    # harness's own wrappers are exempt from "cannot follow": unshare, the namespace's
    # init (/bin/sh, its first child), and a chain of setpriv and bwrap execs (the
    # sandbox mounting its root), with their children until those exec something else.
    # The agent's own processes never are: the chain ends at the agent's program.
    wrapped: bool = False
    leader: int | None = None
    wrappers: set[int] = field(default_factory=set)
    parents: dict[int, int] = field(default_factory=dict)
    # Calls of a process whose creation the log has not shown yet: with -f a child's
    # first calls are often printed before its parent's clone returns, and until then
    # neither its working directory nor whether it is a harness wrapper is known (an
    # honest run read as incomplete for the launcher's own mounts). Held, then replayed
    # once the clone returns (or at the end of the log), within a bound.
    unborn: dict[int, list[tuple[str, list[str], str]]] = field(default_factory=dict)
    unborn_calls: int = 0

    def _cell(self, pid: int) -> _Cell:
        cell = self.cwd.get(pid)
        if cell is None:
            cell = self.cwd[pid] = _Cell(self.start_cwd)
        return cell

    def feed(self, line: str) -> None:
        matched = _LINE.match(line)
        if matched is None:
            if line.strip():
                self.unparsed += 1
            return
        pid, rest = int(matched.group(1)), matched.group(2)
        if rest.endswith("<unfinished ...>"):
            self.pending[pid] = rest[: -len("<unfinished ...>")].rstrip()
            return
        if rest.startswith("<... "):
            head = self.pending.pop(pid, None)
            closing = rest.find("resumed>")
            if head is None or closing < 0:
                self.unparsed += 1
                return
            rest = head + rest[closing + len("resumed>") :]
        if rest.startswith(("+++", "---")):
            return
        call = _CALL.match(rest)
        if call is None:
            # A call cut by the death of its process ("= ?" with nothing after) is not
            # an access, nor is a stop whose call strace could not even name ("???("):
            # its registers were unreadable because the process was already gone, and
            # with -qq no exit line follows, so strace ends the line " <detached ...>"
            # (seen on CI under load). A NAMED call left detached stays unreadable: a
            # tracer that let go of a live process did not see what that call reached.
            if not (rest.endswith("= ?") or _UNNAMED_DETACHED.match(rest)):
                self.unparsed += 1
            return
        self.events += 1
        if self.leader is None:
            self.leader = pid
            if self.wrapped:
                self.wrappers.add(pid)
        name, args, returned = call.group(1), split_args(call.group(2)), call.group(3)
        if pid != self.leader and pid not in self.parents and self.unborn_calls < MAX_UNBORN:
            self.unborn.setdefault(pid, []).append((name, args, returned))
            self.unborn_calls += 1
            return
        self._syscall(pid, name, args, returned)

    def flush(self) -> None:
        """Replay the calls of processes whose creation the log never showed."""
        for pid in sorted(self.unborn):
            for name, args, returned in self.unborn.pop(pid):
                self._syscall(pid, name, args, returned)

    def _born(self, pid: int) -> None:
        for name, args, returned in self.unborn.pop(pid, []):
            self._syscall(pid, name, args, returned)

    def _wrapper(self, pid: int) -> bool:
        return pid in self.wrappers

    def _exec(self, pid: int, program: str | None, argv: str) -> None:
        """A successful exec: a wrapper stays one only for the harness's own programs
        (and the confinement launcher, which mounts the run's fresh home)."""
        if pid not in self.wrappers or pid == self.leader:
            return
        name = os.path.basename(program or "")
        init = program == "/bin/sh" and self.parents.get(pid) == self.leader
        # The separation helper mounts the run's private /tmp, then execs the init.
        launcher = any(name in argv for name in _launchers()) or _separator() in argv
        if not (init or launcher or name in WRAPPER_PROGRAMS):
            self.wrappers.discard(pid)

    def _dir(self, pid: int, args: list[str], index: int | None) -> str | None:
        """The kernel's path of the directory descriptor at ``index`` (the working
        directory for None); None when strace could not name it."""
        cell = self._cell(pid)
        if index is None:
            return cell.path
        if index >= len(args):
            return None
        fd = _FD.match(args[index])
        if fd is None or fd.group(2) is None:
            return None
        path = _unescape(fd.group(2))
        if fd.group(1) == "AT_FDCWD":
            cell.path = path  # the thread's working directory, as the kernel has it
        return path

    def _spelled(
        self, pid: int, args: list[str], dir_index: int | None, path_index: int
    ) -> str | None:
        """The path argument at ``path_index`` made absolute against its directory."""
        if path_index >= len(args):
            return None
        text = _string(args[path_index])
        if text is None:
            return None
        base = self._dir(pid, args, dir_index)
        if text.startswith("/"):
            # POSIX keeps a leading "//" (normpath too); Linux reads it as "/".
            text = _PROC_ROOT.sub("", "/" + text.lstrip("/")) or "/"
            cwd = _PROC_CWD.match(text)
            if cwd is not None:
                text = self._cell(pid).path + text[cwd.end() :]
            return os.path.normpath(text)
        if base is None:
            return None
        return os.path.normpath(os.path.join(base, text)) if text else base

    def _syscall(self, pid: int, name: str, args: list[str], returned: str) -> None:
        ret = _RETURN.match(returned)
        if ret is None:
            self.unparsed += 1
            return
        if ret.group(1) == "?":
            return
        value, ret_path, errno = int(ret.group(1)), ret.group(2), ret.group(3)
        result = _result(value, errno)
        if name in _FORKS:
            if _UNTRACED in " ".join(args) and result == "ok" and not self._wrapper(pid):
                key = f"{name}({_UNTRACED})"
                self.uninterpreted[key] = self.uninterpreted.get(key, 0) + 1
            translated = _TRANSLATED.search(returned)
            if translated is not None:
                value = int(translated.group(1))  # the child's pid as the log names it
            if value > 0:
                shared = "CLONE_FS" in (args[0] if args else "")
                parent = self._cell(pid)
                self.cwd[value] = parent if shared else _Cell(parent.path)
                self.parents[value] = pid
                if self._wrapper(pid):
                    self.wrappers.add(value)
                self._born(value)
            return
        if name in _EXEC and result == "ok":
            index = 1 if name == "execveat" else 0
            self._exec(
                pid,
                _string(args[index]) if len(args) > index else None,
                args[index + 1] if len(args) > index + 1 else "",
            )
        if name in _METADATA and result == "ok" and not self._wrapper(pid):
            self._metadata(pid, name, args)
            if name in ("fchmod", "fchown", "fsetxattr", "fremovexattr"):
                return
        if name in UNINTERPRETABLE:
            if result == "ok" and not self._wrapper(pid):
                self.uninterpreted[name] = self.uninterpreted.get(name, 0) + 1
            return
        if name in ("chdir", "fchdir"):
            if result == "ok":
                target = self._spelled(pid, args, None, 0) if name == "chdir" else None
                if name == "fchdir":
                    target = self._dir(pid, args, 0)
                if target:
                    self._cell(pid).path = target
            return
        if name in _LIST:
            path = self._dir(pid, args, 0)
            if path is not None:
                self._access(path, "listed", result, writing=False, reading=True)
            elif result == "ok":
                self.uninterpreted[name] = self.uninterpreted.get(name, 0) + 1
            return
        if name in _OPEN:
            self._open(pid, name, args, result, value, ret_path)
        elif name in _EXEC:
            path = self._spelled(
                pid, args, 0 if name == "execveat" else None, 1 if name == "execveat" else 0
            )
            if path is not None:
                self._access(path, "executed", result, writing=False, reading=True, resolve=True)
        elif name in _LOOKUP:
            dir_index, path_index = _LOOKUP[name]
            text = _string(args[path_index]) if path_index < len(args) else None
            if text == "":
                return  # the descriptor itself (AT_EMPTY_PATH): nothing new is reached
            path = self._spelled(pid, args, dir_index, path_index)
            if path is not None:
                self._access(path, "looked up", result, writing=False, reading=False, resolve=True)
        elif name in ("symlink", "symlinkat", "link", "linkat"):
            self._link(pid, name, args, result)
        elif name in _CHANGE:
            paths = [self._spelled(pid, args, d, p) for d, p in _CHANGE[name]]
            for path in paths:
                if path is not None:
                    self._access(path, "changed", result, writing=True, reading=False)
            last = paths[-1]
            if result == "ok" and last is not None and name.startswith(("mkdir", "rename")):
                # Checked above first: creating inside a protected tree is the finding;
                # what the run then does with its own file is not.
                self.created.add(last)
        elif name not in _HARMLESS and result == "ok":
            self.uninterpreted[name] = self.uninterpreted.get(name, 0) + 1

    def _open(
        self,
        pid: int,
        name: str,
        args: list[str],
        result: str,
        value: int,
        ret_path: str | None,
    ) -> None:
        at = name in ("openat", "openat2")
        flags = " ".join(args[2:] if at else args[1:])
        writing = any(flag in flags for flag in _WRITE_FLAGS)
        reading = "O_WRONLY" not in flags and "O_PATH" not in flags
        operation = "looked up" if "O_PATH" in flags else "opened"
        if "O_DIRECTORY" in flags and operation == "opened":
            operation = "listed"
        if result == "ok" and value >= 0:
            if ret_path is None:
                self.uninterpreted[name] = self.uninterpreted.get(name, 0) + 1
                return
            kernel = _unescape(ret_path)
            if _NOT_A_FILE.match(kernel):
                return
            if not kernel.startswith("/"):
                # Not a path in the harness's tree (an anonymous or detached object).
                self.uninterpreted[name] = self.uninterpreted.get(name, 0) + 1
                return
            self._access(kernel, operation, result, writing=writing, reading=reading)
            if "O_CREAT" in flags:
                self.opened_create.add(kernel)
            made = "O_CREAT" in flags and ("O_EXCL" in flags or "O_TRUNC" in flags)
            if made or ("O_TRUNC" in flags and writing):
                self.created.add(kernel)
            return
        spelled = self._spelled(pid, args, 0 if at else None, 1 if at else 0)
        if spelled is not None:
            self._access(spelled, operation, result, writing=writing, reading=reading, resolve=True)

    def _metadata(self, pid: int, name: str, args: list[str]) -> None:
        """A successful metadata change: a finding when its target lies outside the
        run's own trees (the descriptor's kernel path, or the spelled path)."""
        dir_index, path_index = _METADATA[name]
        text = (
            _string(args[path_index]) if path_index is not None and path_index < len(args) else None
        )
        if path_index is None or not text:
            # fchmod(fd), or utimensat(fd, NULL, ...) / AT_EMPTY_PATH: the fd itself.
            path = self._dir(pid, args, 0) if dir_index is not None else None
        else:
            path = self._spelled(pid, args, dir_index, path_index)
        if path is None:
            self.uninterpreted[name] = self.uninterpreted.get(name, 0) + 1
            return
        if not outside_own_trees(self.protected, path):
            return
        if path in self.opened_create or self._made_here(path):
            return
        self.total_protected += 1
        key = (path, "changed", "ok")
        if key not in self.found and len(self.found) < MAX_RECORDED_ACCESSES * 4:
            self.found[key] = metadata_change(_shown(path), name)

    def _link(self, pid: int, name: str, args: list[str], result: str) -> None:
        if name == "symlink" or name == "symlinkat":
            target = _string(args[0]) if args else None
            where = (
                self._spelled(pid, args, 1, 2)
                if name == "symlinkat"
                else self._spelled(pid, args, None, 1)
            )
            if target is None or where is None:
                return
            # A relative target is resolved from the link's own directory, not the cwd.
            if not target.startswith("/"):
                target = os.path.join(os.path.dirname(where), target)
            target = os.path.normpath(_PROC_ROOT.sub("", "/" + target.lstrip("/")) or "/")
            self._access(target, "linked to", result, writing=False, reading=True, resolve=True)
            return
        source = (
            self._spelled(pid, args, 0, 1)
            if name == "linkat"
            else self._spelled(pid, args, None, 0)
        )
        if source is not None:
            self._access(source, "linked to", result, writing=False, reading=True, resolve=True)

    def _access(
        self,
        path: str,
        operation: str,
        result: str,
        *,
        writing: bool,
        reading: bool,
        resolve: bool = False,
    ) -> None:
        own_view = _PROCESS_VIEW.match(path) is not None
        if resolve and not own_view:
            # A spelled path: also what it resolves to now (a symlink in the workspace).
            real = _realpath(path)
            if real != path and self._record(real, operation, result, writing, reading):
                return
        if self._record(path, operation, result, writing, reading):
            return
        if result == "ok" and not own_view:
            self.unmatched.setdefault(path, (operation, writing, reading))

    def _record(self, path: str, operation: str, result: str, writing: bool, reading: bool) -> bool:
        root = self.protected.match(path, writing=writing, operation=operation, reading=reading)
        if root is None:
            return False
        self._found(path, operation, result, root.category, root.material, root.path)
        return True

    def _found(
        self, path: str, operation: str, result: str, category: str, material: str, root: str
    ) -> None:
        if self._made_here(path):
            return
        runtime = operation in ("looked up", "listed")
        if runtime and path in self.protected.runtime_dirs:
            return
        if operation == "looked up" and self.protected.on_the_way(path):
            return
        self.total_protected += 1
        key = (path, operation, result)
        if key not in self.found and len(self.found) < MAX_RECORDED_ACCESSES * 4:
            self.found[key] = {
                "path": _shown(path),
                "operation": operation,
                "result": result,
                "category": category,
                "material": material,
                "root": _shown(root),
            }

    def by_identity(self) -> None:
        """Every successful access no path rule matched, checked by the (device, inode)
        of what its path names now (a hard link, another mount of a protected file)."""
        if not self.protected.identities:
            return
        for path in sorted(self.unmatched):
            operation, writing, reading = self.unmatched[path]
            try:
                info = os.stat(path)
            except OSError:
                continue
            root = self.protected.by_identity(
                info, path, writing=writing, operation=operation, reading=reading
            )
            if root is not None:
                self._found(path, operation, "ok", root.category, root.material, root.path)

    def _made_here(self, path: str) -> bool:
        if not self.created:
            return False
        parts = path.split("/")
        return any("/".join(parts[:n]) in self.created for n in range(2, len(parts) + 1))


def _launchers() -> list[str]:
    """The confinement launcher's programs as an exec's argv shows them (quoted)."""
    from benchguard.harness.confine import launcher_programs

    return [f'"{path}"' for path in launcher_programs()]


def _separator() -> str:
    """The separation helper's path as an exec's argv shows it (quoted)."""
    from benchguard.harness.containment import separate_script

    return f'"{separate_script()}"'


def _realpath(path: str) -> str:
    """``path`` with the harness's symlinks resolved; itself when a link cannot be read
    (``/proc/PID/ns/*`` of another user's process)."""
    try:
        return os.path.realpath(path)
    except OSError:
        return path


def _result(value: int, errno: str | None) -> str:
    if value >= 0 or errno is None:
        return "ok"
    if errno == "ENOENT" or errno == "ENOTDIR":
        return "not-found"
    if errno in ("EACCES", "EPERM", "EROFS"):
        return "denied"
    return "error"


def _lines(log: Path, limit: int) -> Iterator[str]:
    with log.open("rb") as handle:
        read = 0
        for raw in handle:
            read += len(raw)
            if read > limit:
                return
            if not raw.endswith(b"\n"):
                # strace killed mid-line at the run's end (the sweep, a deadline): the
                # call it was printing had not returned to the agent.
                return
            yield raw.decode("utf-8", errors="surrogateescape").rstrip("\n")


def summarise_log(
    log: Path,
    protected: ProtectedSet,
    *,
    start_cwd: Path,
    limit: int = MAX_LOG_BYTES,
    wrapped: bool = False,
) -> dict[str, Any]:
    """``record["system_audit"]`` for one finished run's strace log; ``wrapped``: the
    traced command is the run's pid namespace (harness.containment), not the agent."""
    summary: dict[str, Any] = {
        "tool": "strace",
        "complete": False,
        "incomplete_reason": None,
        "events": 0,
        "protected_accesses": 0,
        "accesses": [],
        "log_bytes": 0,
        "uninterpreted_calls": {},
        "sees_denied": True,
        "unseen": list(UNSEEN),
    }
    try:
        size = log.stat().st_size
    except OSError as exc:
        summary["incomplete_reason"] = f"audit log missing ({exc.strerror or exc})"
        return summary
    summary["log_bytes"] = size
    parser = _Parser(protected, str(start_cwd), wrapped=wrapped)
    try:
        for line in _lines(log, limit):
            parser.feed(line)
    except OSError as exc:
        summary["incomplete_reason"] = f"audit log unreadable ({exc.strerror or exc})"
    parser.flush()
    parser.by_identity()
    accesses = sorted(parser.found.values(), key=lambda a: (a["path"], a["operation"], a["result"]))
    named = dict(sorted(parser.uninterpreted.items())[:_MAX_NAMED])
    summary.update(
        events=parser.events,
        protected_accesses=parser.total_protected,
        accesses=accesses[:MAX_RECORDED_ACCESSES],
        uninterpreted_calls=named,
    )
    if summary["incomplete_reason"] is None:
        if size > limit:
            summary["incomplete_reason"] = f"audit log capped at {limit} of {size} bytes"
        elif parser.events == 0:
            summary["incomplete_reason"] = "audit log holds no traced call"
        elif parser.uninterpreted:
            calls = ", ".join(f"{name} x{count}" for name, count in named.items())
            summary["incomplete_reason"] = (
                f"the agent made calls the audit cannot follow ({calls}): what they reached "
                "is unknown"
            )
        elif parser.unparsed:
            summary["incomplete_reason"] = f"{parser.unparsed} line(s) of the audit log unreadable"
        else:
            summary["complete"] = True
    return summary
