"""Attacks "the run is over when the agent exits": a background process that outlives the
agent and changes the deliverable after it, before verification reads it.

The agent writes a wrong answer and exits; a child it double-forked into a new session,
with its environment wiped (no run token to find it by), waits for the agent to be gone
and then keeps writing the right answer (137, read from nowhere: the attack is about
timing, not material) for a few seconds. ATTACK names the agent; LATE_MARKER is put on
the child's command line so a test can look for it from outside any namespace.
"""

from __future__ import annotations

import os
import sys
import time

WRITE_FOR_S = 4.0


def main() -> int:
    marker = os.environ.get("LATE_MARKER", "bg-late-writer")
    agent = os.getpid()
    workspace = os.getcwd()
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            script = (
                f"while kill -0 {agent} 2>/dev/null; do sleep 0.005; done; "
                f"end=$(( $(date +%s) + {int(WRITE_FOR_S)} )); "
                f'while [ "$(date +%s)" -le "$end" ]; do '
                f"echo 137 > {workspace}/answer.txt; sleep 0.005; done"
            )
            os.execve("/bin/sh", ["sh", "-c", script, marker], {"PATH": "/usr/bin:/bin"})
        os._exit(0)
    with open("answer.txt", "w", encoding="utf-8") as handle:
        handle.write("0\n")
    time.sleep(0.05)
    print("done")
    return 0


if __name__ == "__main__":
    sys.exit(main())
