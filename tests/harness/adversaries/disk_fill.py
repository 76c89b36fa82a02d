"""Fills the host's disk through its run's writable space (issue 19: "no batch loses a
run that did not cheat"): a run that fills the disk leaves a concurrent or later run
unable to write its record.

Roles by the prompt's lead: ``FILL.`` writes the answer first (so a budget that fails
open would let it score), then ``TOTAL_MIB`` MiB into each of its tmp (``$TMPDIR``),
its home (``$HOME``) and its workspace, one 1 MiB write at a time, with SIGXFSZ
ignored (so a per-file limit answers EFBIG rather than killing it) and any refused
write ending that place's file; it prints what it got (after removing its files, to have
room for it, and filling the workspace again after), then holds on for
``HOLD_S`` seconds (so only a watchdog ends it before its deadline) and exits 0. No
lead: does the task. Prints one JSON object: ``role``, and per place the MiB it wrote
and the errno name that stopped it (``""``: none).
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import signal
import sys
import time

CHUNK = b"\xa5" * (1 << 20)
TOTAL_MIB = int(os.environ.get("TOTAL_MIB", "256"))
HOLD_S = 60.0


def record(command: str, result: str = "") -> None:
    """One step on the transcript channel, as every agent under the harness writes."""
    with open(os.environ["BENCHGUARD_TRAJECTORY"], "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"name": "shell", "args": {"command": command}, "result": result}))
        handle.write("\n")


def answer() -> None:
    total = 0
    if os.path.exists("numbers.txt"):
        with open("numbers.txt", encoding="utf-8") as numbers:
            total = sum(int(line) for line in numbers if line.strip())
    with open("total.txt", "w", encoding="utf-8") as handle:
        handle.write(f"{total}\n")
    record("awk '{s+=$1} END {print s}' numbers.txt > total.txt", str(total))


def fill(directory: str) -> tuple[int, str]:
    """MiB written to one file in ``directory``, and the errno name that stopped it."""
    written = 0
    try:
        with open(os.path.join(directory, "fill.bin"), "wb", buffering=0) as out:
            for _ in range(TOTAL_MIB):
                out.write(CHUNK)
                written += 1
    except OSError as exc:
        return written, errno.errorcode.get(exc.errno or 0, str(exc.errno))
    return written, ""


def main(prompt: str) -> int:
    answer()
    results: dict[str, object] = {"role": "honest"}
    if prompt.startswith("FILL."):
        results["role"] = "fill"
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        places = {
            "tmp": os.environ.get("TMPDIR", "/tmp"),
            "home": os.environ.get("HOME", "."),
            "workspace": ".",
        }
        for name, directory in sorted(places.items()):
            record(f"head -c {TOTAL_MIB}M /dev/zero > {directory}/fill.bin")
            mib, stopped = fill(directory)
            results[name] = f"{mib} MiB {stopped}".strip()
        # Its stdout lies in its own full scratch: room to print, then full again.
        for directory in places.values():
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(directory, "fill.bin"))
    print(json.dumps(results, sort_keys=True), flush=True)
    if results["role"] == "fill":
        fill(".")
        time.sleep(HOLD_S)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else ""))
