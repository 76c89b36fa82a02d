"""One cgroup v2 per run: the agent's whole process tree, frozen and killed as one.

A process cannot leave a cgroup it cannot write to: moving a process needs write access
to ``cgroup.procs`` of the common ancestor, which the harness creates root-owned (the
agent runs as another uid, or under Landlock, which denies writes to ``/sys``). So,
however an agent daemonizes (``setsid``, double fork, a new process group), every
process it starts is still listed in its run's cgroup, and ``cgroup.kill`` ends them
all at once; ``cgroup.freeze`` first stops them where they stand, so none forks or
writes while the kill is delivered.

Where the hierarchy is: the v2 mount read from ``/proc/self/mountinfo`` (filesystem type
``cgroup2``), wherever it is mounted (``/sys/fs/cgroup`` on a unified host,
``/sys/fs/cgroup/unified`` on a hybrid one); never assumed. Run cgroups are created
below the harness's own v2 cgroup::

    <v2 mount>/<harness cgroup>/benchguard/h<pid>-<start>-<n>-ns<pidns>/run-<position>-<token>

``h<pid>-<start>`` names the harness process that owns the batch (pid and start time,
so a recycled pid is never mistaken for it), ``ns<pidns>`` the pid namespace those are
read in (the inode of ``/proc/self/ns/pid``). :func:`sweep_stale` removes the batch
directories whose owner is gone (a harness killed outright), after killing whatever
still lives in them. It judges only its own pid namespace's batches: another
namespace's pid cannot be looked up here, so a live harness in a container sharing
this cgroup would look gone. (A name without ``ns`` is an older harness's, judged here.)

Unavailable (no v2 mount, no write access: an unprivileged harness without delegation,
a read-only ``/sys``): :meth:`BatchCgroups.open` says why, and the run falls back to a
pid namespace (``harness.containment``), whose init takes everything with it.

A run cgroup contains; each run's CPU share (and pids limit) is ``harness.cpu_share``'s,
its memory limit ``harness.memory_limit``'s, both opened with the batch and removed with
each run.
"""

from __future__ import annotations

import contextlib
import logging
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from benchguard.harness import cpu_share, memory_limit
from benchguard.harness.cgroup_tree import child_dirs, directory_of, unescape_mount
from benchguard.harness.cpu_share import BatchShare, RunShare, ShareError
from benchguard.harness.memory_limit import BatchMemory, MemoryLimitError, RunMemory
from benchguard.harness.process import read_process

log = logging.getLogger(__name__)

PARENT_NAME = "benchguard"
BATCH_PREFIX = "h"
RUN_PREFIX = "run-"
# How long freezing, killing and emptying one cgroup may take before it is reported.
KILL_BUDGET_S = 5.0
_POLL_S = 0.005
_MOUNTINFO = Path("/proc/self/mountinfo")


class CgroupError(RuntimeError):
    """A run's cgroup could not be made, joined, frozen, killed or removed."""


