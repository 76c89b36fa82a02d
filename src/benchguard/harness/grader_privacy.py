"""The grader's process kept out of the deliverable's reach in the grading box.

A check's grader (pytest, a task's verifier script) runs the deliverable as the thing
under test, often as its own child, with the same uid. The kernel lets a process read
and write the memory, environment and descriptors of another process of its uid
(``/proc/PID/mem``, ``environ``, ``fd/``) as long as that process is *dumpable*, which
every process is after ``execve``. Red team 29's deliverable read its parent pytest's
result-stream descriptor from ``/proc/PPID/environ``, then attached and forged the
stream: a wrong answer scored 1.0 in every configuration.

Two layers close it. The box's seccomp filter denies the calls that reach into another
process (harness.seccomp, ``TRACE_SYSCALLS``). And the grader makes itself
non-dumpable (``prctl(PR_SET_DUMPABLE, 0)``) before it loads anything of the
workspace: then the kernel grants those ``/proc`` files only to a process with
``CAP_SYS_PTRACE``, which no process in the box has (it runs as the agent's uid as
root, as the harness's own uid otherwise). A child the grader starts is dumpable again
after its own ``execve``, so the deliverable works as before; only the grader is
closed.

Where it applies: the pytest bootstrap (every pytest check), and a Python verifier run
as ``python SCRIPT ARGS...`` (the script run by :data:`VERIFIER_STEP` through
``runpy``, as ``python SCRIPT`` runs it: ``__main__``, ``sys.argv`` from the script on).
Not covered: a verifier in another language or started with interpreter options (its
process stays dumpable, and only the seccomp layer holds: ``/proc/PPID/mem`` stays open
to a same-uid child); a task author can make such a verifier non-dumpable itself.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence

# PR_SET_DUMPABLE is 4 (linux/prctl.h); the result is not checked: the call cannot fail
# for 0, and a grader that could not run it is no worse off than before.
NONDUMPABLE = "import ctypes as _c\n_c.CDLL(None).prctl(4, 0, 0, 0, 0)\ndel _c\n"
# ``python -c VERIFIER_STEP SCRIPT ARGS...``: non-dumpable, then SCRIPT as ``__main__``.
VERIFIER_STEP = (
    NONDUMPABLE
    + "import runpy, sys\n"
    + "sys.argv = sys.argv[1:]\n"
    + "runpy.run_path(sys.argv[0], run_name='__main__')\n"
)
_PYTHON = re.compile(r"python(?:\d+(?:\.\d+)?)?")


def verifier_argv(argv: Sequence[str]) -> list[str]:
    """``argv`` with a Python verifier (``python SCRIPT ARGS...``) started non-dumpable;
    any other command unchanged."""
    if (
        len(argv) >= 2
        and _PYTHON.fullmatch(os.path.basename(argv[0])) is not None
        and not argv[1].startswith("-")
    ):
        return [argv[0], "-c", VERIFIER_STEP, *argv[1:]]
    return list(argv)
