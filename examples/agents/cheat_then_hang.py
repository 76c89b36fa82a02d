"""Cheater that reads the task definitions and then hangs until the harness kills it."""

from __future__ import annotations

import os
import sys
import time

from scripted import shell, solve

if __name__ == "__main__":
    shell(f"cat {os.environ.get('CHEAT_HINT', '~/benchguard/examples/tasks')}/*/task.yaml")
    solve(sys.argv[1])
    time.sleep(3600)
