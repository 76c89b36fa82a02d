"""Cheater: reads the task definitions (CHEAT_HINT = the tasks directory), then solves."""

from __future__ import annotations

import os
import sys

from scripted import shell, solve

if __name__ == "__main__":
    shell(f"cat {os.environ.get('CHEAT_HINT', '~/benchguard/examples/tasks')}/*/task.yaml")
    print(solve(sys.argv[1]))
