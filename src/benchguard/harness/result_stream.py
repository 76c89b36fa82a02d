"""Reading the grading plugin's result stream, and the verdict it gives with the JUnit report.

A pytest check in the box runs with the harness's own plugin
(:mod:`benchguard.harness.pytest_stream`), which streams each result over a pipe while
pytest runs. The JUnit report and the exit code are written by the test process at its
end, where the deliverable's code (an ``atexit`` hook, ``os._exit``) has the last word;
the stream is written as results happen, from before collection imports anything of the
workspace. A pass needs all three to agree (:func:`stream_verdict`):

- the stream's ``finish`` is present, and is its last line (a report after it is forged);
- every line carries the next sequence number and a known shape (a line another writer
  added breaks both: forged);
- at most one report per test and phase (a duplicate or a contradicting one: forged;
  a subtest's reports are as many as the test opens, and any that did not pass fails
  the test);
- every collected test reported, every phase of every test passed, every expected test
  (from the grading files, :mod:`benchguard.harness.junit`) among them;
- pytest's exit code is 0, and equals the stream's exit status (exit 0 over a failed
  session, or with no ``finish`` at all, is the process's end rewritten: forged);
- the JUnit report lists the same tests with the same pass/fail (a report that
  disagrees was rewritten: forged).

Anything else gives no credit. A verdict with ``forged`` set is also a tampering event
on the record (``grader-report-forged``). A stream the harness could not read (over a
bound, not closed in time, not UTF-8) fails closed and says so.

Bounds: :data:`MAX_STREAM_BYTES` read in all, :data:`MAX_LINE_BYTES` per line,
:data:`MAX_LINES` lines, and reading stops at the check's deadline.

What it cannot see: the deliverable is imported into the test interpreter, so it
shares the plugin's trust domain. Code that emulates the whole protocol from import
time (before any real result: it writes a plausible stream with the right sequence,
rewrites the JUnit report to agree and ends the process with exit 0) is not told apart
from pytest. docs/harness.md says what an operator can do about that.
"""

from __future__ import annotations

import contextlib
import json
import os
import select
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from _pytest.junitxml import mangle_test_address

from benchguard.harness.junit import ExpectedTest, JunitCase, read_cases, strip_params
from benchguard.harness.pytest_stream import (
    EVENT_COLLECTED,
    EVENT_FINISH,
    EVENT_REPORT,
    EVENT_START,
    FD_VARIABLE,
)

__all__ = [
    "FD_VARIABLE",
    "MAX_LINES",
    "MAX_LINE_BYTES",
    "MAX_STREAM_BYTES",
    "StreamReader",
    "StreamVerdict",
    "stream_verdict",
]

MAX_STREAM_BYTES = 8 << 20
MAX_LINE_BYTES = 16 << 10
MAX_LINES = 100_000
# After pytest has exited, how long the stream may stay open (a process the tests
# started that still holds the pipe: the harness stops waiting and fails closed).
CLOSE_GRACE_S = 5.0
POLL_MS = 100
PHASES = ("setup", "call", "teardown")
OUTCOMES = ("passed", "failed", "skipped")


@dataclass
class StreamReader:
    """Drains the read end of the pipe in a thread while pytest runs (bounded)."""

    fd: int
    data: bytearray = field(default_factory=bytearray)
    over_bound: bool = False
    closed: bool = False
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def start(self) -> None:
        self._thread = threading.Thread(target=self._drain, name="result-stream", daemon=True)
        self._thread.start()

    def _drain(self) -> None:
        # Polled, so the thread ends when told to and never reads the fd once it is
        # closed (its number may be reused by then).
        poller = select.poll()
        poller.register(self.fd, select.POLLIN)
        try:
            while not self._stop.is_set():
                if not poller.poll(POLL_MS):
                    continue
                chunk = os.read(self.fd, 1 << 16)
                if not chunk:
                    self.closed = True
                    return
                # Past the bound the rest is read and dropped, so the writer never
                # blocks on a full pipe; the stream then reads as over its bound.
                room = MAX_STREAM_BYTES - len(self.data)
                if len(chunk) > room:
                    self.over_bound = True
                self.data += chunk[: max(room, 0)]
        except OSError:
            return

    def finish(self, grace_s: float = CLOSE_GRACE_S) -> None:
        """Wait (at most ``grace_s``) for the stream's end, then stop reading."""
        if self._thread is not None:
            self._thread.join(timeout=grace_s)
            self._stop.set()
            self._thread.join()
        with contextlib.suppress(OSError):
            os.close(self.fd)


