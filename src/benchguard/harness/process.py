"""Starting an agent process and stopping it, whole, when its time is up.

The agent runs in its own session (process group), so a timeout kills everything it
started, not just the first process: an agent that forks a shell which forks ``sleep``
must not outlive its run. Output goes to files, never pipes, so a killed agent's
partial output survives and a chatty one cannot deadlock the harness.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

# Between SIGTERM and SIGKILL: long enough for an agent to flush its transcript.
TERM_GRACE_S = 2.0


@dataclass(frozen=True)
class Exit:
    """How a process ended: its code (None when killed on timeout), and how long it ran."""

    returncode: int | None
    timed_out: bool
    duration_s: float
    start_error: str | None = None


def kill_group(process: subprocess.Popen[bytes], *, grace_s: float = TERM_GRACE_S) -> None:
    """SIGTERM the process group, then SIGKILL what is left after ``grace_s``."""
    for sig, wait_s in ((signal.SIGTERM, grace_s), (signal.SIGKILL, None)):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            break
        except PermissionError:
            process.kill()
        try:
            process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            continue
        # The leader is gone; sweep any child it left in the group.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
        break


def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_s: float,
    stdout_file: Path,
    stderr_file: Path,
) -> Exit:
    """Run ``argv`` to completion or until ``timeout_s``; output lands in the two files."""
    start = time.monotonic()
    with stdout_file.open("wb") as out, stderr_file.open("wb") as err:
        try:
            process = subprocess.Popen(
                list(argv),
                cwd=cwd,
                env=dict(env),
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
                start_new_session=True,
            )
        except OSError as exc:
            return Exit(None, False, time.monotonic() - start, f"{argv[0]}: {exc.strerror or exc}")
        try:
            code: int | None = process.wait(timeout=timeout_s)
            timed_out = False
            # A background child the agent left behind dies with its run.
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(process.pid, signal.SIGKILL)
        except subprocess.TimeoutExpired:
            kill_group(process)
            code, timed_out = None, True
    return Exit(code, timed_out, time.monotonic() - start)
