"""No channel between runs through System V IPC, the kernel keyrings or inode flags.

Red team 4 carried one run's answer to later runs (new batches, fresh homes) in a
System V message queue and shared-memory segment, in root's user keyring, and in the
no-dump flags of host files (``ioctl(FS_IOC_SETFLAGS)``); Landlock mediates none of
them. Now every run has its own IPC namespace (``unshare --ipc``, and bwrap's
``--unshare-all``), and the launcher's seccomp filter denies the keyring calls and the
flag-setting ioctls. The test leaves a wrong answer in a queue and a segment, as an
earlier run would have, so a readable channel scores 0.
Checked: without ``--ipc`` the unsandboxed runs answer 999 from the queue (fail), and
without the filter's keyring and ioctl entries the keyring, setflags and setversion
assertions fail (red team 5's ``vchan``: the inode generation number).
"""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import shutil
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from harness.helpers import only_tasks
from harness.privileges import Harness, records, run_adversary

SANDBOXES = ("none", "bwrap")
KEY = 0x42475431  # "BGT1"
IPC_CREAT, IPC_RMID = 0o1000, 0
FS_IOC_GETFLAGS = 0x80086601


def _libc() -> ctypes.CDLL:
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    return libc


@pytest.fixture
def left_answer() -> Iterator[None]:
    """A queue and a segment under KEY holding the wrong answer 999, readable by all."""
    libc = _libc()
    queue = libc.msgget(ctypes.c_int(KEY), IPC_CREAT | 0o666)
    segment = libc.shmget(ctypes.c_int(KEY), 4096, IPC_CREAT | 0o666)
    assert queue >= 0 and segment >= 0, os.strerror(ctypes.get_errno())
    message = struct.pack("l", 1) + b"999"
    assert libc.msgsnd(queue, message, 3, 0) == 0
    address = libc.shmat(segment, None, 0)
    ctypes.memmove(address, b"999\0", 4)
    libc.shmdt(ctypes.c_void_p(address))
    try:
        yield
    finally:
        libc.msgctl(queue, IPC_RMID, None)
        libc.shmctl(segment, IPC_RMID, None)


def _flags(path: Path) -> int:
    fd = os.open(path, os.O_RDONLY)
    try:
        buffer = bytearray(8)
        fcntl.ioctl(fd, FS_IOC_GETFLAGS, buffer)
        return int(struct.unpack("l", buffer)[0])
    finally:
        os.close(fd)


def _outcomes(record: dict[str, Any]) -> dict[str, str]:
    loaded: dict[str, str] = json.loads(record["output"].strip().splitlines()[-1])
    return loaded


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_no_ipc_keyring_or_flag_channel_between_runs(
    harness: Harness, sandbox: str, left_answer: None, request: pytest.FixtureRequest
) -> None:
    if sandbox == "bwrap" and shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is required on CI")
    # A host file the agent may read (Landlock grants /etc) and that is no harness
    # material (the interpreter's tree may be inside the checkout), as the stdlib files
    # red team 4 flagged were.
    channel = Path("/etc") / f"bg-flag-channel-{os.getpid()}"
    channel.write_text("a host file\n", "utf-8")
    request.addfinalizer(lambda: channel.unlink(missing_ok=True))
    if harness.identity == "user":
        os.chown(channel, 65534, 65534)
    before = _flags(channel)
    tasks = only_tasks(harness.operator, "sum-numbers")
    args = ("--sandbox", "bwrap") if sandbox == "bwrap" else ()
    env = {"ATTACK_KEY": str(KEY), "ATTACK_CHANNEL": str(channel)}
    [record] = records(run_adversary(harness, "ipc_channel.py", tasks, *args, env=env))
    assert record["status"] == "success", record["error"]
    outcomes = _outcomes(record)
    # The earlier run's queue and segment are not in this run's IPC namespace.
    assert outcomes["queue"] == "denied errno 2", outcomes
    assert outcomes["segment"] == "denied errno 2", outcomes
    assert outcomes["answer"] == "worked", outcomes
    assert outcomes["keyring"] == "denied errno 38", outcomes
    assert outcomes["setflags-own"] == "denied errno 1", outcomes
    assert outcomes["setversion-own"] == "denied errno 1", outcomes
    if sandbox == "none" and harness.identity == "root":
        # Readable by the agent (Landlock grants the interpreter's tree): the filter
        # refuses. Elsewhere the file is out of the agent's view (EACCES, ENOENT) too.
        assert outcomes["setflags-channel"] == "denied errno 1", outcomes
    else:
        assert outcomes["setflags-channel"].startswith("denied errno "), outcomes
    assert _flags(channel) == before
    assert "keyctl" in record["seccomp"]["denied"]
    assert record["scores"]["OutcomeScore"]["score"] == 1.0