@dataclass(frozen=True)
class StreamVerdict:
    passed: bool
    reason: str
    # Why the results look forged (a tampering event), or None.
    forged: str | None = None


@dataclass
class _Parsed:
    collected: int | None = None
    finish: int | None = None
    # (nodeid, phase) -> outcome, in the order first reported.
    reports: dict[tuple[str, str], str] = field(default_factory=dict)
    # (nodeid, outcome) of each subtest report.
    subtests: list[tuple[str, str]] = field(default_factory=list)


class _Forged(Exception):
    pass


class _Unreadable(Exception):
    pass


def stream_verdict(
    reader: StreamReader,
    *,
    exit_code: int,
    junit: Any,
    expected: tuple[ExpectedTest, ...],
) -> StreamVerdict:
    """The check's verdict from the stream, pytest's exit code and its JUnit report
    (a path); never raises."""
    try:
        parsed = _parse(reader)
    except _Forged as exc:
        return _forged(str(exc))
    except _Unreadable as exc:
        return StreamVerdict(False, f"pytest's result stream could not be read: {exc}")
    if parsed.finish is None:
        if exit_code == 0:
            return _forged("pytest exited 0 but its session never finished")
        return StreamVerdict(False, f"pytest exited with code {exit_code} before its session ended")
    if exit_code == 0 and parsed.finish != 0:
        return _forged(f"pytest's session ended with status {parsed.finish}, its process with 0")
    outcomes = _test_outcomes(parsed)
    cases = read_cases(junit)
    if isinstance(cases, str):
        return StreamVerdict(False, cases)
    disagreement = _junit_disagrees(outcomes, cases)
    if disagreement is not None:
        return _forged(f"the JUnit report disagrees with the result stream: {disagreement}")
    failing = sorted(name for name, passed in outcomes.items() if not passed)
    if failing:
        shown = "; ".join(failing[:3]) + (
            f" (+{len(failing) - 3} more)" if len(failing) > 3 else ""
        )
        return StreamVerdict(
            False, f"{len(failing)} of {len(outcomes)} test(s) did not pass: {shown}"
        )
    if exit_code != 0:
        return StreamVerdict(False, f"pytest exited with code {exit_code}")
    tested = {nodeid for nodeid, phase in parsed.reports if phase != "collect"}
    if parsed.collected != len(tested):
        return StreamVerdict(
            False, f"pytest collected {parsed.collected} test(s) and reported {len(tested)}"
        )
    if not outcomes:
        return StreamVerdict(False, "pytest ran no test")
    passed = {(".".join(n[:-1]), strip_params(n[-1])) for n in map(_names, outcomes)}
    missing = [t for t in expected if (t.classname, t.name) not in passed]
    if missing:
        names = ", ".join(f"{t.classname}::{t.name}" for t in missing[:3])
        more = f" (+{len(missing) - 3} more)" if len(missing) > 3 else ""
        return StreamVerdict(False, f"expected test(s) did not run: {names}{more}")
    return StreamVerdict(
        True, f"pytest's result stream and report: {len(outcomes)} test(s) ran and passed"
    )


def _forged(why: str) -> StreamVerdict:
    return StreamVerdict(False, f"pytest's results were forged: {why}", forged=why)


def _parse(reader: StreamReader) -> _Parsed:
    if reader.over_bound:
        raise _Unreadable(f"it is over its bound of {MAX_STREAM_BYTES} bytes")
    if not reader.closed:
        raise _Unreadable("it was not closed in time (a process the tests started holds it)")
    data = bytes(reader.data)
    if not data:
        raise _Unreadable("it is empty (the harness's pytest plugin never started)")
    lines = data.split(b"\n")
    tail = lines.pop()
    if len(lines) > MAX_LINES:
        raise _Unreadable(f"it holds more than {MAX_LINES} lines")
    parsed = _Parsed()
    for index, raw in enumerate(lines):
        if len(raw) > MAX_LINE_BYTES:
            raise _Unreadable(f"line {index + 1} is over {MAX_LINE_BYTES} bytes")
        event = _event(raw, index)
        _apply(parsed, event, index)
    if tail:
        # The plugin ends every line; an unended one is a write cut short (or
        # another writer's): either way not pytest's.
        if parsed.finish is not None:
            raise _Forged("bytes after the session's finish")
        raise _Unreadable("its last line is cut short")
    return parsed


