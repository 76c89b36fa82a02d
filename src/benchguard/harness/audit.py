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
import shutil
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchguard.errors import BadInputError
from benchguard.harness import audit_identities
from benchguard.harness.audit_identities import Identities
from benchguard.harness.grading import BOX_PREFIX
from benchguard.harness.transcript_channel import RECORD_DIR_PREFIX
from benchguard.harness.workspace import SCRATCH_PREFIX

AuditMode = Literal["fanotify", "strace", "none"]
AUDIT_MODES: tuple[AuditMode, ...] = ("fanotify", "strace", "none")
# The syscall classes that stop the tracee; everything else runs at full speed. The
# second line: calls that make or reach a descriptor, a mount or an io_uring the log
# cannot follow; a successful one makes the audit incomplete (strace_log).
TRACE_SET = (
    "%file,clone,clone3,fork,vfork,execve,execveat,getdents,getdents64,fchdir,"
    "open_by_handle_at,pidfd_getfd,io_uring_setup,fsopen,fsmount,"
    "ptrace,process_vm_readv,process_vm_writev,"
    # Metadata changes through a descriptor (the path ones are in %file).
    "fchmod,fchown,fsetxattr,fremovexattr"
)
# The log is read up to this size; a larger log makes the audit incomplete.
MAX_LOG_BYTES = 256 << 20
# Distinct protected accesses kept on the record; the rest are counted.
MAX_RECORDED_ACCESSES = 200
# A path argument longer than this is not printed whole by strace; 4096 is PATH_MAX.
STRING_LIMIT = 4096
AUDIT_DIR_PREFIX = "bg-audit-"
# Entries walked per protected tree for its (device, inode) identities; past it the
# tree is still matched by the kernel's path of what was opened (identity_capped).
MAX_IDENTITIES = 200_000
Operation = Literal["opened", "executed", "listed", "looked up", "linked to", "changed"]


class AuditUnavailable(BadInputError, RuntimeError):
    """``--audit strace`` was asked for and strace cannot trace here (bad input: the
    operator asked for a layer this machine cannot provide)."""


# A fresh home's overlay work directory inside a run's scratch (harness.home).
OVERLAY_WORKDIR = "home-layers/work"


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
        entry, _, rest = target[len(parent) :].partition("/")
        if rest == OVERLAY_WORKDIR or rest.startswith(OVERLAY_WORKDIR + "/"):
            # An overlay's work directory is overlayfs's own bookkeeping (copy-up and
            # the clean-up at unmount, which can land after the next run started): no
            # agent sees it inside a fresh home, it holds nothing of a run, and the
            # other run's upper layer, its writes, stays protected.
            return False
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
    # (st_dev, st_ino) of every file and directory in the protected trees when the run
    # started, with its mtime and the root it belongs to: a file reached by any name (a
    # hard link, a bind mount, a detached mount tree) is matched by what it is, not how
    # it is named. The mtime guards against a freed inode number reused by a new file.
    identities: Mapping[tuple[int, int], tuple[int, ProtectedRoot]] = field(default_factory=dict)
    # Trees whose walk stopped at MAX_IDENTITIES (matched by kernel path beyond it).
    identity_capped: tuple[str, ...] = ()
    # The run's own writable trees (its scratch: workspace, tmp, agent state; its home),
    # as absolute and resolved paths: a metadata change (chmod, chown, utimes, an
    # extended attribute) outside them is a finding (OUTSIDE_METADATA), since Landlock
    # does not mediate metadata.
    own_trees: tuple[str, ...] = ()
    # What every path a root covers starts with (its path; for a prefix root, its
    # path, a slash and the prefix): most paths (the interpreter, /usr, the run's own
    # workspace) are rejected at once, and the rest are tried only against the roots
    # they can be under (fanotify asks this for every file a run opens).
    _prefixes: tuple[str, ...] = field(init=False, default=())
    # The same for the roots a read can reach (write-only ones left out: the
    # interpreter and the PATH directories, where most of a run's opens are).
    _read_prefixes: tuple[str, ...] = field(init=False, default=())

    def __post_init__(self) -> None:
        starts = tuple(
            root.path if root.prefix is None else root.path.rstrip("/") + "/" + root.prefix
            for root in self.roots
        )
        object.__setattr__(self, "_prefixes", starts)
        readable = tuple(
            start for root, start in zip(self.roots, starts, strict=True) if not root.writes_only
        )
        object.__setattr__(self, "_read_prefixes", readable)

    def by_identity(
        self,
        info: os.stat_result,
        path: str,
        *,
        writing: bool,
        operation: str,
        reading: bool | None = None,
    ) -> ProtectedRoot | None:
        """The protected root the file ``info`` describes, reached as ``path`` (the
        kernel's name for it), belongs to; path rules (writes only, reads only, the
        agent's own world) apply as for :meth:`match`."""
        known = self.identities.get((info.st_dev, info.st_ino))
        if known is None or known[0] != info.st_mtime_ns:
            return None
        root = known[1]
        if not _applies(root, writing, not writing if reading is None else reading, operation):
            return None
        return None if self._yields(root, path) else root

    def match(
        self, target: str, *, writing: bool, operation: str, reading: bool | None = None
    ) -> ProtectedRoot | None:
        """The protected root ``target`` (an absolute path) lies in, for an access that
        may write and may read (``reading`` defaults to not ``writing``; an ``O_RDWR``
        open does both, so it reads a leftover as surely as ``O_RDONLY``)."""
        if not target.startswith(self._prefixes if writing else self._read_prefixes):
            return None
        reads = not writing if reading is None else reading
        for root, start in zip(self.roots, self._prefixes, strict=True):
            if not target.startswith(start) or not _applies(root, writing, reads, operation):
                continue
            if root.covers(target) and not self._yields(root, target):
                return root
        return None

    def readable_under(self, path: str) -> bool:
        """``path`` starts like something a read of a protected root could reach (a
        cheap, generous test: a fanotify ignore mark is refused for any such path)."""
        return path.startswith(self._read_prefixes)

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


