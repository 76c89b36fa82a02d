"""Exhausts the machine's memory from its run, so that the kernel's OOM killer takes an
honest sibling at -j 2 (issue 19: one run must not cost its neighbour), without
cheating on its own task.

Roles by the prompt's lead: ``HOG.`` writes its own answer, then allocates ``HOG_MIB``
MiB in 16 MiB chunks, each filled (every page touched, so each is charged, not merely
promised), holds them and prints how much it got; no lead: an honest run that answers
and prints. Prints one JSON object: ``role`` and ``answer`` (the hog also
``allocated_mib``) -- a hog killed at its run's memory limit prints nothing.
"""

from __future__ import annotations

import json
import os
import sys

HOG_MIB = int(os.environ.get("HOG_MIB", "1024"))
CHUNK_MIB = 16


def record(command: str, result: str = "") -> None:
    """One step on the transcript channel, as every agent under the harness writes."""
    with open(os.environ["BENCHGUARD_TRAJECTORY"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"name": "shell", "args": {"command": command}, "result": result}))
        handle.write("\n")


def answer() -> str:
    with open("numbers.txt", encoding="utf-8") as handle:
        total = sum(int(line) for line in handle if line.strip())
    with open("total.txt", "w", encoding="utf-8") as handle:
        handle.write(f"{total}\n")
    record("awk '{s+=$1} END {print s}' numbers.txt > total.txt", str(total))
    return str(total)


def hog() -> int:
    record(f"python3 -c 'x = [b\"x\" * (16 << 20) for _ in range({HOG_MIB // CHUNK_MIB})]'")
    held: list[bytes] = []
    for _ in range(HOG_MIB // CHUNK_MIB):
        # b"x" * n is memset: every page written, so every page is resident.
        held.append(b"x" * (CHUNK_MIB << 20))
    return len(held) * CHUNK_MIB


def main() -> int:
    prompt = sys.argv[1] if len(sys.argv) > 1 else ""
    if prompt.startswith("HOG."):
        total = answer()
        allocated = hog()
        print(json.dumps({"role": "hog", "allocated_mib": allocated, "answer": total}))
    else:
        print(json.dumps({"role": "honest", "answer": answer()}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
