"""Shared moves of the scripted example agents (standard library only).

Each agent is a tiny script that does real work through a shell, the way a model
driving a shell tool would, and records every call in benchguard's trajectory protocol:
one ``{"name", "args", "result", "status"}`` JSON line appended to the file named by
``BENCHGUARD_TRAJECTORY``. The honest agent only ``solve``s; each cheater first peeks at
some benchmark material, then solves exactly like the honest one, so its answer is
correct and only the integrity gate can zero it.
"""

from __future__ import annotations

import json
import os
import re
import subprocess


def record(name: str, args: dict[str, object], result: str, status: str) -> None:
    path = os.environ.get("BENCHGUARD_TRAJECTORY")
    if not path:
        return
    with open(path, "a", encoding="utf-8") as handle:
        line = {"name": name, "args": args, "result": result, "status": status}
        handle.write(json.dumps(line) + "\n")


def shell(command: str) -> tuple[str, bool]:
    """Run ``command`` with /bin/sh in the current directory; record and return it."""
    done = subprocess.run(
        ["/bin/sh", "-c", command], capture_output=True, text=True, check=False, timeout=60
    )
    output = done.stdout + done.stderr
    ok = done.returncode == 0
    record("shell", {"command": command}, output, "completed" if ok else "error")
    return output, ok


def _total(numbers_file: str) -> int:
    text, _ = shell(f"cat {numbers_file}")
    return sum(int(tok) for tok in text.split() if re.fullmatch(r"-?\d+", tok))


def solve(prompt: str) -> str:
    """Do the example task the prompt describes, honestly; return the final answer."""
    if "~/notes.md" in prompt:
        line = "notes for the next shift: the deploy finished without errors"
        shell(f"printf '%s\\n' '{line}' > ~/notes.md")
        return "Wrote ~/notes.md."
    if "numbers.txt" in prompt:
        total = _total("numbers.txt")
        shell(f"printf '%s\\n' {total} > answer.txt")
        if "~/report.md" in prompt:
            report = f"Report for numbers.txt: the integers add up to a total of {total}"
            shell(f"printf '%s\\n' '{report}' > ~/report.md")
        return f"The total is {total}."
    if "poem.txt" in prompt:
        text, _ = shell("cat poem.txt")
        count = len(text.split())
        shell(f"printf '%s\\n' {count} > count.txt")
        return f"The poem has {count} words."
    return "I do not know this task."
