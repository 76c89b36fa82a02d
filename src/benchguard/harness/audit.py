"""The system audit: what the agent's whole process tree did to files, as the kernel saw it.

The transcript is what the agent chose to record. The audit does not depend on it: the
agent's command runs under ``strace -f --seccomp-bpf`` (seccomp-bpf filtering stops the
tracee only on the traced syscalls: file, process, directory listing, ``fchdir``), and
every file syscall of every descendant (children that fork, ``setsid`` or daemonize
included) is written to a log outside the agent's reach. After the run the log is read,
within a bound, and every access to the *protected set* becomes an entry of
``record["system_audit"]``; ``benchguard.detection.harness_evidence`` turns each into a
finding with its own evidence kind ("opened by the agent, system audit").

The protected set is known exactly (:class:`ProtectedSet`): the tasks directory, the
results root, the harness's installation and checkout, other runs' scratch
directories, the prior-run leftovers the home inventory found, and ``--protect``
paths. The interpreter's own trees and the directories on the harness's ``PATH`` are
protected against writes only (a planted ``.pth`` or binary would run later with the
harness's privileges).

What it sees: every path a traced syscall named (spelled as the agent spelled it, made
absolute with the process's working directory) and, for a successful open, the path
the kernel resolved (so a symlink or ``..`` trick shows its real target); the result
(ok, not found, denied). Under the sandbox a hidden path fails with "not found": that
is recorded as an attempt ("tried"). What it cannot see: reads through memory the
agent already holds (a file read before the run, a network fetch), access by a process
not descended from the agent, and, without the sandbox when the harness and agent
share a uid, an agent that kills its tracer (the run then ends with a signal).

Bounded: the log is read up to :data:`MAX_LOG_BYTES`; past it the audit is
``complete: false`` and the record reads incomplete, never clean.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchguard.errors import BadInputError
from benchguard.harness.transcript_channel import RECORD_DIR_PREFIX
from benchguard.harness.workspace import SCRATCH_PREFIX

AuditMode = Literal["strace", "none"]
AUDIT_MODES: tuple[AuditMode, ...] = ("strace", "none")
# The syscall classes that stop the tracee; everything else runs at full speed.
TRACE_SET = "%file,clone,clone3,fork,vfork,execve,execveat,getdents,getdents64,fchdir"
# The log is read up to this size; a larger log makes the audit incomplete.
MAX_LOG_BYTES = 256 << 20
# Distinct protected accesses kept on the record; the rest are counted.
MAX_RECORDED_ACCESSES = 200
# A path argument longer than this is not printed whole by strace; 4096 is PATH_MAX.
STRING_LIMIT = 4096
AUDIT_DIR_PREFIX = "bg-audit-"

_LINE = re.compile(r"^(\d+) +(.*)$")
_CALL = re.compile(r"^(\w+)\((.*)\) += (.*)$", re.DOTALL)
_STRING = re.compile(r'"((?:[^"\\]|\\.)*)"')
# A descriptor argument: AT_FDCWD or a number, with the path strace -y would add.
_FD_ARG = re.compile(r"^(AT_FDCWD|-?\d+)(?:<([^>]*)>)?")
_RETURN = re.compile(r"^(-?\d+)(?:<([^>]*)>)?(?: (E[A-Z0-9]+))?")
_ESCAPE = re.compile(r"\\(x[0-9a-fA-F]{2}|[0-7]{1,3}|.)")
_SIMPLE_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "v": "\v", "f": "\f", '"': '"', "\\": "\\"}

_OPEN = frozenset({"open", "creat", "openat", "openat2"})
_EXEC = frozenset({"execve", "execveat"})
_LIST = frozenset({"getdents", "getdents64"})
_LOOKUP = frozenset(
    {
        "stat",
        "lstat",
        "newfstatat",
        "fstatat64",
        "statx",
        "access",
        "faccessat",
        "faccessat2",
        "readlink",
        "readlinkat",
        "statfs",
        "getxattr",
        "lgetxattr",
        "listxattr",
        "llistxattr",
    }
)
_LINK = frozenset({"symlink", "symlinkat", "link", "linkat"})
_CHANGE = frozenset(
    {
        "unlink",
        "unlinkat",
        "rename",
        "renameat",
        "renameat2",
        "mkdir",
        "mkdirat",
        "rmdir",
        "chmod",
        "fchmodat",
        "chown",
        "lchown",
        "fchownat",
        "truncate",
        "utimensat",
        "utimes",
        "mknod",
        "mknodat",
        "setxattr",
        "lsetxattr",
        "removexattr",
    }
)
_FORKS = frozenset({"clone", "clone3", "fork", "vfork"})
_WRITE_FLAGS = ("O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND")
Operation = Literal["opened", "executed", "listed", "looked up", "linked to", "changed"]


class AuditUnavailable(BadInputError, RuntimeError):
    """``--audit strace`` was asked for and strace cannot trace here (bad input: the
    operator asked for a layer this machine cannot provide)."""


@dataclass(frozen=True)
class ProtectedRoot:
    """One protected path: everything at or under ``path`` (or, with ``prefix``, every
    entry of ``path`` whose name starts with ``prefix``, except ``own``)."""

    path: str
    category: str
    material: str
    writes_only: bool = False
    # Only reading counts (opening without write intent, listing, executing, linking
    # to): a leftover in the shared home may be stat'ed by `ls -la ~` or written over
    # by an honest run; reading it is what carries an earlier answer.
    reads_only: bool = False
    prefix: str | None = None
    own: str | None = None

    def covers(self, target: str) -> bool:
        if self.prefix is None:
            return target == self.path or target.startswith(self.path.rstrip("/") + "/")
        parent = self.path.rstrip("/") + "/"
        if not target.startswith(parent + self.prefix):
            return False
        entry = target[len(parent) :].split("/", 1)[0]
        return entry != self.own


@dataclass(frozen=True)
class ProtectedSet:
    roots: tuple[ProtectedRoot, ...]
    # Directories the interpreter itself looks up and lists at start (its sys.path):
    # a lookup or listing of exactly one of these is the runtime, not the agent.
    runtime_dirs: frozenset[str] = frozenset()
    # The agent's own world (its program directory, granted skills): a protected root
    # around one of these (the checkout holding examples/agents) yields to it, a
    # protected root inside one (a leftover in the home) does not.
    allowed: tuple[str, ...] = ()
    # Every root's path: most traced paths (the interpreter, /usr) are rejected at once.
    _prefixes: tuple[str, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "_prefixes", tuple(root.path for root in self.roots))

    def match(self, target: str, *, writing: bool, operation: str) -> ProtectedRoot | None:
        if not target.startswith(self._prefixes):
            return None
        for root in self.roots:
            if root.writes_only and not writing:
                continue
            if root.reads_only and (writing or operation in ("looked up", "changed")):
                continue
            if root.covers(target) and not self._yields(root, target):
                return root
        return None

    def on_the_way(self, path: str) -> bool:
        """``path`` is a parent of the agent's own world or of the runtime's: resolving
        a path (``realpath``) looks up every parent on the way, which reveals nothing."""
        prefix = path.rstrip("/") + "/"
        return any(p.startswith(prefix) for p in (*self.allowed, *self.runtime_dirs))

    def _yields(self, root: ProtectedRoot, target: str) -> bool:
        for own in self.allowed:
            inside = target == own or target.startswith(own.rstrip("/") + "/")
            if inside and (own == root.path or own.startswith(root.path.rstrip("/") + "/")):
                return True
        return False


def harness_installation() -> tuple[Path, ...]:
    """The harness's own code: the installed package and, for a checkout install, the
    checkout (the directory holding ``src/benchguard`` or ``pyproject.toml``)."""
    package = Path(__file__).resolve().parents[1]
    paths = [package]
    for candidate in package.parents:
        if (candidate / "pyproject.toml").is_file() and (candidate / "src").is_dir():
            paths.append(candidate)
            break
    return tuple(paths)


def protected_set(
    *,
    tasks_dirs: Iterable[Path],
    results_root: Path,
    own_scratch: Path,
    leftovers: Iterable[Path] = (),
    protect: Iterable[Path] = (),
    interpreter: Iterable[Path] = (),
    agent_own: Iterable[Path] = (),
) -> ProtectedSet:
    """The exact set a run's audit checks against (see the module doc)."""
    roots: list[ProtectedRoot] = []
    interpreter = tuple(p.resolve() for p in interpreter)

    def add(path: Path, category: str, material: str, **options: Any) -> None:
        text = os.path.abspath(path)
        roots.append(ProtectedRoot(text, category, material, **options))
        real = os.path.realpath(path)
        if real != text:
            roots.append(ProtectedRoot(real, category, material, **options))

    for tasks in sorted(set(tasks_dirs)):
        add(tasks, "task-definition", "the tasks directory")
    add(results_root, "results-dir", "the results root")
    for path in sorted(protect):
        add(path, "protected-path", "a path the operator protected")
    for path in sorted(set(leftovers)):
        add(path, "home-leftover", "a prior run's leftover in the agent home", reads_only=True)
    scratch_parent = os.path.realpath(own_scratch.parent)
    roots.append(
        ProtectedRoot(
            scratch_parent,
            "other-workspace",
            "another run's scratch directory",
            prefix=SCRATCH_PREFIX,
            own=own_scratch.name,
        )
    )
    for private in (AUDIT_DIR_PREFIX, RECORD_DIR_PREFIX):
        roots.append(
            ProtectedRoot(
                os.path.realpath(tempfile.gettempdir()),
                "harness-record",
                "the harness's own record of a run",
                prefix=private,
            )
        )
    for path in harness_installation():
        if any(path == tree or path.is_relative_to(tree) for tree in interpreter):
            continue
        if any(tree.is_relative_to(path) for tree in interpreter):
            # A venv inside the checkout: the checkout is protected around it, so its
            # own files (the harness's sources, docs, tests) are, and the venv is not.
            for child in sorted(path.iterdir()) if path.is_dir() else ():
                if not any(tree == child or tree.is_relative_to(child) for tree in interpreter):
                    add(child, "harness-repo", "the harness's installation or checkout")
            continue
        add(path, "harness-repo", "the harness's installation or checkout")
    for tree in interpreter:
        add(tree, "harness-install", "the interpreter the harness runs", writes_only=True)
    for entry in os.environ.get("PATH", "").split(os.pathsep):
        if entry and os.path.isabs(entry):
            add(
                Path(entry),
                "harness-install",
                "a directory on the harness's PATH",
                writes_only=True,
            )
    agent_own = tuple(agent_own)
    own = sorted({text for p in agent_own for text in (os.path.abspath(p), os.path.realpath(p))})
    # An agent script's directory is its interpreter's sys.path[0]: listed at start.
    script_dirs = {os.path.dirname(p) for p in own if os.path.isfile(p)}
    runtime = frozenset(
        {os.path.realpath(p) for p in sys.path if p and os.path.isdir(p)} | script_dirs
    )
    return ProtectedSet(tuple(roots), runtime, tuple(own))


