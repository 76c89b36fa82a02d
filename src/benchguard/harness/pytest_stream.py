"""The harness's pytest plugin in the grading box: streams each result to the harness.

Loaded by the box with ``-p benchguard.harness.pytest_stream`` (never from the
workspace: plugin autoloading is off, ``--noconftest`` holds, and the copy is last on
``sys.path``). The harness passes the write end of a pipe; its number is in
:data:`FD_VARIABLE`. At ``pytest_configure`` (before collection imports any test file
or deliverable) the plugin takes the number out of the environment, marks the fd
close-on-exec (programs the tests start do not inherit it) and writes, one JSON
object per line, each with a sequence number ``n`` counting from 0:

- ``{"n": 0, "event": "start"}``;
- ``{"event": "collected", "count": N}`` once collection has finished;
- ``{"event": "report", "nodeid": ..., "phase": "setup"|"call"|"teardown"|"collect",
  "outcome": "passed"|"failed"|"skipped"}``: one per test phase as pytest reports it,
  and a collection report that did not pass (a subtest's report adds
  ``"subtest": true``: a test may have many);
- ``{"event": "finish", "exitstatus": S}``: the session's final exit status, written
  last (after every other plugin's ``pytest_sessionfinish``, so after the JUnit report),
  then the fd is closed.

The harness (:mod:`benchguard.harness.result_stream`) reads it while pytest runs and
compares it with the exit code and the JUnit report. Each line is written with one
``write`` (atomic on a pipe up to ``PIPE_BUF`` bytes), so another writer's bytes can
only add lines, never split the plugin's.

Standard library only (the box's interpreter imports nothing else of benchguard).
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
from typing import Any

import pytest

FD_VARIABLE = "BENCHGUARD_RESULT_FD"
EVENT_START = "start"
EVENT_COLLECTED = "collected"
EVENT_REPORT = "report"
EVENT_FINISH = "finish"


class _Stream:
    """The write end of the harness's pipe, or nothing (not run by the harness)."""

    def __init__(self) -> None:
        self.fd: int | None = None
        self.sequence = 0

    def open_from_environment(self) -> None:
        text = os.environ.pop(FD_VARIABLE, None)
        if text is None or not text.isdigit():
            return
        fd = int(text)
        try:
            if not stat.S_ISFIFO(os.fstat(fd).st_mode):
                return
            os.set_inheritable(fd, False)
        except OSError:
            return
        self.fd = fd

    def send(self, event: str, **fields: Any) -> None:
        if self.fd is None:
            return
        line = json.dumps({"n": self.sequence, "event": event, **fields}, sort_keys=True)
        self.sequence += 1
        try:
            os.write(self.fd, line.encode("utf-8") + b"\n")
        except OSError:
            # The harness reads a stream that stops here as incomplete (fail closed).
            self.close()

    def close(self) -> None:
        if self.fd is not None:
            fd, self.fd = self.fd, None
            with contextlib.suppress(OSError):
                os.close(fd)


_STREAM = _Stream()


def pytest_configure(config: pytest.Config) -> None:
    _STREAM.open_from_environment()
    _STREAM.send(EVENT_START)


def pytest_collectreport(report: pytest.CollectReport) -> None:
    if report.outcome != "passed":
        _STREAM.send(EVENT_REPORT, nodeid=report.nodeid, phase="collect", outcome=report.outcome)


def pytest_collection_finish(session: pytest.Session) -> None:
    _STREAM.send(EVENT_COLLECTED, count=len(session.items))


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    fields: dict[str, Any] = {}
    if getattr(report, "context", None) is not None:
        # A subtest's report (pytest's ``subtests``, unittest's ``subTest``): one more
        # call report of the same test, as many as the test opens.
        fields["subtest"] = True
    _STREAM.send(
        EVENT_REPORT, nodeid=report.nodeid, phase=report.when, outcome=report.outcome, **fields
    )


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    _STREAM.send(EVENT_FINISH, exitstatus=int(session.exitstatus))
    _STREAM.close()
