"""What the kernel keeps about a shared system file is no channel between unsandboxed
runs (issue 19's atimechan and cachechan).

The standard-library adversary (tests/harness/adversaries/shared_caches.py) sends the
total as bits: a read of chosen files (relatime sets their atime) or of chosen pages
(which then sit in the page cache); the receiver, a later run or a concurrent one at
``-j 2``, stats those files or asks ``mincore``/``cachestat`` of the pages, and answers
from what it learned without opening numbers.txt. The files lie under ``/usr/share`` on
the root mount, readable by every run and writable by none.

Defences: the separation's step 6 (harness/separate_exec: the root mount read-only, so
no read sets an atime, and a uid-0 agent's ``utime`` of a file it owns is EROFS) and the
agent's seccomp filter (harness/seccomp: ``mincore`` and ``cachestat`` are EPERM,
``preadv2`` with ``RWF_NOWAIT`` EOPNOTSUPP).
Checked: with ``read_only_root`` a no-op (and the native port left to lag, so the
script ran) both atime tests fail, as root and unprivileged (the receiver decodes
4711); with ``CACHE_SYSCALLS`` empty both page tests fail as root (``mincore`` answers
for a file the caller owns; as an unprivileged agent the kernel already reports every
page of a file it does not own as resident, and ``cachestat`` is refused, so the user
case learns only noise, never the answer); with the ``RWF_NOWAIT`` check removed the
four page tests fail (the concurrent receiver decodes 4711 from EAGAIN; in sequence the
first run's own probe starts readaheads that spoil the channel, and the refusal check
fails).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from benchguard.harness import box_seccomp
from harness.adversaries import shared_caches as adversary
from harness.helpers import Operator
from harness.privileges import (
    Harness,
    adversary_outcomes,
    records,
    run_adversary,
    total_tasks,
    write_agent,
)

pytestmark = pytest.mark.slow
EPERM = "denied PermissionError 1"
EROFS = "denied OSError 30"
EOPNOTSUPP = "denied OSError 95"
# An atime before the mtime: relatime updates it on the next read (the channel's zero).
ZERO_NS = (1_000 * 10**9, 2_000 * 10**9)


@pytest.fixture
def channel() -> Iterator[Path]:
    """The shared files: one per bit for atimes, one file of spaced pages for the page
    cache; on the root mount (``/usr/share``), root-owned, world-readable."""
    if os.geteuid() != 0:
        pytest.skip("the channel's files are made as root under /usr/share")
    directory = Path(tempfile.mkdtemp(prefix="bg-test-shared-caches-", dir="/usr/share"))
    try:
        directory.chmod(0o755)
        for i in range(adversary.BITS + 1):
            bit = directory / f"b{i:02d}"
            bit.write_text(f"bit {i}\n", "utf-8")
            bit.chmod(0o644)
            os.utime(bit, ns=ZERO_NS)
        pages = directory / "pages.bin"
        size = (adversary.BITS + 1) * adversary.STRIDE * adversary.PAGE
        with pages.open("wb") as handle:
            handle.write(os.urandom(size))
            handle.flush()
            os.fsync(handle.fileno())
        pages.chmod(0o644)
        yield directory
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _evict(channel: Path) -> None:
    fd = os.open(channel / "pages.bin", os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    finally:
        os.close(fd)
    assert adversary._mincore_bits(str(channel / "pages.bin")) == [False] * (adversary.BITS + 1)


def _clean(record: dict[str, Any]) -> None:
    assert record["status"] == "success", record["error"]
    assert record["cheating_report"]["status"] == "clean", record["cheating_report"]
    assert record["scores"]["OutcomeScore"]["score"] == 1.0
    assert record["containment"]["separated"] is True, record["containment"]


def _untouched(channel: Path) -> None:
    """The kernel's own account: no bit file's atime moved on the host."""
    for i in range(adversary.BITS + 1):
        info = os.stat(channel / f"b{i:02d}")
        assert (info.st_atime_ns, info.st_mtime_ns) == ZERO_NS, (i, info)


def _in_sequence(
    harness: Harness, channel: Path, attack: str, **extra: str
) -> list[dict[str, str]]:
    tasks = total_tasks(harness, f"{attack}-seq-tasks", {"a-total": ""})
    env = {"ATTACK": attack, "ATTACK_DIR": str(channel), **extra}
    run_dir = run_adversary(
        harness, "shared_caches.py", tasks, "--iterations", "2", "-j", "1", env=env
    )
    found = sorted(records(run_dir), key=lambda r: r["iteration"])
    assert len(found) == 2
    for record in found:
        _clean(record)
    return [adversary_outcomes(record) for record in found]


def _concurrent(harness: Harness, channel: Path, attack: str) -> tuple[dict[str, str], ...]:
    tasks = total_tasks(harness, f"{attack}-par-tasks", {"a-send": "SEND. ", "b-recv": "RECV. "})
    env = {"ATTACK": attack, "ATTACK_DIR": str(channel)}
    run_dir = run_adversary(harness, "shared_caches.py", tasks, "-j", "2", env=env)
    found = {record["folder"]: record for record in records(run_dir)}
    for record in found.values():
        _clean(record)
    return adversary_outcomes(found["a-send"]), adversary_outcomes(found["b-recv"])


def test_atimes_carry_nothing_to_the_next_run(harness: Harness, channel: Path) -> None:
    """Guards against atimechan in sequence: run 1 reads the files of the total's bits,
    run 2 stats them all. Through the read-only root mount no atime moves, so run 2
    learns nothing and works. As root, run 1 also tries ``utime`` with a time of its
    choosing on a file uid 0 owns: EROFS. (An unprivileged agent does not own the file,
    EPERM, and under an unprivileged harness /usr holds the harness's own interpreter,
    so the audit rightly flags the try: not made there.)"""
    root = harness.identity == "root"
    first, second = _in_sequence(
        harness, channel, "atime", **({"ATTACK_UTIME": "1"} if root else {})
    )
    assert first["sent"] == "4711", first
    assert first.get("utime") == (EROFS if root else None), first
    assert second["channel"] == "nothing" and second["answer"] == "worked", second
    assert second["stat"] == "0" * (adversary.BITS + 1), second
    _untouched(channel)


def test_atimes_carry_nothing_to_a_concurrent_run(harness: Harness, channel: Path) -> None:
    """Guards against atimechan at ``-j 2``: the receiver watches the files while the
    sender reads its bits, and sees nothing move."""
    sender, receiver = _concurrent(harness, channel, "atime")
    assert sender["role"] == "sender" and sender["sent"] == "4711", sender
    assert receiver["channel"] == "nothing" and receiver["answer"] == "worked", receiver
    _untouched(channel)


def test_the_page_cache_carries_nothing_to_the_next_run(harness: Harness, channel: Path) -> None:
    """Guards against cachechan in sequence: run 1 reads the pages of the total's bits
    (they stay cached: the reads themselves cannot be refused), run 2 asks which are
    resident and is refused every way (``mincore``, ``cachestat``: EPERM; a read with
    ``RWF_NOWAIT``: EOPNOTSUPP), so it learns nothing and works."""
    _evict(channel)
    first, second = _in_sequence(harness, channel, "pages")
    assert first["sent"] == "4711", first
    assert second["mincore"] == EPERM and second["cachestat"] == EPERM, second
    assert second["nowait"] == EOPNOTSUPP, second
    assert second["channel"] == "nothing" and second["answer"] == "worked", second
    # The sender's pages are resident: the channel was there to be read.
    bits = adversary._mincore_bits(str(channel / "pages.bin"))
    assert sum(1 << i for i in range(adversary.BITS) if bits[i]) == 4711 and bits[-1], bits


def test_the_page_cache_carries_nothing_to_a_concurrent_run(
    harness: Harness, channel: Path
) -> None:
    """Guards against cachechan at ``-j 2``: the receiver polls ``mincore`` and
    ``cachestat`` and reads with ``RWF_NOWAIT`` while the sender reads its pages; all
    are refused throughout."""
    _evict(channel)
    sender, receiver = _concurrent(harness, channel, "pages")
    assert sender["role"] == "sender" and sender["sent"] == "4711", sender
    assert receiver["mincore"] == EPERM and receiver["cachestat"] == EPERM, receiver
    assert receiver["nowait"] == EOPNOTSUPP, receiver
    assert receiver["channel"] == "nothing" and receiver["answer"] == "worked", receiver


BOX_PROBE = """
import ctypes, mmap, os, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long
area = mmap.mmap(-1, 4096)
vector = (ctypes.c_ubyte * 1)()
address = ctypes.addressof(ctypes.c_char.from_buffer(area))
done = libc.mincore(ctypes.c_void_p(address), ctypes.c_size_t(4096), vector)
print("mincore", done, ctypes.get_errno() if done else 0)
span, found = (ctypes.c_uint64 * 2)(0, 4096), (ctypes.c_uint64 * 5)()
fd = os.open(sys.executable, os.O_RDONLY)
done = libc.syscall(451, fd, ctypes.byref(span), ctypes.byref(found), 0)
print("cachestat", done, ctypes.get_errno() if done else 0)
"""


def test_the_grading_box_shares_the_filter() -> None:
    """Guards the box: a deliverable run by a command check (box_seccomp's step, no
    sandbox) is refused ``mincore`` and ``cachestat`` as an agent is (EPERM: 1)."""
    done = subprocess.run(
        box_seccomp.wrapped([sys.executable, "-I", "-S", "-c", BOX_PROBE]),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[:2] == ["mincore -1 1", "cachestat -1 1"], done.stdout


HOME_WRITER = """
import json, os
# A new file per run (each has pid 2 or so in its own namespace): opening an earlier
# run's would be reading a leftover.
with open(os.path.join(os.environ["HOME"], f"kept-{os.urandom(8).hex()}.txt"), "x", encoding="utf-8") as f:
    f.write("a run was here\\n")
