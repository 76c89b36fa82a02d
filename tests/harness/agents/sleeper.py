"""An agent that works slowly and leaves a detached child behind: the runs a SIGINT or
SIGTERM to the harness lands in the middle of.

It records its own pid and its child's in ``~/pids/`` (the agent home), and carries
the prompt's last word (a marker unique to the test) on its own command line and its
child's, so a test can check that nothing it started outlives an interrupted batch,
even inside a sandbox whose pids the host does not share. Then it answers the task.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time

SECONDS = float(os.environ.get("SLEEPER_SECONDS", "0.6"))


def main() -> None:
    pids = os.path.join(os.environ["HOME"], "pids")
    os.makedirs(pids, exist_ok=True)
    marker = sys.argv[-1].split()[-1]
    # A child in its own session: outside the agent's process group on purpose.
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(300)", marker], start_new_session=True
    )
    for pid in (os.getpid(), child.pid):
        with open(os.path.join(pids, str(pid)), "w", encoding="utf-8") as handle:
            handle.write("")
    time.sleep(SECONDS)
    with open("answer.txt", "w", encoding="utf-8") as handle:
        handle.write("ok\n")
    print("ok")
    sys.stdout.flush()


if __name__ == "__main__":
    main()
