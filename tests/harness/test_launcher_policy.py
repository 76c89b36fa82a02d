"""The launcher's policy arguments, read by the real launcher and enforced by the kernel.

The policy travels as ``KEY=VALUE`` arguments (no JSON, so the launcher's start-up
imports no ``re``): a path holding ``=``, a newline or a byte that is not UTF-8 must
reach the kernel intact, and anything the launcher does not understand must stop the
agent from running at all (exit 125), never be skipped.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from benchguard.harness.confine import (
    DEVICES,
    EXIT_CONFINE_FAILED,
    LAUNCHER_PREFIX,
    SYSTEM_READ,
    SYSTEM_READ_EXEC,
    Policy,
    interpreter_trees,
    launcher_argv,
    launcher_script,
)

# Writes a file in each directory it is given; prints what the kernel said for each.
WRITER = 'for d in "$@"; do if (: > "$d/out") 2>/dev/null; then echo "$d: wrote"; else echo "$d: denied"; fi; done'


def _policy(*writable: Path) -> Policy:
    read_exec = {*SYSTEM_READ_EXEC, *(str(p) for p in interpreter_trees()), str(launcher_script())}
    return Policy(
        read_exec=tuple(sorted(read_exec)),
        read=SYSTEM_READ,
        read_write=tuple(str(p) for p in writable),
        devices=DEVICES,
    )


def _run(argv: list[str]) -> subprocess.CompletedProcess[str]:
    # surrogateescape: the odd directory's name is not UTF-8.
    return subprocess.run(
        argv,
        capture_output=True,
        encoding="utf-8",
        errors="surrogateescape",
        timeout=60,
        check=False,
    )


def test_a_path_with_equals_newline_and_a_non_utf8_byte_is_granted_exactly(
    tmp_path: Path,
) -> None:
    """Guards against the argument format mangling a path: the odd directory is granted
    (the write lands), its plain sibling is not (the kernel refuses it)."""
    odd = Path(os.fsdecode(bytes(tmp_path) + b"/a=b\nc-\xff"))
    plain = tmp_path / "a"
    for folder in (odd, plain):
        folder.mkdir()
    done = _run(launcher_argv(_policy(odd), ["/bin/sh", "-c", WRITER, "sh", str(odd), str(plain)]))
    assert done.returncode == 0, done.stderr
    assert (odd / "out").exists()
    assert not (plain / "out").exists()
    assert done.stdout.endswith(f"{plain}: denied\n"), done.stdout


def test_an_entry_the_launcher_does_not_know_runs_nothing(tmp_path: Path) -> None:
    """Guards against a policy entry being skipped: an unknown key, or an entry without
    '=', refuses the agent (exit 125, the launcher's own line), which never starts."""
    marker = tmp_path / "ran"
    agent = ["/bin/sh", "-c", f": > {marker}"]
    base = launcher_argv(_policy(tmp_path), agent)
    split = base.index("--")
    for bad in ("write_all=/", "read_exec"):
        done = _run([*base[:split], bad, *base[split:]])
        assert done.returncode == EXIT_CONFINE_FAILED, (bad, done.stderr)
        assert done.stderr.startswith(LAUNCHER_PREFIX), done.stderr
        assert not marker.exists(), bad
    # The same argv without the bad entry does run the agent (the test can fail).
    assert _run(base).returncode == 0 and marker.exists()
