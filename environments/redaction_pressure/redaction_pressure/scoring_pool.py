"""Score replies in worker processes, off the trainer's event loop.

Why processes, not threads: ``regex`` times its calls in *process* CPU seconds, so a
hostile rule in one thread would drain the budget of every other scoring thread, and the
GIL would still serialise the Python parts. A worker process is single-threaded, so the
scan's CPU budget (scanner.py) counts exactly this reply's work, whatever else the
machine does, and the event loop only awaits a pipe.

Each worker serves one reply at a time. A caller waits at most :data:`WALL_BACKSTOP_S`
of wall time; past that the worker is killed and replaced, and the reply scores 0 with
an ``environment:`` error saying so and ``environment_error`` set (fail closed; the
static analysis keeps accepted replies near a second of CPU at worst, so only a machine
starved for minutes gets here). A worker that dies is replaced the same way.

Workers start lazily as ``python -m redaction_pressure.scoring_pool`` subprocesses
(never ``fork``: the trainer process has threads; and not multiprocessing's ``spawn``,
which re-imports the caller's ``__main__``, whatever that is), speaking pickled frames
over their stdin and stdout; :func:`shared_pool` is closed at interpreter exit.
"""

from __future__ import annotations

import asyncio
import atexit
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Final

from redaction_pressure.records import LabelledRecord
from redaction_pressure.reward import RewardResult, failed_result, score_reply
from redaction_pressure.scanner import EPISODE_CPU_BUDGET_S
from redaction_pressure.splits import PRIVATE_SEED_ENV

WALL_BACKSTOP_S: Final = 120.0
"""Wall-clock seconds a caller waits for one reply's score before failing it closed (an
environment error). Four times the CPU backstop: reached only when the machine starves
the worker."""

_PACKAGE_PARENT: Final = str(Path(__file__).resolve().parent.parent)
DEFAULT_WORKERS: Final = max(1, min(8, os.cpu_count() or 1))

STARTUP_TIMEOUT_S: Final = 120.0
"""Wall-clock seconds a new worker may take to import and report ready."""
_READY: Final = "ready"

BACKSTOP_ERROR: Final = "environment: scoring exceeded the wall-clock backstop"
WORKER_DIED_ERROR: Final = "environment: the scoring worker process died"


def _worker_main() -> None:
    """Serve ``(reply, records, budget_s)`` frames on stdin until it closes."""
    requests = Connection(os.dup(0), writable=False)
    results = Connection(os.dup(1), readable=False)
    # Anything else written to stdout must not corrupt the frames.
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 0)
    os.dup2(devnull, 1)
    results.send(_READY)  # imports done: the caller's backstop covers scoring only
    while True:
        try:
            reply, records, budget_s = requests.recv()
        except (EOFError, OSError):
            return
        results.send(score_reply(reply, records, budget_s=budget_s))


