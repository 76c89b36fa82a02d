"""Reading what an agent did, whatever way it recorded it.

Three adapters turn an agent's leftovers into ``(trajectory, output, errors)``:

- ``jsonl``: our protocol. The agent appends one JSON object per tool call to the file
  named by ``BENCHGUARD_TRAJECTORY``: ``{"name", "args", "result", "status"}``. The final
  answer is the agent's stdout.
- ``claude-stream-json``: Claude Code's ``--output-format stream-json`` on stdout.
- ``codex-json``: Codex's session rollout file from the run's own ``CODEX_HOME``
  (every tool call, as the model wrote it), with ``codex exec --json`` on stdout for
  the answer and for any command the session file lacks (reported as an error: the
  agent can write both, so neither is trusted to be complete).
- ``stdout``: no trajectory at all; stdout is the final output.

Nothing here raises on bad input: an unknown or corrupt line is kept as an error on the
record, and every readable line is kept, so a half-written file from a killed agent
still yields its steps (and is still scanned).

Files are read within a :class:`Bound`: past it the head and the tail are kept and the
capture is marked ``truncated``; the runner copies that mark onto the record, where the
detector reads it as an incomplete scan. Padding a transcript never makes it read
clean.
"""

from __future__ import annotations

import io
import json
import os
import shlex
import stat
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO, get_args

from benchguard.harness.agents.config import TrajectoryAdapter
from benchguard.importers import codex
from benchguard.importers.claude_code import parse_stream_json
from benchguard.importers.transcript import StepStatus, as_args, json_lines, make_step
from benchguard.records import StepWindow, step_size

STATUSES: tuple[StepStatus, ...] = get_args(StepStatus)


@dataclass(frozen=True)
class Bound:
    """How much of a file the harness keeps: its first ``head`` and last ``tail`` bytes.

    A runaway agent must not make the harness hold gigabytes, and a cheater must not
    hide a read by padding its transcript past the bound: keeping the tail as well as
    the head means a read at the very end is still scanned, and any cut marks the
    record (``Capture.truncated``), which the detector reads as an incomplete scan.
    """

    head: int
    tail: int

    @property
    def limit(self) -> int:
        return self.head + self.tail


# Transcripts (our JSONL file, Claude Code's stream-json) are split into steps, each
# scanned on its own, so they may be large.
TRANSCRIPT_BOUND = Bound(head=12 << 20, tail=4 << 20)
# A final output is one detector surface; this keeps it (with the cut notice) under the
# detector's surface cap, so a read at its end is scanned rather than skipped.
OUTPUT_BOUND = Bound(head=6 << 20, tail=1 << 20)
# An agent can swap the files it writes for a symlink (to the operator's files) or a
# FIFO (which would block the harness): neither is followed nor waited on.
_SAFE_OPEN_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


@dataclass(frozen=True)
class Capture:
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    output: str = ""
    errors: list[str] = field(default_factory=list)
    # Some captured surface was cut at its bound or could not be read whole.
    truncated: bool = False


@dataclass(frozen=True)
class BoundedText:
    """What :func:`read_bounded` kept of a file.

    ``tail`` is ``None`` when nothing was cut. ``problem`` says why the text is not the
    whole file (cut or unreadable); ``None`` when it is.
    """

    head: str
    tail: str | None = None
    problem: str | None = None

    @property
    def incomplete(self) -> bool:
        return self.problem is not None

    def lines(self) -> list[str]:
        return self.head.splitlines() + (self.tail.splitlines() if self.tail else [])

    def iter_lines(self) -> Iterator[str]:
        """The lines one at a time: 16 MiB of tiny lines never become one big list."""
        yield from io.StringIO(self.head)
        if self.tail:
            yield from io.StringIO(self.tail)

    def joined(self) -> str:
        if self.tail is None:
            return self.head
        return f"{self.head}\n[... cut by the harness ...]\n{self.tail}"