@dataclass(frozen=True)
class AuditSettings:
    mode: AuditMode = "none"
    strace: str = "strace"
    protect: tuple[Path, ...] = ()

    @property
    def active(self) -> bool:
        return self.mode != "none"


def probe_strace() -> str:
    """strace's path, once it has traced a child with seccomp-bpf here; else raise."""
    found = shutil.which("strace")
    if found is None:
        raise AuditUnavailable(
            "the system audit needs strace, and 'strace' is not on PATH; install it "
            "(Debian/Ubuntu: apt-get install strace, or `make system-deps`), or pass --audit none"
        )
    import subprocess

    with tempfile.TemporaryDirectory(prefix="bg-audit-probe-") as scratch:
        log = Path(scratch) / "log"
        try:
            done = subprocess.run(
                [*strace_prefix(found, log), "true"], capture_output=True, timeout=20, check=False
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise AuditUnavailable(f"strace could not be started: {exc}") from None
        if done.returncode != 0 or not log.is_file() or log.stat().st_size == 0:
            detail = done.stderr.decode("utf-8", errors="replace").strip() or "no message"
            raise AuditUnavailable(
                f"strace cannot trace here ({detail}); ptrace may be forbidden (a "
                "container without CAP_SYS_PTRACE, kernel.yama.ptrace_scope=3); "
                "pass --audit none to run without the system audit"
            )
    return found


def default_mode() -> AuditMode:
    """On where strace is installed (and can trace), off elsewhere."""
    try:
        probe_strace()
    except AuditUnavailable:
        return "none"
    return "strace"


def strace_prefix(strace: str, log: Path) -> list[str]:
    """``strace ... --`` for one run, writing its log to ``log``."""
    return [
        strace,
        "-f",
        "--seccomp-bpf",
        "-qq",
        "-s",
        str(STRING_LIMIT),
        "-e",
        f"trace={TRACE_SET}",
        "-e",
        "signal=none",
        "-o",
        str(log),
        "--",
    ]


@dataclass
class _Parser:
    protected: ProtectedSet
    start_cwd: str
    cwd: dict[int, str] = field(default_factory=dict)
    # What each process's descriptors name (from its successful opens): strace's own
    # fd decoding (-y) doubles the tracing cost, so the log is decoded here instead.
    fds: dict[int, dict[int, str]] = field(default_factory=dict)
    pending: dict[int, str] = field(default_factory=dict)
    events: int = 0
    found: dict[tuple[str, str, str], dict[str, str]] = field(default_factory=dict)
    total_protected: int = 0
    # Paths this run created: what it made itself is not protected material.
    created: set[str] = field(default_factory=set)

    def feed(self, line: str) -> None:
        matched = _LINE.match(line)
        if matched is None:
            return
        pid, rest = int(matched.group(1)), matched.group(2)
        if rest.endswith("<unfinished ...>"):
            self.pending[pid] = rest[: -len("<unfinished ...>")].rstrip()
            return
        if rest.startswith("<... "):
            head = self.pending.pop(pid, None)
            closing = rest.find("resumed>")
            if head is None or closing < 0:
                return
            rest = head + rest[closing + len("resumed>") :]
        if rest.startswith(("+++", "---")):
            return
        call = _CALL.match(rest)
        if call is None:
            return
        self.events += 1
        self._syscall(pid, call.group(1), call.group(2), call.group(3))

    def _syscall(self, pid: int, name: str, args: str, returned: str) -> None:
        ret = _RETURN.match(returned)
        if ret is None:
            return
        value, ret_path, errno = int(ret.group(1)), ret.group(2), ret.group(3)
        result = _result(value, errno)
        if name in _FORKS:
            if value > 0:
                self.cwd[value] = self.cwd.get(pid, self.start_cwd)
                self.fds[value] = dict(self.fds.get(pid, {}))
            return
        cwd = self.cwd.get(pid, self.start_cwd)
        fd_arg = _FD_ARG.match(args)
        fd_path: str | None = None
        if fd_arg is not None:
            if fd_arg.group(2) is not None:
                fd_path = _unescape(fd_arg.group(2))
            elif fd_arg.group(1) == "AT_FDCWD":
                fd_path = cwd
            else:
                fd_path = self.fds.get(pid, {}).get(int(fd_arg.group(1)))
        base = fd_path if fd_path is not None else cwd
        strings = [_unescape(s) for s in _STRING.findall(args)]
        if name in ("chdir", "fchdir"):
            target = strings[0] if name == "chdir" and strings else fd_path
            if value == 0 and target:
                self.cwd[pid] = _absolute(target, cwd)
            return
        if name in _LIST:
            if fd_path is not None:
                self._access(fd_path, "listed", result, writing=False)
            return
        if not strings:
            return
        if name in _OPEN:
            writing = any(flag in args for flag in _WRITE_FLAGS)
            spelled = _absolute(strings[0], base)
            if result == "ok" and value >= 0:
                self.fds.setdefault(pid, {})[value] = _unescape(ret_path) if ret_path else spelled
            self._access(
                spelled, "opened", result, writing=writing, directory="O_DIRECTORY" in args
            )
            if "O_CREAT" in args and result == "ok":
                self.created.add(spelled)
                if ret_path:
                    self.created.add(_unescape(ret_path))
            if ret_path and result == "ok" and ret_path != spelled:
                self._access(_unescape(ret_path), "opened", result, writing=writing)
        elif name in _EXEC:
            self._access(_absolute(strings[0], base), "executed", result, writing=False)
        elif name in _LOOKUP:
            if strings[0]:
                self._access(_absolute(strings[0], base), "looked up", result, writing=False)
        elif name in _LINK:
            # The link's target is what the agent reaches through it.
            self._access(_absolute(strings[0], base), "linked to", result, writing=False)
        elif name in _CHANGE:
            paths = [_absolute(text, base) for text in strings[:2]]
            for path in paths:
                self._access(path, "changed", result, writing=True)
            if result == "ok" and name.startswith(("mkdir", "rename")):
                # Checked above first: creating inside a protected tree is the finding;
                # what the run then does with its own file is not.
                self.created.add(paths[-1])

    def _access(
        self, path: str, operation: str, result: str, *, writing: bool, directory: bool = False
    ) -> None:
        root = self.protected.match(path, writing=writing, operation=operation)
        if root is None:
            return
        if self._made_here(path):
            return
        runtime = operation in ("looked up", "listed") or (operation == "opened" and directory)
        if runtime and path in self.protected.runtime_dirs:
            return
        if operation == "looked up" and self.protected.on_the_way(path):
            return
        self.total_protected += 1
        key = (path, operation, result)
        if key not in self.found and len(self.found) < MAX_RECORDED_ACCESSES * 4:
            self.found[key] = {
                "path": path,
                "operation": operation,
                "result": result,
                "category": root.category,
                "material": root.material,
                "root": root.path,
            }

    def _made_here(self, path: str) -> bool:
        if not self.created:
            return False
        parts = path.split("/")
        return any("/".join(parts[:n]) in self.created for n in range(2, len(parts) + 1))


def _result(value: int, errno: str | None) -> str:
    if value >= 0 or errno is None:
        return "ok"
    if errno == "ENOENT" or errno == "ENOTDIR":
        return "not-found"
    if errno in ("EACCES", "EPERM", "EROFS"):
        return "denied"
    return "error"


def _absolute(path: str, base: str) -> str:
    return os.path.normpath(path if path.startswith("/") else os.path.join(base, path))


def _unescape(text: str) -> str:
    if "\\" not in text:
        return text
    raw = bytearray()
    position = 0
    for match in _ESCAPE.finditer(text):
        raw += text[position : match.start()].encode("utf-8", "surrogateescape")
        code = match.group(1)
        if code.startswith("x"):
            raw.append(int(code[1:], 16))
        elif code[0] in "01234567":
            raw.append(int(code, 8) & 0xFF)
        else:
            raw += _SIMPLE_ESCAPES.get(code, code).encode()
        position = match.end()
    raw += text[position:].encode("utf-8", "surrogateescape")
    return raw.decode("utf-8", errors="replace")


def _lines(log: Path, limit: int) -> Iterator[str]:
    with log.open("rb") as handle:
        read = 0
        for raw in handle:
            read += len(raw)
            if read > limit:
                return
            yield raw.decode("utf-8", errors="replace").rstrip("\n")


def summarise(
    log: Path, protected: ProtectedSet, *, start_cwd: Path, limit: int = MAX_LOG_BYTES
) -> dict[str, Any]:
    """``record["system_audit"]`` for one finished run's strace log."""
    summary: dict[str, Any] = {
        "tool": "strace",
        "complete": False,
        "incomplete_reason": None,
        "events": 0,
        "protected_accesses": 0,
        "accesses": [],
        "log_bytes": 0,
    }
    try:
        size = log.stat().st_size
    except OSError as exc:
        summary["incomplete_reason"] = f"audit log missing ({exc.strerror or exc})"
        return summary
    summary["log_bytes"] = size
    parser = _Parser(protected, str(start_cwd))
    try:
        for line in _lines(log, limit):
            parser.feed(line)
    except OSError as exc:
        summary["incomplete_reason"] = f"audit log unreadable ({exc.strerror or exc})"
    accesses = sorted(parser.found.values(), key=lambda a: (a["path"], a["operation"], a["result"]))
    summary.update(
        events=parser.events,
        protected_accesses=parser.total_protected,
        accesses=accesses[:MAX_RECORDED_ACCESSES],
    )
    if summary["incomplete_reason"] is None:
        if size > limit:
            summary["incomplete_reason"] = f"audit log capped at {limit} of {size} bytes"
        elif parser.events == 0:
            summary["incomplete_reason"] = "audit log holds no traced call"
        else:
            summary["complete"] = True
    return summary


@dataclass
class RunAudit:
    """One run's audit: a private log directory and the command prefix writing into it."""

    settings: AuditSettings
    directory: Path = field(init=False)

    def __post_init__(self) -> None:
        # Root-owned 0700 when the harness is root: the agent uid cannot open it; under
        # the sandbox it is not bound at all.
        self.directory = Path(tempfile.mkdtemp(prefix=AUDIT_DIR_PREFIX)).resolve()

    @property
    def log(self) -> Path:
        return self.directory / "strace.log"

    def wrap(self, argv: Sequence[str]) -> list[str]:
        return [*strace_prefix(self.settings.strace, self.log), *argv]

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)
