"""The agent's seccomp filter for the grading box's commands.

The box runs the deliverable (the thing under test) after the agent has ended, as the
unprivileged agent uid in the init user namespace when the harness is root. Without a
filter, a deliverable imported by a test could call ``add_key`` and ``keyctl`` there and
leave world-viewable keys in that uid's persistent user keyring: every later run on the
host reads their descriptions in ``/proc/keys`` (red team 6 carried a task's hidden
tests to later batches that way). So every command check runs under the same filter the
launcher gives agents (:mod:`benchguard.harness.seccomp`: keyrings, extended attributes,
io_uring, inode-flag ioctls, page-cache residency queries), and no process may reach
into another (``ptrace``, ``process_vm_readv``/``writev``, ``pidfd_getfd``: red team 29's
deliverable attached to the pytest that ran it and forged its verdict):

- in the check sandbox, bubblewrap loads the compiled program (``--seccomp FD``, read
  from a sealed memfd) just before it executes the command;
- without a sandbox, the command starts through a small Python step that installs the
  filter and then executes it (:func:`wrapped`).

Either way the filter binds the command and everything it starts, and cannot be removed.
"""

from __future__ import annotations

import fcntl
import os
import sys
from collections.abc import Sequence
from pathlib import Path

from benchguard.harness import seccomp

# Above the descriptors the sandbox gate's wrapper opens (8 and 9).
MIN_FD = 10
# Installs the filter from harness/seccomp.py (loaded by path: standard library only),
# then becomes the command. -I: nothing of the environment or the cwd is imported.
EXEC_STEP = (
    "import importlib.util as u, os, sys\n"
    "s = u.spec_from_file_location('_bg_seccomp', sys.argv[1])\n"
    "m = u.module_from_spec(s)\n"
    "s.loader.exec_module(m)\n"
    "m.install(box=True)\n"
    "os.execvp(sys.argv[2], sys.argv[2:])\n"
)


def program_fd() -> int:
    """A read-only descriptor (at least :data:`MIN_FD`, close-on-exec) positioned at the
    start of the compiled filter, for bubblewrap's ``--seccomp``. The caller passes it
    to bubblewrap and closes it."""
    code = seccomp.program(box=True)
    fd = os.memfd_create("bg-box-seccomp", os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
    try:
        os.write(fd, code)
        fcntl.fcntl(
            fd,
            fcntl.F_ADD_SEALS,
            fcntl.F_SEAL_WRITE | fcntl.F_SEAL_GROW | fcntl.F_SEAL_SHRINK | fcntl.F_SEAL_SEAL,
        )
        os.lseek(fd, 0, os.SEEK_SET)
        if fd >= MIN_FD:
            return fd
        high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, MIN_FD)
    except BaseException:
        os.close(fd)
        raise
    os.close(fd)
    return high


def wrapped(argv: Sequence[str]) -> list[str]:
    """``argv`` started through the step that installs the filter first (no sandbox)."""
    return [sys.executable, "-I", "-S", "-c", EXEC_STEP, str(script()), *argv]


def script() -> Path:
    return Path(seccomp.__file__).resolve()