def read_bounded(
    path: Path, bound: Bound = TRANSCRIPT_BOUND, *, lines: bool = False
) -> BoundedText:
    """The file's text (UTF-8, bad bytes replaced): whole, or its head and tail.

    With ``lines`` a cut never splits a line: the partial line at each side of the cut
    is dropped. A missing file reads as empty. Symlinks, FIFOs and other non-regular
    files are not followed or read (an agent may replace its transcript with one): they
    read as empty with a problem, which marks the record incomplete.
    """
    try:
        with _open_regular(path) as (handle, size):
            if size <= bound.limit:
                data = handle.read(bound.limit + 1)
                if len(data) <= bound.limit:
                    return BoundedText(_decode(data))
                # It grew while being read (a writer outlived the agent): keep the head.
                return BoundedText(
                    _decode(_whole_lines(data[: bound.head]) if lines else data[: bound.head]),
                    "",
                    f"cut at the harness's size bound: grew past {bound.limit} bytes "
                    f"while being read; kept the first {bound.head}",
                )
            head = handle.read(bound.head)
            # One byte more than the tail: it tells whether the tail starts a line.
            handle.seek(size - bound.tail - 1)
            tail_data = handle.read(bound.tail + 1)
    except FileNotFoundError:
        return BoundedText("")
    except _NotRegular:
        return BoundedText("", problem="not a regular file; not read")
    except OSError as exc:
        return BoundedText("", problem=f"unreadable ({exc.strerror or exc})")
    if lines:
        head = _whole_lines(head)
        # The extra leading byte is the end of the line before the tail: whatever
        # precedes the first newline is a partial line.
        newline = tail_data.find(b"\n")
        tail_data = tail_data[newline + 1 :] if newline >= 0 else b""
    else:
        tail_data = tail_data[1:]
    problem = (
        f"cut at the harness's size bound: kept the first {bound.head} and the last "
        f"{bound.tail} bytes of {size}"
    )
    return BoundedText(_decode(head), _decode(tail_data), problem)


def read_tail(path: Path, chars: int) -> str:
    """About the last ``chars`` characters of a file (for an error message), never more."""
    try:
        with _open_regular(path) as (handle, size):
            # Up to four bytes per character; the first one may decode partially.
            handle.seek(max(0, size - 4 * chars))
            return _decode(handle.read(4 * chars))[-chars:]
    except _NotRegular:
        return "(not a regular file; not read)"
    except OSError as exc:
        return f"(unreadable: {exc.strerror or exc})"


class _NotRegular(Exception):
    """The path is a FIFO, a device or a directory: not read."""


@contextmanager
def _open_regular(path: Path) -> Iterator[tuple[BinaryIO, int]]:
    """``path`` open for reading, with its size at opening, when it is a regular file.

    Symlinks are not followed and FIFOs not waited on (``OSError``); any other
    non-regular file raises :class:`_NotRegular`.
    """
    fd = os.open(path, _SAFE_OPEN_FLAGS)
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise _NotRegular
        yield handle, info.st_size


def _whole_lines(data: bytes) -> bytes:
    return data[: data.rfind(b"\n") + 1]


def _decode(data: bytes) -> str:
    return data.decode("utf-8", errors="replace")


def parse_protocol_lines(lines: Iterable[str]) -> tuple[list[dict[str, Any]], list[str]]:
    """Our JSONL protocol: one ``{name, args, result, status}`` object per line.

    Steps are kept within the record's step bounds (``records.StepWindow``) as they are
    read; a cut is the last error, starting "trajectory cut".
    """
    steps, errors, _ = _parse_protocol(lines)
    return steps, errors


def _parse_protocol(lines: Iterable[str]) -> tuple[list[dict[str, Any]], list[str], bool]:
    steps: StepWindow[dict[str, Any]] = StepWindow()
    errors: list[str] = []
    for line in json_lines(lines):
        number, event = line.number, line.value
        if line.error is not None:
            errors.append(f"trajectory line {number}: {line.error}")
            continue
        if not isinstance(event, dict):
            errors.append(
                f"trajectory line {number}: expected an object, got {type(event).__name__}"
            )
            continue
        name = event.get("name")
        if not isinstance(name, str) or not name:
            errors.append(f"trajectory line {number}: 'name' must be a non-empty string")
            # Kept anyway: its args and result may still show what the agent touched.
            name = "unknown"
        status = event.get("status", "completed")
        if status not in STATUSES:
            errors.append(
                f"trajectory line {number}: status {status!r} is not one of {list(STATUSES)}"
            )
            status = "error"
        unknown = sorted(set(event) - {"name", "args", "result", "status"})
        if unknown:
            errors.append(f"trajectory line {number}: unknown keys {unknown} kept in args")
        args = as_args(event.get("args"))
        if unknown:
            args = {**args, "_unknown": {k: event[k] for k in unknown}}
        step = make_step(name, args, _as_result(event.get("result")), status)
        steps.add(step, step_size(step))
    problem = steps.problem()
    if problem is not None:
        errors.append(problem)
    return steps.steps(), errors, steps.truncated


def _as_result(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, default=str)


# Rollout files looked at in one run's CODEX_HOME: one per session, and a run is one.
MAX_ROLLOUT_FILES = 16