def _event(raw: bytes, index: int) -> Mapping[str, Any]:
    try:
        event = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise _Forged(f"line {index + 1} is not the plugin's ({type(exc).__name__})") from None
    if not isinstance(event, dict) or event.get("n") != index:
        raise _Forged(f"line {index + 1} is out of the plugin's sequence")
    return event


def _apply(parsed: _Parsed, event: Mapping[str, Any], index: int) -> None:
    kind = event.get("event")
    if parsed.finish is not None:
        raise _Forged(f"line {index + 1} came after the session's finish")
    if index == 0:
        if kind != EVENT_START:
            raise _Forged("the stream does not begin with the plugin's start")
        return
    if kind == EVENT_COLLECTED:
        count = event.get("count")
        if parsed.collected is not None or not _is_int(count):
            raise _Forged(f"line {index + 1}: a second or malformed collection count")
        parsed.collected = count
    elif kind == EVENT_REPORT:
        _report(parsed, event, index)
    elif kind == EVENT_FINISH:
        status = event.get("exitstatus")
        if not _is_int(status):
            raise _Forged(f"line {index + 1}: a malformed session finish")
        parsed.finish = status
    else:
        raise _Forged(f"line {index + 1} is no event of the plugin's")


def _report(parsed: _Parsed, event: Mapping[str, Any], index: int) -> None:
    nodeid, phase, outcome = event.get("nodeid"), event.get("phase"), event.get("outcome")
    if not isinstance(nodeid, str) or not nodeid or outcome not in OUTCOMES:
        raise _Forged(f"line {index + 1}: a malformed report")
    if phase == "collect":
        if parsed.collected is not None:
            raise _Forged(f"line {index + 1}: a collection report after collection")
    elif phase in PHASES:
        if parsed.collected is None:
            raise _Forged(f"line {index + 1}: a test report before collection finished")
    else:
        raise _Forged(f"line {index + 1}: a malformed report")
    if event.get("subtest") is True:
        if phase != "call":
            raise _Forged(f"line {index + 1}: a malformed subtest report")
        # A test reports as many subtests as it opens (and may open two alike): they
        # are not held to one report each, but any that did not pass fails the test.
        parsed.subtests.append((nodeid, str(outcome)))
        return
    key = (nodeid, str(phase))
    earlier = parsed.reports.get(key)
    if earlier is not None:
        word = "a duplicate" if earlier == outcome else "a contradicting"
        raise _Forged(f"{word} report for {nodeid} ({phase}): {earlier}, then {outcome}")
    parsed.reports[key] = str(outcome)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _test_outcomes(parsed: _Parsed) -> dict[str, bool]:
    """Each reported node -> whether it passed (every phase a test has, passed; a
    collection report is never a pass)."""
    phases: dict[str, dict[str, str]] = {}
    for (nodeid, phase), outcome in parsed.reports.items():
        phases.setdefault(nodeid, {})[phase] = outcome
    outcomes = {
        nodeid: all(seen.get(p) == "passed" for p in PHASES) for nodeid, seen in phases.items()
    }
    for nodeid, outcome in parsed.subtests:
        # A subtest that did not pass, or of a test with no report of its own, fails it.
        if outcome != "passed" or nodeid not in outcomes:
            outcomes[nodeid] = False
    return outcomes


def _names(nodeid: str) -> list[str]:
    """pytest's own JUnit naming of a node id (classname parts, then the name)."""
    return mangle_test_address(nodeid)


def _junit_disagrees(outcomes: dict[str, bool], cases: list[JunitCase]) -> str | None:
    """How the JUnit report's cases differ from the stream's (None: they agree)."""
    stream: dict[tuple[str, str], bool] = {}
    for nodeid, passed in outcomes.items():
        names = _names(nodeid)
        stream[(".".join(names[:-1]), names[-1])] = passed
    junit: dict[tuple[str, str], bool] = {}
    for case in cases:
        key = (case.classname, case.name)
        junit[key] = junit.get(key, True) and case.passed
    for key in sorted(set(stream) | set(junit)):
        shown = f"{key[0]}::{key[1]}"
        if key not in junit:
            return f"{shown} is missing from the report"
        if key not in stream:
            return f"{shown} is in the report but was never run"
        if junit[key] != stream[key]:
            said = "passed" if junit[key] else "did not pass"
            return f"the report says {shown} {said}, the stream says otherwise"
    return None
