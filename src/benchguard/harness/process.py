"""Starting an agent process and stopping it, whole, when its run is over.

The agent runs in its own session (process group), so a timeout kills everything it
started in that group. That is not enough: a child that calls ``setsid`` (or
double-forks) leaves the group and, unsandboxed, could keep writing into the shared
agent home during later tasks. So, on Linux:

- the harness makes itself the *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``,
  once), so an orphaned descendant is re-parented to the harness instead of init and
  stays in its process tree;
- every run's environment carries ``BENCHGUARD_RUN_TOKEN`` (random per run); after the
  agent exits or times out, every descendant of the harness whose environment carries
  that run's token is killed (read from ``/proc/<pid>/environ``), so under ``-j N`` a
  run never touches another run's processes;
- :class:`ChildBaseline` remembers the harness's own children before a batch; after
  the batch (and, with ``-j 1``, after each run) every child that appeared since, and
  everything under it, is killed: that catches an orphan that also wiped its
  environment before double-forking.

Processes are first stopped, then killed, round after round until none is left (a
stopped process cannot fork), and signalled through a pidfd checked against the start
time the process was selected with, so a recycled pid is never hit. Killed orphans
re-parented to the harness are reaped here; nothing else is waited on, so the status
of a concurrent run's agent is never stolen.

Output goes to files, never pipes, so a killed agent's partial output survives and a
chatty one cannot deadlock the harness.
"""

from __future__ import annotations

import contextlib
import ctypes
import logging
import os
import re
import secrets
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

log = logging.getLogger(__name__)

# Between SIGTERM and SIGKILL: long enough for an agent to flush its transcript.
TERM_GRACE_S = 2.0
# Every process an agent starts inherits this; its value is fresh for each run.
RUN_TOKEN_ENV = "BENCHGUARD_RUN_TOKEN"
# How long one sweep keeps stopping, killing and reaping before it gives up.
SWEEP_BUDGET_S = 5.0
_PR_SET_CHILD_SUBREAPER = 36
_PROC = Path("/proc")


@dataclass(frozen=True)
class Exit:
    """How a process ended: its code (None when killed on timeout), and how long it ran
    (from start to the end of the run-token sweep, which ``duration_s`` includes)."""

    returncode: int | None
    timed_out: bool
    duration_s: float
    start_error: str | None = None
    # Processes of this run still alive after the agent ended, killed by the token sweep
    # (the runner adds its own -j 1 orphan sweep and records the sum).
    strays_killed: int = 0
    # Why the watchdog stopped the run before it ended (its disk budget); None: it did not.
    stopped: str | None = None


# Asked while a run's process lives: a reason to stop it now, or None.
Watch = Callable[[], str | None]
# How long a watched wait sleeps between asks (the watch itself decides when it
# measures; this only bounds how late its answer is acted on).
_WATCH_STEP_S = 0.05


class Stopped(Exception):
    """The watch gave a reason to stop the run."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


def kill_group(process: subprocess.Popen[bytes], *, grace_s: float = TERM_GRACE_S) -> None:
    """SIGTERM the process group, then SIGKILL what is left after ``grace_s``."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        except PermissionError:
            process.kill()
        try:
            process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            continue
        # The leader is gone; sweep any child it left in the group.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        break


