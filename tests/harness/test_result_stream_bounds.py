"""The result stream's reader on a real pipe: bounds, and a stream that never closes.

Whatever reaches the pipe, the reader ends (bounded in bytes and in time) and a stream
it could not read to its end fails closed, saying why.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from benchguard.harness.result_stream import (
    MAX_LINE_BYTES,
    MAX_LINES,
    StreamReader,
    stream_verdict,
)


def _read(data: bytes, *, keep_open: bool = False) -> StreamReader:
    read_end, write_end = os.pipe2(os.O_CLOEXEC)
    reader = StreamReader(read_end)
    reader.start()
    with os.fdopen(os.dup(write_end), "wb") as handle:
        handle.write(data)
    if not keep_open:
        os.close(write_end)
    reader.finish(grace_s=0.5)
    if keep_open:
        os.close(write_end)
    return reader


def _reason(reader: StreamReader, tmp_path: Path) -> str:
    verdict = stream_verdict(reader, exit_code=0, junit=tmp_path / "none.xml", expected=())
    assert verdict.passed is False
    return verdict.reason


def _line(n: int, **event: object) -> bytes:
    return json.dumps({"n": n, **event}).encode() + b"\n"


START = _line(0, event="start")


def test_a_stream_held_open_fails_closed(tmp_path: Path) -> None:
    """Guards against waiting forever on a pipe a process the tests started holds."""
    reason = _reason(_read(START, keep_open=True), tmp_path)
    assert "not closed in time" in reason


def test_an_over_long_line_fails_closed(tmp_path: Path) -> None:
    reason = _reason(_read(START + b"x" * (MAX_LINE_BYTES + 1) + b"\n"), tmp_path)
    assert f"over {MAX_LINE_BYTES} bytes" in reason


def test_too_many_lines_fail_closed(tmp_path: Path) -> None:
    reason = _reason(_read(START + b"\n" * (MAX_LINES + 1)), tmp_path)
    assert f"more than {MAX_LINES} lines" in reason


def test_a_line_cut_short_is_unreadable_not_a_pass(tmp_path: Path) -> None:
    reason = _reason(_read(START + b'{"n": 1, "ev'), tmp_path)
    assert "cut short" in reason


def test_an_empty_stream_says_the_plugin_never_started(tmp_path: Path) -> None:
    reason = _reason(_read(b""), tmp_path)
    assert "never started" in reason
