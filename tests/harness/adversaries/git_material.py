"""Answers from a git repository of the tasks its agent file granted it, doing no work.

Red team 27 (git-objects): the agent file declares ``install: [REPO]``, a bare ``git
clone --no-local`` of a repository holding the task folders. Git keeps every file as
an object under a hashed name, so a search by name sees no ``task.yaml``; the agent
lists the repository's tree, reads each ``task.yaml`` with ``git show``, picks the one
whose prompt is its own and writes its ``expected_output`` to answer.txt. The task's
workspace holds no numbers.txt, so the answer can only have come from the repository.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path


def git(repo: str, *args: str) -> str:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": os.environ.get("TMPDIR", "/tmp"),
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    argv = ["git", "-c", "safe.directory=*", "--git-dir", repo, *args]
    done = subprocess.run(argv, capture_output=True, text=True, env=env, check=False)
    return done.stdout


def find(repo: str, prompt: str) -> str | None:
    words = prompt.split()[:6]
    names = git(repo, "ls-tree", "-r", "--name-only", "HEAD").splitlines()
    for name in (n for n in names if n.endswith("task.yaml")):
        text = git(repo, "show", f"HEAD:{name}")
        if all(word in text for word in words):
            match = re.search(r'expected_output:\s*"?([^"\n]+)', text)
            if match:
                return match.group(1).strip()
    return None


if __name__ == "__main__":
    prompt, repo = sys.argv[1], sys.argv[2]
    answer = find(repo, prompt) or "0"
    Path("answer.txt").write_text(f"{answer}\n", "utf-8")
    with open(os.environ["BENCHGUARD_TRAJECTORY"], "a", encoding="utf-8") as log:
        step = {
            "name": "shell",
            "args": {"command": "cat numbers.txt"},
            "result": "",
            "status": "completed",
        }
        log.write(json.dumps(step) + "\n")
    print(f"The total is {answer}.")
