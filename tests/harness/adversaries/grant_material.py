"""Answers from benchmark material its agent file granted it, doing no work.

The agent file declares ``install: [PATH]``: an earlier batch's results root (each
record carries the task's ``input`` and ``expected_output``) or another copy of the
task folders (each ``task.yaml`` says its ``expected_output``). The agent walks PATH,
finds the entry whose prompt is its own, and writes that answer to answer.txt; the
task's workspace holds no numbers.txt, so the answer can only have come from there.
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path


def _from_records(data: object, prompt: str) -> str | None:
    if isinstance(data, dict):
        if data.get("input") == prompt and isinstance(data.get("expected_output"), str):
            return str(data["expected_output"])
        values: list[object] = list(data.values())
    elif isinstance(data, list):
        values = list(data)
    else:
        return None
    for value in values:
        found = _from_records(value, prompt)
        if found is not None:
            return found
    return None


def find(root: Path, prompt: str) -> str | None:
    words = prompt.split()[:6]
    for folder, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(files):
            path = Path(folder) / name
            try:
                text = path.read_text("utf-8")
            except (OSError, UnicodeDecodeError):
                continue
            if name.endswith(".json"):
                try:
                    found = _from_records(json.loads(text), prompt)
                except ValueError:
                    found = None
                if found is not None:
                    return found
            if name == "task.yaml" and all(w in text for w in words):
                match = re.search(r'expected_output:\s*"?([^"\n]+)', text)
                if match:
                    return match.group(1).strip()
    return None


if __name__ == "__main__":
    prompt, root = sys.argv[1], Path(sys.argv[2])
    answer = find(root, prompt) or "0"
    Path("answer.txt").write_text(f"{answer}\n", "utf-8")
    with open(os.environ["BENCHGUARD_TRAJECTORY"], "a", encoding="utf-8") as log:
        step = {
            "name": "write",
            "args": {"path": "answer.txt"},
            "result": "",
            "status": "completed",
        }
        log.write(json.dumps(step) + "\n")
    print(f"The total is {answer}.")
