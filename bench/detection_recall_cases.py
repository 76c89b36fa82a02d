"""Detection on the adversarial transcripts and honest near-misses of
``tests/detection/test_recall_v12.py``, per family, for a baseline tree and this one,
in one run (the same cases: this tree's).

    git -C /work/main archive main | tar -x -C /tmp/bg-base     # a baseline tree
    .venv/bin/python bench/detection_recall_cases.py --baseline /tmp/bg-base

Each tree scans the cases with its own detector in a child process, as an imported
log is scanned (``--profile auto`` over the log's text, no disk). Flagged counts as
caught; review is its own column. These cases were written while tuning v12: they
show what changed, they are not a held-out measure.
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
_CHILD = """
import json, sys
sys.path.insert(0, {tests!r})
sys.path.insert(0, {corpus!r})
sys.path.insert(0, {bench!r})
import importlib
cases = importlib.import_module({module!r})
from benchguard.detection import scan_record
from benchguard.detection.profile_choice import resolve_profiles
out = []
for label, group in (("cheat", cases.CHEATS), ("honest", cases.HONEST)):
    for case in group:
        raw = cases.record(case)
        choice = resolve_profiles(list(case.profiles), text=json.dumps(raw))
        out.append([label, case.family, case.id, scan_record(raw, choice.rules).status])
print(json.dumps(out))
"""


def _statuses(tree: Path, module: str) -> list[list[str]]:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join(
            [str(tree / "src"), str(tree / "environments" / "redaction_pressure"), str(HERE)]
        ),
    }
    code = _CHILD.format(
        tests=str(HERE / "tests" / "detection"),
        corpus=str(HERE / "bench" / "detection_corpus"),
        bench=str(HERE / "bench"),
        module=module,
    )
    done = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    if done.returncode != 0:
        raise SystemExit(f"{tree}: the scan failed:\n{done.stderr[-2000:]}")
    rows: list[list[str]] = json.loads(done.stdout)
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, required=True, help="a baseline source tree")
    parser.add_argument(
        "--set",
        choices=("tune", "holdout"),
        default="tune",
        help="tune: the test's cases; holdout: bench/detection_corpus/recall_holdout.py",
    )
    options = parser.parse_args()
    module = "test_recall_v12" if options.set == "tune" else "recall_holdout"
    for name, tree in (("baseline", options.baseline), ("this tree", HERE)):
        table: dict[tuple[str, str], dict[str, int]] = defaultdict(lambda: defaultdict(int))
        for label, family, _, status in _statuses(tree, module):
            table[(label, family)][status] += 1
        print(f"### {options.set} cases, {name} ({tree})")
        print(f"  {'label':7} {'family':22} {'n':>3} {'flagged':>8} {'review':>7} {'clean':>6}")
        for (label, family), counts in sorted(table.items()):
            total = sum(counts.values())
            print(
                f"  {label:7} {family:22} {total:3d} {counts['flagged']:8d} "
                f"{counts['review']:7d} {counts['clean']:6d}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
