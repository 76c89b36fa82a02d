"""``scan`` shows a progress line (files and MB done) on stderr when stderr is a
terminal, and never in a pipe (issue 24).

The real CLI runs in a child process; its stderr is the slave end of a real pseudo
terminal (the kernel's, from the stdlib ``pty`` module), so ``isatty`` answers as it
would for a person at a terminal. The same scan with stderr in a pipe must print
exactly what it printed before the progress line existed: nothing of it.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from .helpers import ENV, REPO, record

_SRC = str(REPO / "src")
_Terminal = tuple[int, str, bytes]
_Piped = subprocess.CompletedProcess[bytes]


def _env() -> dict[str, str]:
    # The child imports this checkout's code (not an installed copy), wide and colourless.
    path = os.pathsep.join(p for p in (_SRC, os.environ.get("PYTHONPATH", "")) if p)
    return {**os.environ, **ENV, "PYTHONPATH": path}


def _logs(tmp_path: Path) -> Path:
    """A directory of three results files, the last about 1 MB."""
    root = tmp_path / "logs"
    root.mkdir()
    for index, size in enumerate((0, 0, 1_200_000)):
        rec = record(f"task-{index}", output="x" * size)
        (root / f"run{index}.json").write_text(json.dumps([rec]), encoding="utf-8")
    return root


def _scan_on_a_terminal(*args: str) -> _Terminal:
    """``benchguard scan ARGS`` with stderr on a pty: exit code, stdout, stderr bytes."""
    master, slave = pty.openpty()
    child = subprocess.Popen(
        [sys.executable, "-m", "benchguard", "scan", *args],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
        env=_env(),
    )
    os.close(slave)
    seen = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:  # EIO: the child closed its end of the terminal
            break
        if not chunk:
            break
        seen.extend(chunk)
    os.close(master)
    assert child.stdout is not None
    stdout = child.stdout.read().decode()
    return child.wait(), stdout, bytes(seen)


@pytest.fixture(scope="module")
def both(tmp_path_factory: pytest.TempPathFactory) -> tuple[_Terminal, _Piped]:
    """The same scan once with stderr on a terminal and once with it in a pipe."""
    logs = str(_logs(tmp_path_factory.mktemp("progress")))
    piped = subprocess.run(
        [sys.executable, "-m", "benchguard", "scan", logs],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=_env(),
        check=False,
    )
    return _scan_on_a_terminal(logs), piped


def test_a_terminal_gets_files_and_mb_done(both: tuple[_Terminal, _Piped]) -> None:
    (code, stdout, stderr), _ = both
    assert code == 1, stdout  # every record reads a task file: flagged
    text = stderr.decode()
    assert "scanning: 0/3 files, 0.0/1.1 MB" in text
    assert "scanning: 3/3 files, 1.1/1.1 MB" in text
    # The line is rewritten in place and cleared at the end: stdout follows cleanly.
    assert "\r" in text and text.endswith("\r\x1b[K")
    assert "scanning" not in stdout and "3 file(s), 3 record(s)" in stdout


def test_a_pipe_never_gets_it(both: tuple[_Terminal, _Piped]) -> None:
    (_, on_terminal, _), piped = both
    assert piped.returncode == 1
    assert piped.stderr == b""
    assert b"scanning" not in piped.stdout and b"\r" not in piped.stdout
    # With stderr on a terminal, stdout (a pipe in both) holds the same table.
    assert on_terminal == piped.stdout.decode()