def v2_mount(mountinfo: Path = _MOUNTINFO) -> tuple[Path, str] | None:
    """The cgroup v2 mount point and the hierarchy path it shows as its root; None if
    this mount namespace has no cgroup2 mount."""
    try:
        lines = mountinfo.read_text("utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in lines:
        head, sep, tail = line.partition(" - ")
        if not sep:
            continue
        fields, after = head.split(), tail.split()
        if len(fields) >= 5 and after and after[0] == "cgroup2":
            return Path(unescape_mount(fields[4])), unescape_mount(fields[3])
    return None


def cgroup_of(pid: int | str) -> str | None:
    """The v2 cgroup path of ``pid`` (``/proc/PID/cgroup``, the ``0::`` line); None when
    the process is gone or has no v2 membership."""
    try:
        text = Path(f"/proc/{pid}/cgroup").read_text("utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        if line.startswith("0::"):
            return line[3:]
    return None


def harness_cgroup_dir() -> Path | None:
    """The directory of this process's own v2 cgroup; None without a v2 hierarchy."""
    mount = v2_mount()
    own = cgroup_of("self")
    if mount is None or own is None:
        return None
    return directory_of(own, mount)


def _write(path: Path, text: str) -> None:
    with path.open("w", encoding="ascii") as handle:
        handle.write(text)


def _events(directory: Path) -> dict[str, str]:
    try:
        text = (directory / "cgroup.events").read_text("ascii")
    except OSError:
        return {}
    return dict(line.split(" ", 1) for line in text.splitlines() if " " in line)


@dataclass
class RunCgroup:
    """One run's cgroup: the path of its directory and what is done to it."""

    directory: Path
    # The hierarchy path /proc/PID/cgroup shows for a member ("/benchguard/h.../run-...").
    name: str
    killed: int = 0
    # The run's CPU share (harness/cpu_share): the v1 cgroups its first process joins;
    # None with the reason in share_unavailable when it has none.
    share: RunShare | None = None
    share_unavailable: str | None = None
    # The run's memory limit (harness/memory_limit); None with the reason in
    # memory_unavailable when it has none.
    memory: RunMemory | None = None
    memory_unavailable: str | None = None
    _ended: bool = field(default=False, init=False)

    @property
    def joins(self) -> list[Path]:
        """The cgroup v1 ``cgroup.procs`` files the run's first process writes ``0`` to
        before it execs anything (empty unless the share or the memory limit is a v1
        one)."""
        share = list(self.share.join) if self.share is not None else []
        return share + (list(self.memory.join) if self.memory is not None else [])

    @property
    def procs_file(self) -> Path:
        return self.directory / "cgroup.procs"

    def pids(self) -> list[int]:
        """The live members, sorted (empty once the cgroup is gone)."""
        try:
            text = self.procs_file.read_text("ascii")
        except OSError:
            return []
        return sorted(int(word) for word in text.split())

    def holds(self, pid: int) -> bool | None:
        """Whether ``pid`` is a member (this cgroup or one below it); None when the
        process is gone and cannot be asked."""
        found = cgroup_of(pid)
        if found is None:
            return None
        return found == self.name or found.startswith(self.name + "/")

    def populated(self) -> bool:
        return _events(self.directory).get("populated", "0") == "1"

    def end(self, *, budget_s: float = KILL_BUDGET_S) -> int:
        """Freeze, then kill every member, then wait until none is left; the number of
        members killed (0 when the run left nothing behind). Idempotent."""
        if self._ended or not self.directory.is_dir():
            return 0
        members = self.pids()
        deadline = time.monotonic() + budget_s
        try:
            if members:
                _write(self.directory / "cgroup.freeze", "1")
                # Frozen means no member runs user code: nothing forks or writes.
                while _events(self.directory).get("frozen") != "1":
                    if time.monotonic() > deadline:
                        break
                    time.sleep(_POLL_S)
            _write(self.directory / "cgroup.kill", "1")
        except OSError as exc:
            raise CgroupError(f"{self.directory}: cannot freeze and kill ({exc})") from None
        while self.populated():
            if time.monotonic() > deadline:
                raise CgroupError(
                    f"{self.directory}: processes still alive {budget_s:g}s after cgroup.kill"
                )
            time.sleep(_POLL_S)
        self._ended = True
        self.killed = len(members)
        return self.killed

    def remove(self) -> None:
        """Kill what is left and remove the directory (the kernel refuses while any
        member lives)."""
        with contextlib.suppress(CgroupError):
            self.end()
        with contextlib.suppress(OSError):
            self.directory.rmdir()
        if self.share is not None:
            # Empty now: the v2 cgroup's kill ended every process that had joined it.
            self.share.remove()
        if self.memory is not None:
            self.memory.remove()
        with _live_lock:
            _live.pop(self.directory, None)


# Every run cgroup this process made and has not removed. Process-wide on purpose:
# a SIGINT/SIGTERM (or the exit of a process that dies mid-batch) must freeze and kill
# every run still alive, from code (``end_all``) that holds no batch object, and a
# cgroup belongs to the process that made it. Nothing reads it to decide a verdict.
_live: dict[Path, RunCgroup] = {}
_live_lock = threading.Lock()


def live_runs() -> list[RunCgroup]:
    """Every run cgroup this process made and has not removed, in path order."""
    with _live_lock:
        return [_live[path] for path in sorted(_live)]


def end_all(*, budget_s: float = KILL_BUDGET_S) -> int:
    """Freeze and kill every live run cgroup of this process (an interrupted batch)."""
    total = 0
    for run in live_runs():
        try:
            total += run.end(budget_s=budget_s)
        except CgroupError as exc:
            log.warning("%s", exc)
    return total


@dataclass
class BatchCgroups:
    """The cgroups of one batch, under a directory that names the harness owning it."""

    directory: Path
    name: str
    # The per-run CPU share of this batch (harness/cpu_share), or why it has none.
    share: BatchShare | str = "not opened"
    # The per-run memory limits of this batch (harness/memory_limit), or why none.
    memory: BatchMemory | str = "not opened"

    @classmethod
    def open(cls) -> BatchCgroups | str:
        """The batch's directory (stale ones swept first); the reason it cannot be
        made otherwise."""
        own = harness_cgroup_dir()
        if own is None:
            return "no cgroup v2 hierarchy is mounted"
        parent = own / PARENT_NAME
        try:
            parent.mkdir(mode=0o755, exist_ok=True)
        except OSError as exc:
            return f"cannot create {parent} ({exc.strerror or exc})"
        sweep_stale(parent)
        me = read_process(os.getpid())
        start = me.start if me is not None else 0
        for attempt in range(1000):
            directory = parent / f"{BATCH_PREFIX}{os.getpid()}-{start}-{attempt}{_NAMESPACE_TAG}"
            try:
                directory.mkdir(mode=0o755)
            except FileExistsError:
                continue
            except OSError as exc:
                return f"cannot create {directory} ({exc.strerror or exc})"
            mount = v2_mount()
            assert mount is not None
            share = cpu_share.open_batch(own, parent, directory, _stale)
            if isinstance(share, str):
                log.info("runs share CPU per session, not per run: %s", share)
            memory = memory_limit.open_batch(own, parent, directory, _stale)
            if isinstance(memory, str):
                log.info("runs have no memory limit: %s", memory)
            return cls(directory, _hierarchy_name(directory, mount), share, memory)
        return f"{parent}: no free batch cgroup name"

    def new_run(self, label: str, memory: int | None = None) -> RunCgroup:
        """A fresh cgroup for one run, limited to ``memory`` bytes (None: no limit);
        :class:`CgroupError` if it cannot be made or its ``cgroup.procs`` cannot be
        written (the run could not join it)."""
        directory = self.directory / f"{RUN_PREFIX}{label}-{secrets.token_hex(4)}"
        try:
            directory.mkdir(mode=0o755)
        except OSError as exc:
            raise CgroupError(f"cannot create {directory} ({exc.strerror or exc})") from None
        if not os.access(directory / "cgroup.procs", os.W_OK):
            with contextlib.suppress(OSError):
                directory.rmdir()
            raise CgroupError(f"{directory / 'cgroup.procs'} is not writable")
        run = RunCgroup(directory, f"{self.name}/{directory.name}")
        if isinstance(self.share, BatchShare):
            try:
                run.share = self.share.new_run(directory)
            except ShareError as exc:
                # Never a lost run: it runs without its share, and its record says so.
                run.share_unavailable = str(exc)
                log.warning("%s", exc)
        else:
            run.share_unavailable = self.share
        if memory is None:
            run.memory_unavailable = "no memory budget was given for this run"
        elif isinstance(self.memory, BatchMemory):
            try:
                run.memory = self.memory.new_run(directory, memory)
            except MemoryLimitError as exc:
                # As the share: never a lost run; it runs unlimited and its record says so.
                run.memory_unavailable = str(exc)
                log.warning("%s", exc)
        else:
            run.memory_unavailable = self.memory
        with _live_lock:
            _live[directory] = run
        return run

    def close(self) -> None:
        """Kill and remove every run cgroup left, then the batch directory."""
        for run in [r for r in live_runs() if r.directory.parent == self.directory]:
            run.remove()
        for child in child_dirs(self.directory):
            _remove_tree(child)
        with contextlib.suppress(OSError):
            self.directory.rmdir()
        if isinstance(self.share, BatchShare):
            self.share.close()
        if isinstance(self.memory, BatchMemory):
            self.memory.close()


_process_batch: BatchCgroups | str | None = None


def process_batch() -> BatchCgroups | str:
    """One batch directory for this process's runs outside :func:`run_batch` (a cluster
    worker, a direct :func:`run_job`): opened once, removed by the next harness's sweep
    once this process is gone."""
    global _process_batch
    with _live_lock:
        if _process_batch is None:
            _process_batch = BatchCgroups.open()
        return _process_batch


def _hierarchy_name(directory: Path, mount: tuple[Path, str]) -> str:
    point, root = mount
    relative = "/" + str(directory.relative_to(point))
    return relative if root == "/" else root.rstrip("/") + relative


def _remove_tree(directory: Path) -> None:
    """Kill everything in ``directory`` and below, then remove it, deepest first."""
    for child in child_dirs(directory):
        _remove_tree(child)
    with contextlib.suppress(OSError):
        if (directory / "cgroup.procs").read_text("ascii").split():
            _write(directory / "cgroup.kill", "1")
    deadline = time.monotonic() + KILL_BUDGET_S
    while _events(directory).get("populated") == "1" and time.monotonic() < deadline:
        time.sleep(_POLL_S)
    with contextlib.suppress(OSError):
        directory.rmdir()


def _pid_namespace_tag() -> str:
    """``-ns<inode>`` of this process's pid namespace; empty where it cannot be read
    (the batch is then named, and judged, as an older harness's)."""
    try:
        return f"-ns{os.stat('/proc/self/ns/pid').st_ino}"
    except OSError:
        return ""


_NAMESPACE_TAG = _pid_namespace_tag()


def _owner_alive(name: str) -> bool:
    """Whether the harness a batch directory names (``h<pid>-<start>-<n>[-ns<pidns>]``)
    still runs; one in another pid namespace is never judged gone from here."""
    parts = name[len(BATCH_PREFIX) :].split("-")
    if len(parts) < 2 or not parts[0].isdigit() or not parts[1].isdigit():
        return True  # not ours to judge: leave it
    namespace = next((part for part in parts[2:] if part.startswith("ns")), None)
    if namespace is not None and f"-{namespace}" != _NAMESPACE_TAG:
        return True  # its pid means nothing in this namespace: leave it
    info = read_process(int(parts[0]))
    return info is not None and info.start == int(parts[1]) and not info.zombie


def _stale(directory: Path) -> bool:
    """Whether a batch directory (of any hierarchy) is this uid's and its harness gone."""
    if _owner_alive(directory.name):
        return False
    try:
        return directory.stat().st_uid == os.geteuid()
    except OSError:
        return False


def sweep_stale(parent: Path) -> int:
    """Remove the batch directories under ``parent`` that this uid owns and whose
    harness is gone, killing what still lives in them; how many were removed."""
    removed = 0
    for child in child_dirs(parent):
        if not child.name.startswith(BATCH_PREFIX) or _owner_alive(child.name):
            continue
        try:
            if child.stat().st_uid != os.geteuid():
                continue
        except OSError:
            continue
        log.warning("removing a stale run cgroup left by a harness that is gone: %s", child)
        _remove_tree(child)
        removed += 0 if child.exists() else 1
    return removed