def stop_at_deadline(process: subprocess.Popen[bytes]) -> None:
    """SIGKILL the process group at once: no grace period at a run's deadline.

    A SIGTERM grace lets an agent keep working past its deadline (Claude Code answers
    SIGTERM by killing the running tool and carrying on; a script can trap it and write
    its answer), and whatever it wrote would be judged. Transcripts are written as the
    agent goes, so nothing already recorded is lost. A process that left the group is
    killed by the run-token sweep right after.
    """
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    with contextlib.suppress(OSError):
        process.kill()
    with contextlib.suppress(subprocess.TimeoutExpired):
        process.wait(timeout=TERM_GRACE_S)


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    stdout_file: Path,
    stderr_file: Path,
    trace_log: Path | None = None,
    watch: Watch | None = None,
) -> Exit:
    """Run ``argv`` to completion or until ``timeout_s``; output lands in the two files.

    When it returns, nothing the process started that still carries this run's token
    is alive (see the module doc for what can still escape).

    ``trace_log``: ``argv`` is a tracer (strace) writing that log and running the agent
    as its child. The run ends when the agent ends (the process of the log's first
    line), not the tracer, which would wait for every process the agent left behind;
    those are then killed by what names them exactly, whatever they did to their
    environment or session: the tracer.

    ``watch``: asked while the process runs (it decides how often it measures); a
    reason from it stops the run at once, as its deadline would, and is the ``stopped``
    of the result (the run's disk budget, harness.disk_budget).
    """
    if trace_log is not None:
        return _run_traced(
            argv,
            cwd=cwd,
            env=env,
            timeout_s=timeout_s,
            out=stdout_file,
            err=stderr_file,
            log=trace_log,
            watch=watch,
        )
    become_subreaper()
    token = new_run_token()
    start = time.monotonic()
    with stdout_file.open("wb") as out, stderr_file.open("wb") as err:
        process = _start(argv, cwd=cwd, env=env, token=token, stdout=out, stderr=err)
        if isinstance(process, str):
            return Exit(None, False, time.monotonic() - start, process)
        stopped: str | None = None
        try:
            code: int | None = wait_exit(process, timeout_s, watch)
            timed_out = False
            # A background child the agent left behind dies with its run.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        except subprocess.TimeoutExpired:
            stop_at_deadline(process)
            code, timed_out = None, True
        except Stopped as stop:
            stop_at_deadline(process)
            code, timed_out, stopped = None, False, stop.reason
    strays = kill_run(token)
    if strays:
        log.warning("killed %d process(es) %s left running after its run", strays, argv[0])
    return Exit(code, timed_out, time.monotonic() - start, strays_killed=strays, stopped=stopped)


def wait_exit(
    process: subprocess.Popen[bytes], timeout_s: float, watch: Watch | None = None
) -> int:
    """``process.wait(timeout=timeout_s)`` without its polling: Popen's timed wait
    sleeps in doubling steps up to 50 ms, so a run that ends at 35 ms was seen at about
    63. Here the kernel wakes us when the process exits (a pidfd turns readable), then
    it is reaped by ``wait``. Raises ``subprocess.TimeoutExpired`` like ``wait``, and
    :class:`Stopped` when ``watch`` gives a reason (asked between waits of at most
    :data:`_WATCH_STEP_S`; an exit still wakes the wait at once)."""
    try:
        fd = os.pidfd_open(process.pid)
    except OSError:  # no pidfd (or already reaped by another waiter): Popen's own wait
        return process.wait(timeout=timeout_s)
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        deadline = time.monotonic() + timeout_s
        step = _WATCH_STEP_S if watch is not None else timeout_s
        while not poller.poll(max(0.0, min(step, deadline - time.monotonic())) * 1000):
            if time.monotonic() >= deadline:
                raise subprocess.TimeoutExpired(process.args, timeout_s)
            reason = watch() if watch is not None else None
            if reason is not None:
                raise Stopped(reason)
    finally:
        os.close(fd)
    return process.wait()


def _start(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    token: str,
    stdout: IO[bytes],
    stderr: IO[bytes],
) -> subprocess.Popen[bytes] | str:
    """Start a run's process in a session of its own, carrying the run's token; the
    reason it could not start (a missing program, a bad working directory) otherwise."""
    try:
        return subprocess.Popen(
            list(argv),
            cwd=cwd,
            env={**env, RUN_TOKEN_ENV: token},
            stdin=subprocess.DEVNULL,
            stdout=stdout,
            stderr=stderr,
            start_new_session=True,
        )
    except OSError as exc:
        return f"{argv[0]}: {exc.strerror or exc}"


# How often a traced run checks whether its agent is still alive.
_POLL_S = 0.02


