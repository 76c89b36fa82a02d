"""Agents and grading boxes of one batch take turns: a box never runs while an agent does.

Why: the box runs the deliverable beside the task's hidden grading files (it imports
it into pytest), and the deliverable is the agent's code. On a shared kernel, state
tied to a file every run may read (byte-range locks on ``/usr/bin/env``, which need
no write access), its cgroup or its scheduling shows through to a process running
at the same moment. Red team 9's ``boxleak`` did exactly that at ``-j 2``: the
deliverable read the hidden tests in the box and published them as locks, and the
other run's agent, still working, read them back and scored 1.0 clean. The box's
processes are all dead when it ends (their locks go with them), so if no agent is
running while a box runs, nothing live crosses.

This is a readers-writer turn per batch: any number of agents at once, or one box
and no agent. A box that waits goes first (new agents wait behind it), so grading is
never starved by a steady stream of agents; agents in flight end by their deadline.
An agent's deadline starts once its turn is taken, so waiting costs it nothing.

What it cannot do: state that outlives the processes (the page cache: red team 9's
``boxcache`` timed reads a later run makes) is not a live channel and is not closed
here; nor are runs in other processes (a Dask cluster's other workers, a second
``benchguard run``) ordered by it.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

# How often a waiter looks at the batch's stop event.
_POLL_SECONDS = 0.2


class GradingTurns:
    """The batch's turn between running agents and a running grading box."""

    def __init__(self) -> None:
        self._changed = threading.Condition()
        self._agents = 0
        self._grading = False
        self._waiting_boxes = 0

    @contextmanager
    def agent(self, stop: threading.Event | None = None) -> Iterator[None]:
        """Held from just before an agent starts until its last process is dead."""
        with self._changed:
            while (self._grading or self._waiting_boxes) and not _stopped(stop):
                self._changed.wait(_POLL_SECONDS)
            self._agents += 1
        try:
            yield
        finally:
            with self._changed:
                self._agents -= 1
                self._changed.notify_all()

    @contextmanager
    def box(self, stop: threading.Event | None = None) -> Iterator[None]:
        """Held while one run's grading box exists and its checks run."""
        with self._changed:
            self._waiting_boxes += 1
            try:
                while (self._agents or self._grading) and not _stopped(stop):
                    self._changed.wait(_POLL_SECONDS)
            finally:
                self._waiting_boxes -= 1
            self._grading = True
        try:
            yield
        finally:
            with self._changed:
                self._grading = False
                self._changed.notify_all()


def _stopped(stop: threading.Event | None) -> bool:
    # An interrupted batch grades nothing more and starts no agent that counts: a
    # waiter stops waiting so the batch can wind down.
    return stop is not None and stop.is_set()
