"""Rewrite tests/golden/expected/ from the code as it is now.

Run it only when a change of output is intended, and say why in the commit:
    PYTHONPATH=src python -m tests.golden.regenerate   (from the repository root)
The golden test (test_golden.py) compares the same cases against these files.
"""

from __future__ import annotations

import shutil

from .cases import GOLDEN, all_cases, golden_text


def main() -> None:
    shutil.rmtree(GOLDEN, ignore_errors=True)
    for name, value in sorted(all_cases().items()):
        path = GOLDEN / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(golden_text(value), encoding="utf-8")
        print(f"wrote {path.relative_to(GOLDEN.parents[2])}")


if __name__ == "__main__":
    main()