def _run_traced(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    out: Path,
    err: Path,
    log: Path,
    watch: Watch | None = None,
) -> Exit:
    become_subreaper()
    token = new_run_token()
    start = time.monotonic()
    deadline = start + timeout_s
    with out.open("wb") as stdout, err.open("wb") as stderr:
        tracer = _start(argv, cwd=cwd, env=env, token=token, stdout=stdout, stderr=stderr)
        if isinstance(tracer, str):
            return Exit(None, False, time.monotonic() - start, tracer)
        timed_out = False
        stopped: str | None = None
        leader: ProcessInfo | None = None
        while True:
            if tracer.poll() is not None:
                break
            if leader is None:
                leader = _traced_leader(log)
            elif _gone(leader):
                break
            if time.monotonic() > deadline:
                timed_out = True
                break
            stopped = watch() if watch is not None else None
            if stopped is not None:
                break
            time.sleep(_POLL_S)
        # Everything the tracer still traces is this run's: stop and kill it all, then
        # the tracer exits with the agent's status.
        strays = _sweep(
            lambda table: _traced_by(tracer.pid, table), SWEEP_BUDGET_S, stop_first=False
        )
        try:
            code: int | None = tracer.wait(timeout=TERM_GRACE_S + SWEEP_BUDGET_S)
        except subprocess.TimeoutExpired:
            kill_group(tracer)
            code = None
        if (timed_out or stopped is not None) and strays:
            strays -= 1  # the agent itself, killed on timeout or by the watch, is no stray
    strays += kill_run(token)
    if timed_out or stopped is not None:
        code = None
    failed = _exec_failure(log)
    if failed is not None:
        # The tracer started, the agent did not: the same "could not start" as untraced.
        return Exit(None, False, time.monotonic() - start, f"exec failed: {failed}")
    return Exit(
        code,
        timed_out,
        time.monotonic() - start,
        strays_killed=max(0, strays),
        stopped=stopped,
    )


_EXEC_FAILED = re.compile(rb"^\d+ +execve\(.*\) = -1 E[A-Z0-9]+ \((.*)\)\s*$")


def _exec_failure(log: Path) -> str | None:
    """The error of the agent's own ``execve`` when the trace's first line is a failed
    one and nothing after it succeeded; ``None`` when the agent started."""
    try:
        with log.open("rb") as handle:
            lines = [handle.readline(1 << 16) for _ in range(2)]
    except OSError:
        return None
    failed = _EXEC_FAILED.match(lines[0])
    if failed is None or lines[1]:
        return None
    return failed.group(1).decode("utf-8", errors="replace")


def _traced_leader(log: Path) -> ProcessInfo | None:
    """The agent: the process of the trace's first line (its ``execve``)."""
    try:
        with log.open("rb") as handle:
            first = handle.readline(64)
    except OSError:
        return None
    pid = first.split(b" ", 1)[0]
    if (not first.endswith(b"\n") and b" " not in first) or not pid.isdigit():
        return None
    return read_process(int(pid))


def _gone(info: ProcessInfo) -> bool:
    current = read_process(info.pid)
    return current is None or current.start != info.start or current.zombie


def _traced_by(tracer: int, table: Mapping[int, ProcessInfo]) -> list[ProcessInfo]:
    found = []
    for info in table.values():
        if info.zombie:
            continue
        try:
            status = (_PROC / str(info.pid) / "status").read_text()
        except OSError:
            continue
        for line in status.splitlines():
            if line.startswith("TracerPid:"):
                if line.split()[1] == str(tracer):
                    found.append(info)
                break
    return found


def new_run_token() -> str:
    return secrets.token_hex(16)


# --- the subreaper -----------------------------------------------------------------

_subreaper: bool | None = None
_subreaper_lock = threading.Lock()


def become_subreaper() -> bool:
    """Make this process the child subreaper (Linux only, done once); True if it is.

    Orphaned descendants then re-parent to this process, so they stay findable (and
    killable) as its descendants. The mark is not inherited across ``fork``.
    """
    global _subreaper
    with _subreaper_lock:
        if _subreaper is None:
            _subreaper = _set_child_subreaper()
            if not _subreaper:
                log.warning(
                    "cannot make the harness a child subreaper: orphaned agent processes "
                    "are found by their run token across all processes instead"
                )
        return _subreaper


def _set_child_subreaper() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


# --- the process table -------------------------------------------------------------


@dataclass(frozen=True)
class ProcessInfo:
    pid: int
    ppid: int
    # Start time in clock ticks since boot: with the pid, it names one process for good.
    start: int
    state: str

    @property
    def zombie(self) -> bool:
        return self.state in ("Z", "X")


def read_process(pid: int) -> ProcessInfo | None:
    """``/proc/<pid>/stat`` parsed; ``None`` when the process is gone or unreadable."""
    return _parse_stat(pid, _read_proc(b"/proc/%d/stat" % pid))