class _Worker:
    def __init__(self) -> None:
        # The worker imports this very package, also when it is imported from a source
        # tree rather than installed.
        # Workers get evaluation records over their pipe and never need the private
        # secret: it is not in their environment even if something set it again here.
        env = {k: v for k, v in os.environ.items() if k != PRIVATE_SEED_ENV}
        env["PYTHONPATH"] = os.pathsep.join(
            part for part in (_PACKAGE_PARENT, env.get("PYTHONPATH", "")) if part
        )
        self.process = subprocess.Popen(
            [sys.executable, "-m", "redaction_pressure.scoring_pool"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            close_fds=True,
            env=env,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        # The Connections own duplicates of the pipe ends; the file objects are closed.
        self._requests = Connection(os.dup(self.process.stdin.fileno()), readable=False)
        self._results = Connection(os.dup(self.process.stdout.fileno()), writable=False)
        self.process.stdin.close()
        self.process.stdout.close()
        try:
            ready = self._results.poll(STARTUP_TIMEOUT_S) and self._results.recv() == _READY
        except (EOFError, OSError):
            ready = False
        if not ready:
            self.kill()
            raise RuntimeError(
                f"a redaction-pressure scoring worker did not start within {STARTUP_TIMEOUT_S:g} s"
            )

    def send(self, request: object) -> None:
        self._requests.send(request)

    def poll(self, timeout_s: float) -> bool:
        return self._results.poll(timeout_s)

    def recv(self) -> RewardResult:
        result: RewardResult = self._results.recv()
        return result

    def kill(self) -> None:
        self._requests.close()
        self._results.close()
        self.process.kill()
        self.process.wait(timeout=5)


class ScoringPool:
    """Up to ``workers`` single-threaded scoring processes shared by every caller.

    :meth:`score` blocks the calling thread (safe from many threads at once);
    :meth:`score_async` runs it on a helper thread so an event loop stays free.
    """

    def __init__(
        self,
        workers: int = DEFAULT_WORKERS,
        *,
        budget_s: float = EPISODE_CPU_BUDGET_S,
        backstop_s: float = WALL_BACKSTOP_S,
    ) -> None:
        if workers < 1:
            raise ValueError(f"a scoring pool needs at least 1 worker, got {workers}")
        self.workers = workers
        self.budget_s = budget_s
        self.backstop_s = backstop_s
        self._idle: queue.LifoQueue[_Worker] = queue.LifoQueue()
        self._started = 0
        self._lock = threading.Lock()
        self._closed = False
        # One waiting thread per worker is enough: more would only queue on _idle.
        self._waiters = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="rp-score")

    def _acquire(self) -> _Worker:
        with self._lock:
            if self._closed:
                raise RuntimeError("the scoring pool is closed")
            try:
                return self._idle.get_nowait()
            except queue.Empty:
                if self._started < self.workers:
                    self._started += 1
                    start_new = True
                else:
                    start_new = False
        if start_new:
            try:
                return _Worker()
            except BaseException:
                with self._lock:
                    self._started -= 1
                raise
        return self._idle.get()

    def warm(self) -> None:
        """Start every worker now rather than on first use (a trainer may call this
        before its first step, so no rollout pays a worker's start-up)."""
        started = []
        while True:
            with self._lock:
                if self._closed or self._started >= self.workers:
                    break
                self._started += 1
            try:
                started.append(_Worker())
            except BaseException:
                with self._lock:
                    self._started -= 1
                raise
        for worker in started:
            self._idle.put(worker)

    def _retire(self, worker: _Worker) -> None:
        worker.kill()
        with self._lock:
            self._started -= 1

    def score(self, reply: str, records: Sequence[LabelledRecord]) -> RewardResult:
        """The reply's score, computed in a worker; never raises for a bad reply."""
        started = time.perf_counter()
        worker = self._acquire()
        try:
            worker.send((reply, tuple(records), self.budget_s))
            if not worker.poll(self.backstop_s):
                self._retire(worker)
                return failed_result(
                    (f"{BACKSTOP_ERROR} of {self.backstop_s:g} s; scored 0 (fail closed)",),
                    records,
                    started,
                )
            result = worker.recv()
        except (EOFError, OSError, BrokenPipeError):
            self._retire(worker)
            return failed_result((WORKER_DIED_ERROR + "; scored 0",), records, started)
        except BaseException:
            self._retire(worker)
            raise
        self._idle.put(worker)
        return result

    def submit(self, reply: str, records: Sequence[LabelledRecord]) -> Future[RewardResult]:
        return self._waiters.submit(self.score, reply, tuple(records))

    async def score_async(self, reply: str, records: Sequence[LabelledRecord]) -> RewardResult:
        return await asyncio.wrap_future(self.submit(reply, records))

    def close(self) -> None:
        with self._lock:
            self._closed = True
        self._waiters.shutdown(wait=False, cancel_futures=True)
        while True:
            try:
                worker = self._idle.get_nowait()
            except queue.Empty:
                break
            worker.kill()


_shared: ScoringPool | None = None
_shared_lock = threading.Lock()


def shared_pool() -> ScoringPool:
    """The process-wide pool the taskset scores through (created on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ScoringPool()
            atexit.register(_shared.close)
        return _shared


if __name__ == "__main__":
    _worker_main()
