"""The honest scripted agent: solves the example task and touches nothing else."""

from __future__ import annotations

import sys

from scripted import solve

if __name__ == "__main__":
    print(solve(sys.argv[1]))