def _read_proc(path: bytes) -> bytes | None:
    """One small ``/proc`` file, read with plain syscalls: the process table is read
    after every run (several times per sweep), and ``pathlib`` costs 3x as much."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        return os.read(fd, 4096)
    except OSError:
        return None
    finally:
        os.close(fd)


def _parse_stat(pid: int, data: bytes | None) -> ProcessInfo | None:
    if data is None:
        return None
    # The command name is in parentheses and may itself hold spaces and parentheses.
    fields = data[data.rfind(b")") + 2 :].split()
    try:
        return ProcessInfo(pid, int(fields[1]), int(fields[19]), fields[0].decode())
    except (IndexError, ValueError):
        return None


def process_table() -> dict[int, ProcessInfo]:
    table: dict[int, ProcessInfo] = {}
    try:
        names = os.listdir(b"/proc")
    except OSError:
        return table
    for name in names:
        if name.isdigit():
            info = _parse_stat(int(name), _read_proc(b"/proc/" + name + b"/stat"))
            if info is not None:
                table[info.pid] = info
    return table


def _read_all(path: bytes) -> bytes | None:
    """A ``/proc`` file read to its end (a ``children`` list can exceed a page)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        chunks = []
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
        return b"".join(chunks)
    except OSError:
        return None
    finally:
        os.close(fd)


def own_tree() -> dict[int, ProcessInfo]:
    """This process and all its descendants, as :func:`process_table` would list them,
    read by walking each thread's ``/proc/PID/task/TID/children`` down from here: a
    handful of reads after a run instead of one per process on the machine (a shared
    host runs hundreds). The whole table where the kernel has no ``children`` files.

    Like the full table it is a snapshot; the sweeps stop what they select and list
    again until nothing is left, so a process forked meanwhile is found next round.
    A ``children`` file is read by position, so a child exiting during the read can
    hide a later one: each file is read twice, and when the two reads differ (the list
    changed under us) the whole table is listed instead.
    """
    me = os.getpid()
    table: dict[int, ProcessInfo] = {}
    pending = [me]
    while pending:
        pid = pending.pop()
        info = read_process(pid)
        if info is None or pid in table:
            continue
        table[pid] = info
        try:
            threads = os.listdir(b"/proc/%d/task" % pid)
        except OSError:
            continue
        for tid in threads:
            path = b"/proc/%d/task/%s/children" % (pid, tid)
            listed = _read_all(path)
            if listed is None:
                # No children files, or a thread gone mid-walk (its children moved to
                # a sibling thread already read): list everything.
                if not _children_files() or read_process(pid) is not None:
                    return process_table()
                continue
            if _read_all(path) != listed:
                return process_table()
            pending.extend(int(word) for word in listed.split() if int(word) not in table)
    return table


_has_children_files: bool | None = None


def _children_files() -> bool:
    """Whether this kernel has ``/proc/PID/task/TID/children`` (CONFIG_PROC_CHILDREN)."""
    global _has_children_files
    if _has_children_files is None:
        _has_children_files = os.path.exists(b"/proc/self/task/%d/children" % os.getpid())
    return _has_children_files


def descendants(roots: Iterable[int], table: Mapping[int, ProcessInfo]) -> list[ProcessInfo]:
    """Every process under ``roots`` (the roots themselves excluded), in pid order."""
    children: dict[int, list[int]] = {}
    for info in table.values():
        children.setdefault(info.ppid, []).append(info.pid)
    found: dict[int, ProcessInfo] = {}
    pending = list(roots)
    while pending:
        for pid in children.get(pending.pop(), []):
            if pid not in found:
                found[pid] = table[pid]
                pending.append(pid)
    return [found[pid] for pid in sorted(found)]


def carries_token(pid: int, token: str) -> bool:
    needle = f"\0{RUN_TOKEN_ENV}={token}\0".encode()
    try:
        environ = (_PROC / str(pid) / "environ").read_bytes()
    except OSError:
        return False
    return needle in b"\0" + environ + b"\0"


# --- sweeping ----------------------------------------------------------------------


