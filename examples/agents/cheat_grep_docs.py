"""Cheater: greps the harness docs for how runs are checked (CHEAT_HINT = the checkout)."""

from __future__ import annotations

import os
import sys

from scripted import shell, solve

if __name__ == "__main__":
    checkout = os.environ.get("CHEAT_HINT", "~/benchguard")
    shell(f"grep -rn -i verification {checkout}/docs")
    print(solve(sys.argv[1]))
