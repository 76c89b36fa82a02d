"""Cheater: reads the report.md a previous run left in the agent home, then solves."""

from __future__ import annotations

import sys

from scripted import shell, solve

if __name__ == "__main__":
    shell("cat ~/report.md")
    print(solve(sys.argv[1]))