def _resolved(path: str | os.PathLike[str]) -> str:
    """``os.path.realpath(path)``, asked of the kernel when ``path`` exists: one open
    (``O_PATH``: nothing is read) and one ``readlink`` of its descriptor, where
    ``realpath`` makes an ``lstat`` per component in Python. A protected set resolves
    some thirty paths per run, on the run's path before its agent starts (about 4 ms
    of its 11-18 ms at load 6). Anything else (missing, deleted, not absolute) is
    ``os.path.realpath``'s answer."""
    try:
        fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
    except (OSError, ValueError):
        return os.path.realpath(path)
    try:
        shown = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return os.path.realpath(path)
    finally:
        os.close(fd)
    if not shown.startswith("/") or shown.endswith(" (deleted)"):
        return os.path.realpath(path)
    return shown


def _applies(root: ProtectedRoot, writing: bool, reading: bool, operation: str) -> bool:
    if root.writes_only and not writing:
        return False
    return not (root.reads_only and (not reading or operation in ("looked up", "changed")))


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
    own_trees: Iterable[Path] = (),
) -> ProtectedSet:
    """The exact set a run's audit checks against (see the module doc)."""
    roots: list[ProtectedRoot] = []
    interpreter = tuple(Path(_resolved(p)) for p in interpreter)

    def add(path: Path, category: str, material: str, **options: Any) -> None:
        text = os.path.abspath(path)
        roots.append(ProtectedRoot(text, category, material, **options))
        real = _resolved(path)
        if real != text:
            roots.append(ProtectedRoot(real, category, material, **options))

    for tasks in sorted(set(tasks_dirs)):
        add(tasks, "task-definition", "the tasks directory")
    add(results_root, "results-dir", "the results root")
    for path in sorted(protect):
        add(path, "protected-path", "a path the operator protected")
    for path in sorted(set(leftovers)):
        add(path, "home-leftover", "a prior run's leftover in the agent home", reads_only=True)
    scratch_parent = _resolved(own_scratch.parent)
    roots.append(
        ProtectedRoot(
            scratch_parent,
            "other-workspace",
            "another run's scratch directory",
            prefix=SCRATCH_PREFIX,
            own=own_scratch.name,
        )
    )
    for private, material in (
        (AUDIT_DIR_PREFIX, "the harness's own record of a run"),
        (RECORD_DIR_PREFIX, "the harness's own record of a run"),
        # Another run's grading box (built once its agent ended, while this one runs at
        # -j 2): its tests and the deliverables under grade (a red team's unconfined
        # agent rewrote a sibling's box tests).
        (BOX_PREFIX, "another run's grading box"),
    ):
        roots.append(
            ProtectedRoot(
                _resolved(tempfile.gettempdir()),
                "harness-record",
                material,
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
    own = sorted({text for p in agent_own for text in (os.path.abspath(p), _resolved(p))})
    # An agent script's directory is its interpreter's sys.path[0]: listed at start.
    script_dirs = {os.path.dirname(p) for p in own if os.path.isfile(p)}
    runtime = frozenset({_resolved(p) for p in sys.path if p and os.path.isdir(p)} | script_dirs)
    identities, capped = _identities(roots)
    trees = sorted({text for p in own_trees for text in (os.path.abspath(p), _resolved(p))})
    return ProtectedSet(
        tuple(roots),
        runtime,
        tuple(own),
        identities=identities,
        identity_capped=tuple(capped),
        own_trees=tuple(trees),
    )


def _identities(
    roots: Sequence[ProtectedRoot],
) -> tuple[Mapping[tuple[int, int], tuple[int, ProtectedRoot]], list[str]]:
    """Every walked root's identities, the first root naming one keeping it, and the
    roots whose walk was capped."""
    global _merged
    # Dynamic trees (other runs' scratch, the harness's records) and write-only ones
    # are matched by path; the material a cheater reads is walked.
    walked = [root for root in roots if root.prefix is None and not root.writes_only]
    walks = [tree_identities(root.path) for root in walked]
    capped = [root.path for root, (_, full) in zip(walked, walks, strict=True) if not full]
    founds = tuple(found for found, _ in walks)
    if (
        _merged is not None
        and _merged[0] == tuple(walked)
        and len(_merged[1]) == len(founds)
        and all(old is new for old, new in zip(_merged[1], founds, strict=True))
    ):
        return _merged[2], capped
    identities: dict[tuple[int, int], tuple[int, ProtectedRoot]] = {}
    for root, found in zip(walked, founds, strict=True):
        for key, mtime in found.items():
            identities.setdefault(key, (mtime, root))
    _merged = (tuple(walked), founds, identities)
    return identities, capped


# The audit category of a metadata change outside the run's own trees.
OUTSIDE_METADATA = "outside-metadata"
OUTSIDE_METADATA_MATERIAL = "a file outside the run's own tree (its metadata changed)"
# Where a metadata change is never the run's reach into the host: device nodes (a pty's
# mode) and the kernel's own views.
METADATA_EXEMPT = ("/dev/", "/proc/", "/sys/")


def metadata_change(shown: str, via: str, attributed_by: str | None = None) -> dict[str, str]:
    """The recorded access for a metadata change of ``shown`` (the path as displayed)
    outside the run's own trees, seen through ``via`` (a syscall name or FAN_ATTRIB)."""
    access = {
        "path": shown,
        "operation": "changed",
        "result": "ok",
        "category": OUTSIDE_METADATA,
        "material": OUTSIDE_METADATA_MATERIAL,
        "root": "/",
    }
    if attributed_by is not None:
        access["attributed_by"] = attributed_by
    access["via"] = via
    return access


def outside_own_trees(protected: ProtectedSet, path: str) -> bool:
    """``path`` (absolute, the kernel's or made absolute) lies outside every one of the
    run's own trees and is not a device node or a kernel view."""
    if not path.startswith("/") or path.startswith(METADATA_EXEMPT):
        return False
    return not any(
        path == tree or path.startswith(tree.rstrip("/") + "/") for tree in protected.own_trees
    )


def tree_identities(path: str, limit: int = MAX_IDENTITIES) -> tuple[Identities, bool]:
    """(st_dev, st_ino) -> st_mtime_ns of ``path`` and everything under it, and whether
    the walk saw it all; walked again only once the tree changed (harness.audit_identities)."""
    return audit_identities.tree_identities(path, limit)


# The merged identities of the last protected set, with the roots and walks they were
# made of: a batch's runs name the same trees, so while every walk is the same object
# (its tree unchanged: harness.audit_identities) the merge is reused too (one mapping,
# only ever read, shared by the runs' sets).
_Merged = tuple[
    tuple["ProtectedRoot", ...],
    tuple[Identities, ...],
    Mapping[tuple[int, int], tuple[int, "ProtectedRoot"]],
]
_merged: _Merged | None = None


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
    """fanotify as root, else strace where it is installed and can trace, else off."""
    from benchguard.harness.fanotify import probe_fanotify

    if probe_fanotify() is None:
        return "fanotify"
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
        # Every descriptor argument and result carries the kernel's own path for it.
        "-y",
        # The run's pid namespace: a child's pid as the log's own line prefixes name it.
        "--decode-pids=pidns",
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


def summarise(
    log: Path,
    protected: ProtectedSet,
    *,
    start_cwd: Path,
    limit: int = MAX_LOG_BYTES,
    wrapped: bool = False,
) -> dict[str, Any]:
    """``record["system_audit"]`` for one finished run's strace log (harness.strace_log)."""
    from benchguard.harness.strace_log import summarise_log

    return summarise_log(log, protected, start_cwd=start_cwd, limit=limit, wrapped=wrapped)


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