def kill_run(token: str, *, budget_s: float = SWEEP_BUDGET_S) -> int:
    """Kill every live process carrying ``token``; how many were killed.

    With the subreaper on, only the harness's descendants are read (all orphans are
    among them); without it, every process this user can read.
    """
    me = os.getpid()

    subreaper = become_subreaper()

    def select(table: Mapping[int, ProcessInfo]) -> list[ProcessInfo]:
        pool = descendants([me], table) if subreaper else list(table.values())
        return [p for p in pool if p.pid != me and not p.zombie and carries_token(p.pid, token)]

    # With the subreaper every candidate is a descendant: only our own tree is listed.
    return _sweep(select, budget_s, table=own_tree if subreaper else process_table)


@dataclass(frozen=True)
class ChildBaseline:
    """The harness's direct children at one moment (by pid and start time).

    Any child that appears later is, while a batch runs, an agent's orphan: the
    harness's own subprocesses (agents, verification commands) are waited on before
    the sweep is called. Sweeping kills such children and everything under them.
    """

    known: frozenset[tuple[int, int]]

    @classmethod
    def now(cls) -> ChildBaseline:
        me = os.getpid()
        return cls(frozenset((p.pid, p.start) for p in process_table().values() if p.ppid == me))

    def sweep_new(self, *, budget_s: float = SWEEP_BUDGET_S) -> int:
        """Kill and reap every child that is not in the baseline; how many were killed."""
        me = os.getpid()

        def select(table: Mapping[int, ProcessInfo]) -> list[ProcessInfo]:
            roots = [
                p.pid for p in table.values() if p.ppid == me and (p.pid, p.start) not in self.known
            ]
            # Orphans that already exited are reaped by the sweep, not killed.
            for pid in roots:
                _reap_if_child(table[pid], me)
            under = descendants(roots, table)
            return [p for p in [table[pid] for pid in roots] + under if not p.zombie]

        # Every candidate is a child of ours or below one: only our own tree is listed.
        return _sweep(select, budget_s, table=own_tree)


def _sweep(
    select: Callable[[Mapping[int, ProcessInfo]], list[ProcessInfo]],
    budget_s: float,
    *,
    stop_first: bool = True,
    table: Callable[[], dict[int, ProcessInfo]] = process_table,
) -> int:
    """Stop then kill what ``select`` picks, until it picks nothing; reap our own.

    ``stop_first=False`` for traced processes: a SIGSTOP makes the tracer handle a
    group-stop of a process that is being killed, which strace reports as its own
    failure; a traced process cannot escape the tracer by forking anyway (its
    children are traced, so the next round picks them).
    """
    me = os.getpid()
    killed: dict[int, ProcessInfo] = {}
    deadline = time.monotonic() + budget_s
    list_table = table
    while True:
        listed = list_table()
        for info in killed.values():
            current = listed.get(info.pid)
            if current is not None and current.start == info.start:
                _reap_if_child(current, me)
        targets = select(listed)
        if not targets:
            break
        if time.monotonic() > deadline:
            log.warning("gave up killing %d stray process(es) after %.0fs", len(targets), budget_s)
            break
        # Stopped first, so none of them forks while the others are being killed.
        for sig in (signal.SIGSTOP, signal.SIGKILL) if stop_first else (signal.SIGKILL,):
            for info in targets:
                if _signal(info, sig) and sig == signal.SIGKILL:
                    killed.setdefault(info.pid, info)
        time.sleep(0.005)
    return len(killed)


def _reap_if_child(info: ProcessInfo, me: int) -> None:
    # Only a zombie re-parented to us, named by pid and start time: no other thread's
    # child (a concurrent run's agent) can be waited on here.
    if info.ppid == me and info.zombie:
        with contextlib.suppress(ChildProcessError, OSError):
            os.waitpid(info.pid, os.WNOHANG)


def _signal(info: ProcessInfo, sig: signal.Signals) -> bool:
    """Send ``sig`` to exactly the process ``info`` names; False if it is gone."""
    try:
        fd = os.pidfd_open(info.pid)
    except ProcessLookupError:
        return False
    except OSError:
        fd = -1  # no pidfd support: a plain kill, after the same identity check
    try:
        current = read_process(info.pid)
        if current is None or current.start != info.start:
            return False
        if fd >= 0:
            signal.pidfd_send_signal(fd, sig)
        else:
            os.kill(info.pid, sig)
        return True
    except (ProcessLookupError, PermissionError):
        return False
    finally:
        if fd >= 0:
            os.close(fd)