def capture(
    adapter: TrajectoryAdapter,
    *,
    stdout_file: Path,
    trajectory_file: Path,
    state_dirs: Mapping[str, Path] | None = None,
) -> Capture:
    """Read one finished (or killed) agent run through ``adapter``; ``state_dirs`` are
    the run's own agent-state directories (``CODEX_HOME`` for ``codex-json``)."""
    if adapter == "codex-json":
        return _capture_codex(stdout_file, (state_dirs or {}).get("CODEX_HOME"))
    if adapter == "stdout":
        stdout = read_bounded(stdout_file, OUTPUT_BOUND)
        return Capture(
            output=stdout.joined().strip(),
            errors=_problems(("stdout", stdout)),
            truncated=stdout.incomplete,
        )
    if adapter == "claude-stream-json":
        stream = read_bounded(stdout_file, TRANSCRIPT_BOUND, lines=True)
        parsed = parse_stream_json(stream.lines())
        return Capture(
            trajectory=list(parsed.trajectory),
            output=parsed.output,
            errors=_problems(("stdout", stream)) + [f"stream-json {e}" for e in parsed.errors],
            truncated=stream.incomplete,
        )
    transcript = read_bounded(trajectory_file, TRANSCRIPT_BOUND, lines=True)
    stdout = read_bounded(stdout_file, OUTPUT_BOUND)
    steps, line_errors, cut = _parse_protocol(transcript.iter_lines())
    return Capture(
        trajectory=steps,
        output=stdout.joined().strip(),
        errors=_problems(("stdout", stdout), ("trajectory file", transcript)) + line_errors,
        truncated=stdout.incomplete or transcript.incomplete or cut,
    )


def _problems(*texts: tuple[str, BoundedText]) -> list[str]:
    return [f"{name} {text.problem}" for name, text in texts if text.problem]


def _capture_codex(stdout_file: Path, codex_home: Path | None) -> Capture:
    stream = read_bounded(stdout_file, TRANSCRIPT_BOUND, lines=True)
    events = codex.parse_exec_json(stream.lines())
    problems = _problems(("stdout", stream))
    rollouts = _rollout_files(codex_home)
    if not rollouts:
        return Capture(
            trajectory=list(events.trajectory),
            output=events.output,
            errors=problems
            + ["no Codex session file in the run's CODEX_HOME; steps from codex exec --json"]
            + [f"codex exec --json {e}" for e in events.errors],
            truncated=stream.incomplete,
        )
    steps: list[dict[str, Any]] = []
    errors: list[str] = list(problems)
    output = ""
    truncated = stream.incomplete
    for path in rollouts[:MAX_ROLLOUT_FILES]:
        text = read_bounded(path, TRANSCRIPT_BOUND, lines=True)
        parsed = codex.parse_rollout(text.lines())
        steps += parsed.trajectory
        output = parsed.output or output
        errors += _problems((f"session file {path.name}", text))
        errors += [f"session file {path.name} {e}" for e in parsed.errors]
        truncated = truncated or text.incomplete
    if len(rollouts) > MAX_ROLLOUT_FILES:
        errors.append(f"{len(rollouts)} session files; read the first {MAX_ROLLOUT_FILES}")
        truncated = True
    seen = json.dumps(steps, sort_keys=True, default=str)
    missing = [step for step in events.trajectory if _spelled(_inner_command(step)) not in seen]
    if missing:
        errors.append(
            f"codex exec --json shows {len(missing)} tool call(s) the session file lacks; "
            "kept from the stream"
        )
        steps += missing
    return Capture(
        trajectory=steps, output=events.output or output, errors=errors, truncated=truncated
    )


def _rollout_files(codex_home: Path | None) -> list[Path]:
    if codex_home is None:
        return []
    sessions = codex_home / "sessions"
    try:
        return sorted(
            p for p in sessions.rglob("rollout-*.jsonl") if p.is_file() and not p.is_symlink()
        )
    except OSError:
        return []


def _inner_command(step: dict[str, Any]) -> str:
    """The command as the model wrote it: the exec stream shows ``/bin/bash -lc '...'``
    where the session file has the ``...`` alone."""
    command = step["args"].get("cmd")
    if not isinstance(command, str):
        return json.dumps(command, sort_keys=True, default=str)
    try:
        parts = shlex.split(command)
    except ValueError:
        return command
    if len(parts) == 3 and parts[1] in ("-c", "-lc"):
        return parts[2]
    return command


def _spelled(text: str) -> str:
    """``text`` as it appears inside a JSON string."""
    return json.dumps(text)[1:-1]
