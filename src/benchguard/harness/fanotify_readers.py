"""Reader threads kept for the batch, so a run's observer does not start one.

``threading.Thread.start`` returns only once the new thread has run: on a loaded 2-core
machine that wait is the scheduler's, measured at up to 13 ms before a run's agent could
even be spawned (median 0.4 ms). A run's observer needs a thread for as long as the run
lasts and no longer, so a finished reader waits here for the next run's observer
instead of exiting: handing it work is a queue put, which does not wait for it to run.
Nothing of the audit depends on which thread reads: the run's agent waits on its gate
until the observer has learned the run's namespace (harness.fanotify), however late
the reader gets a core.

Bounded: one reader per observer running at once (a batch's ``-j``), and at most
:data:`MAX_IDLE` wait idle; past it a finished reader exits.
"""

from __future__ import annotations

import logging
import queue
import threading
from collections.abc import Callable

log = logging.getLogger(__name__)

MAX_IDLE = 8

_Job = tuple[Callable[[], None], threading.Event]

_lock = threading.Lock()
_idle: list[queue.SimpleQueue[_Job]] = []


def _serve(jobs: queue.SimpleQueue[_Job]) -> None:
    while True:
        work, done = jobs.get()
        try:
            work()
        except Exception:  # the job's own faults are its to record; the reader goes on
            log.exception("fanotify reader job failed")
        with _lock:
            stay = len(_idle) < MAX_IDLE
            if stay:
                _idle.append(jobs)
        # Set once the reader is idle again: the next run's observer finds it.
        done.set()
        if not stay:
            return


def run_soon(work: Callable[[], None]) -> threading.Event:
    """Run ``work`` on an idle reader (a new one when none is idle); the event is set
    once it has returned."""
    done = threading.Event()
    with _lock:
        jobs = _idle.pop() if _idle else None
    if jobs is None:
        jobs = queue.SimpleQueue()
        jobs.put((work, done))
        threading.Thread(target=_serve, args=(jobs,), name="fanotify-audit", daemon=True).start()
    else:
        jobs.put((work, done))
    return done
