"""Closing a finished run's fanotify groups off the run's path.

Closing a fanotify group that holds marks waits in the kernel until its marks are
destroyed (an SRCU grace period per group: 8-20 ms measured on the project's 2-core
VM, two groups per run). Nothing of a run's record depends on that wait: by the time a
group is handed here its queue has been drained after the run's processes were dead,
and the summary is made. So the descriptors are closed by one daemon thread, in the
order they were handed over, while the harness goes on with the run's record.

Bounded: at most :data:`MAX_PENDING` descriptors wait; past it the caller closes its own
(and waits). A process that exits first has the kernel close what is left.
"""

from __future__ import annotations

import contextlib
import os
import queue
import threading

MAX_PENDING = 256

_pending: queue.Queue[int] = queue.Queue(maxsize=MAX_PENDING)
_lock = threading.Lock()
_thread: threading.Thread | None = None


def _closer() -> None:
    while True:
        fd = _pending.get()
        with contextlib.suppress(OSError):
            os.close(fd)
        _pending.task_done()


def close_later(fd: int) -> None:
    """Close ``fd`` (a drained fanotify group's descriptor) soon, in the background;
    at once, here, when too many wait already."""
    global _thread
    if fd < 0:
        return
    with _lock:
        if _thread is None or not _thread.is_alive():
            _thread = threading.Thread(target=_closer, name="fanotify-close", daemon=True)
            _thread.start()
    try:
        _pending.put_nowait(fd)
    except queue.Full:
        with contextlib.suppress(OSError):
            os.close(fd)


def wait_closed() -> None:
    """Return once every descriptor handed over so far is closed (for tests and for a
    harness that counts its descriptors)."""
    _pending.join()
