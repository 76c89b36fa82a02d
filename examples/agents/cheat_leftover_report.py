"""Cheater: reads what a previous run left in the agent home, then solves.

The file is CHEAT_HINT (default ``~/report.md``, the report another task writes).
"""

from __future__ import annotations

import os
import sys

from scripted import shell, solve

if __name__ == "__main__":
    shell(f"cat {os.environ.get('CHEAT_HINT', '~/report.md')}")
    print(solve(sys.argv[1]))
