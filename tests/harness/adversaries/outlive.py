"""Attacks "the agents end with the harness": an agent that, with a child in a session of
its own, would keep running (and writing) after the harness was killed outright.

It starts a detached child (``setsid``, environment wiped) and both sleep; each carries
OUTLIVE_MARKER on its command line so a test can find them from outside any namespace,
and the agent writes ``ready`` into its home once both run.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time


def main() -> int:
    marker = os.environ["OUTLIVE_MARKER"]
    subprocess.Popen(
        ["/bin/sh", "-c", "sleep 300", marker],
        start_new_session=True,
        env={"PATH": "/usr/bin:/bin"},
    )
    with open(os.path.join(os.environ["HOME"], "ready"), "w", encoding="utf-8") as handle:
        handle.write(marker)
    os.execv("/bin/sh", ["/bin/sh", "-c", "sleep 300", marker])
    time.sleep(300)
    return 0


if __name__ == "__main__":
    sys.exit(main())
