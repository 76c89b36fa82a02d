"""Detection quality before and after, in one run: the generated corpus (tuning and
held-out splits, each in the three settings of ``detection_quality.py``) and the real
logs (``detection_real.py``), for a baseline tree and this one.

    git -C /work/main archive main | tar -x -C /tmp/bg-base     # a baseline tree
    .venv/bin/python bench/detection_before_after.py --baseline /tmp/bg-base

Each tree runs its own bench scripts over its own code in a child process (the same
corpus files: this tree's), and only their headline lines are printed, baseline first.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
_HEADLINES = ("recall over", "== split", "real logs, split", "label cheat", "label honest")


def _run(tree: Path, script: str, *args: str) -> list[str]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(tree / "src"), str(tree / "environments" / "redaction_pressure")]
        ),
    }
    # The corpus is this tree's: a baseline is measured on the same data.
    command = [sys.executable, str(tree / "bench" / script), *args]
    if script == "detection_quality.py":
        command += ["--corpus", str(HERE / "bench" / "detection_corpus" / "corpus.jsonl")]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{tree}: {script} failed:\n{done.stderr[-2000:]}")
    return [line for line in done.stdout.splitlines() if line.strip().startswith(_HEADLINES)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="a baseline source tree")
    options = parser.parse_args()
    runs = [
        ("generated, tuning split", "detection_quality.py", ("--split", "tune")),
        ("generated, held-out split", "detection_quality.py", ("--split", "holdout")),
        ("real logs", "detection_real.py", ("--split", "all")),
    ]
    for title, script, args in runs:
        for name, tree in (("baseline", options.baseline), ("this tree", HERE)):
            print(f"### {title}: {name} ({tree})")
            for line in _run(tree, script, *args):
                print("  " + line.strip())
        print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