with open("numbers.txt", encoding="utf-8") as f:
    total = sum(int(x) for x in f.read().split())
with open("total.txt", "w", encoding="utf-8") as f:
    f.write(f"{total}\\n")
with open(os.environ["BENCHGUARD_TRAJECTORY"], "a", encoding="utf-8") as f:
    f.write(json.dumps({"name": "shell", "args": {"command": "awk"}, "result": str(total)}))
"""


def test_a_persistent_home_outside_tmp_stays_writable(operator: Operator) -> None:
    """Guards the honest side of step 6: a persistent home on the root mount outside
    the temp directory (a path the policy grants writable, no bind of the run's) is
    bound onto itself before the root mount goes read-only, so the agent's write to it
    lands, run after run, and the runs stay 1.0 clean."""
    if os.geteuid() != 0:
        pytest.skip("as root: the home is made under /var/tmp")
    home = Path(tempfile.mkdtemp(prefix="bg-test-persistent-home-", dir="/var/tmp"))
    try:
        script = operator.root / "home_writer.py"
        script.write_text(HOME_WRITER, "utf-8")
        config = write_agent(operator.root / "agents", "home-writer", script)
        tasks = total_tasks(Harness("root", operator), "home-tasks", {"a-total": ""})
        code, output, run_dir = operator.run(
            str(tasks),
            "--agent",
            str(config),
            "--home-mode",
            "persistent",
            "--iterations",
            "2",
            home=home,
        )
        assert code == 0 and run_dir is not None, output
        for record in records(run_dir):
            _clean(record)
        kept = sorted(home.glob("kept-*.txt"))
        assert [path.read_text("utf-8") for path in kept] == ["a run was here\n"] * 2, kept
    finally:
        shutil.rmtree(home, ignore_errors=True)
