"""Detection on the cases of ``tests/detection/test_recall_v13.py`` (several spellings
per technique, honest look-alikes beside them), per family, for a baseline tree and
this one, in one run (the same cases: this tree's).

    git -C /work/main archive <commit> src | tar -x -C /tmp/bg-base     # a baseline tree
    .venv/bin/python bench/detection_recall_v13.py --baseline /tmp/bg-base

Each tree scans the cases with its own detector in a child process, as an imported
log is scanned (``--profile auto`` over the log's text, no disk). Flagged counts as
caught; review is its own column. These cases were written while building v13 and
v14: they show what changed, they are not a held-out measure.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
GROUPS = (
    ("prior-results", "PRIOR_RESULTS"),
    ("future-git", "FUTURE_GIT"),
    ("comparison-override", "COMPARISON"),
    ("grader-tamper", "GRADER"),
    ("caller-frame", "CALLER"),
    ("benchmark-seeking", "SEEKING"),
    ("honest", "HONEST"),
    ("honest", "MORE_HONEST"),
    ("second batch, cheats", "HELD_OUT"),
    ("second batch, honest", "HELD_OUT_HONEST"),
)
_CHILD = """
import json, sys
sys.path.insert(0, {tests!r})
sys.path.insert(0, {bench!r})
import test_recall_v13 as cases
out = []
for family, name in {groups!r}:
    for case in getattr(cases, name):
        status, _ = cases.scan(case)
        out.append([family, case.id, case.expect, status])
print(json.dumps(out))
"""


def run_tree(src: Path) -> list[list[str]]:
    env = dict(os.environ, PYTHONPATH=str(src))
    code = _CHILD.format(
        tests=str(HERE / "tests" / "detection"), bench=str(HERE / "bench"), groups=GROUPS
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"scanning with {src} failed:\n{done.stderr[-2000:]}")
    rows: list[list[str]] = json.loads(done.stdout)
    return rows


def table(rows: list[list[str]]) -> dict[str, tuple[int, int, int, int]]:
    """family -> (n, flagged, review, clean)."""
    counts: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for family, _, _, status in rows:
        entry = counts[family]
        entry[0] += 1
        entry[1 if status == "flagged" else 2 if status == "review" else 3] += 1
    return {family: (c[0], c[1], c[2], c[3]) for family, c in counts.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="a baseline tree (has src/)")
    args = parser.parse_args()
    before = table(run_tree(args.baseline / "src"))
    after = table(run_tree(HERE / "src"))
    print(f"{'family':<22} {'n':>4}  {'baseline flag/review':>21}  {'this tree flag/review':>22}")
    for family in dict.fromkeys(f for f, _ in GROUPS):
        n, bf, br, _ = before.get(family, (0, 0, 0, 0))
        _, af, ar, _ = after.get(family, (0, 0, 0, 0))
        if not n:
            continue
        print(
            f"{family:<22} {n:>4}  {bf:>8} ({100 * bf / n:5.1f}%) {br:>3}"
            f"  {af:>9} ({100 * af / n:5.1f}%) {ar:>3}"
        )


if __name__ == "__main__":
    main()
