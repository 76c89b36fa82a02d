"""The transcript channel: the agent appends, the harness keeps the record.

``BENCHGUARD_TRAJECTORY`` names a FIFO, not a file. The harness opens its read end
before the agent starts and a thread drains every byte into a file in a private
directory the agent is never shown; agents that need a path keep working (``open(path,
"a")`` on a FIFO appends), and what they wrote is out of their reach the moment it is
drained:

- truncating (``: > "$BENCHGUARD_TRAJECTORY"``) or rewriting the path does nothing to
  what the harness already holds (a FIFO ignores ``O_TRUNC`` and has no offset);
- the FIFO is write-only (mode 0222) and owned by the harness, so an agent running as
  another uid (the harness is root) can neither read lines back out of it (which would
  take them from the record) nor change its mode; under the sandbox it is a bind mount
  the agent cannot remove;
- an agent with the power to replace or re-mode it anyway (same uid, no sandbox) is
  detected: after the run the path must still be the same FIFO with the same mode, or
  the record is marked ``transcript_problem: "tampered"`` and never reads clean.

What the channel cannot do: tell a forged line from a true one. An agent can append
steps it never took; the system audit, not the transcript, is the evidence of what it
really opened.
"""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import stat
import tempfile
import threading
from pathlib import Path

RECORD_DIR_PREFIX = "bg-record-"
# Write-only for everyone: the harness holds the only read end.
CHANNEL_MODE = 0o222
_CHUNK = 1 << 16
# A backstop only: close() wakes the drain thread through its own pipe at once, so a
# run never waits out a poll interval (that wait was most of the harness's per-run cost).
_WAIT_S = 1.0


class TranscriptChannel:
    """One run's channel at ``path``; :attr:`stored` is the harness's copy."""

    def __init__(self, path: Path, limit: int | None = None) -> None:
        self.path = path
        # The run's disk budget: the harness's copy lies outside the run's scratch, on
        # the host's disk, so past ``limit`` bytes the rest is read and dropped.
        self.limit = limit
        self.stored_bytes = 0
        self.overflowed = False
        self._dir = Path(tempfile.mkdtemp(prefix=RECORD_DIR_PREFIX)).resolve()
        self.stored = self._dir / "trajectory.jsonl"
        path.unlink(missing_ok=True)
        os.mkfifo(path, 0o600)
        self._read_fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        # Our own write end: the pipe never reads as closed between two agent writes.
        self._keep_fd = os.open(path, os.O_WRONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        os.chmod(path, CHANNEL_MODE)
        info = os.lstat(path)
        self._identity = (info.st_dev, info.st_ino)
        self._stop = threading.Event()
        self._wake_read, self._wake_write = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        self._thread = threading.Thread(target=self._drain, name="transcript", daemon=True)
        self._thread.start()
        self.tampered = False
        self._closed = False

    def _drain(self) -> None:
        with self.stored.open("wb") as out:
            while True:
                ready, _, _ = select.select([self._read_fd, self._wake_read], [], [], _WAIT_S)
                if self._read_fd in ready and self._copy(out):
                    continue
                if self._stop.is_set():
                    while self._copy(out):
                        pass
                    return

    def _copy(self, out: object) -> bool:
        try:
            data = os.read(self._read_fd, _CHUNK)
        except BlockingIOError:
            return False
        if not data:
            return False
        if self.limit is not None and self.stored_bytes + len(data) > self.limit:
            self.overflowed = True
            data = data[: max(0, self.limit - self.stored_bytes)]
        self.stored_bytes += len(data)
        out.write(data)  # type: ignore[attr-defined]
        return True

    def close(self) -> bool:
        """Stop draining (call after the agent's processes are gone); whether the
        channel was tampered with (replaced, or its mode changed). Idempotent: a second
        call must not close descriptor numbers another run may have reused."""
        if self._closed:
            return self.tampered
        self._closed = True
        self._stop.set()
        with contextlib.suppress(OSError):
            os.write(self._wake_write, b"\0")
        self._thread.join()
        for fd in (self._keep_fd, self._read_fd, self._wake_read, self._wake_write):
            with contextlib.suppress(OSError):
                os.close(fd)
        try:
            info = os.lstat(self.path)
        except OSError:
            self.tampered = True
            return True
        same = (info.st_dev, info.st_ino) == self._identity and stat.S_ISFIFO(info.st_mode)
        self.tampered = not same or stat.S_IMODE(info.st_mode) != CHANNEL_MODE
        return self.tampered

    def remove(self) -> None:
        shutil.rmtree(self._dir, ignore_errors=True)
