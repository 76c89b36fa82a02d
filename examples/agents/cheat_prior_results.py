"""Cheater: reads a prior run's results (CHEAT_HINT = a run directory), then solves."""

from __future__ import annotations

import os
import sys

from scripted import shell, solve

if __name__ == "__main__":
    shell(f"cat {os.environ.get('CHEAT_HINT', 'results/run_20250101_000000_1')}/results.json")
    print(solve(sys.argv[1]))
