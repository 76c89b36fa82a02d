"""Detection on real logs: recall and false positives per family and per source, on
public trajectories collected and labelled by reading (bench/detection_corpus/real/).

Every log is scanned as ``benchguard scan`` scans a foreign log: ``--profile auto``
(the benchmark recognised from the log, plus the generic families), nothing the
harness knows. A cheat counts as caught when flagged; review is its own rate. The
baseline column is the same logs under detector version 5's setting as far as it can
be reproduced in this tree: the default profile alone, which is what ``scan`` used
before ``auto`` (no generic families, no per-log choice).

    .venv/bin/python bench/detection_real.py [--split tune|holdout|all]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path
from typing import Any

from benchguard.detection.detector import Detector, scan_record
from benchguard.detection.rules import DEFAULT_PROFILE, GENERIC_PROFILE, load_profile
from benchguard.importers.registry import import_path
from benchguard.workflows.scan import choose_profiles

REAL = Path(__file__).resolve().parent / "detection_corpus" / "real"
REPO = Path(__file__).resolve().parents[1]


def _entries() -> list[tuple[dict[str, Any], list[dict[str, Any]], Path | None]]:
    """(entry, its records, the file they came from when a file was scanned)."""
    out: list[tuple[dict[str, Any], list[dict[str, Any]], Path | None]] = []
    for line in (REAL / "records.jsonl").read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        out.append((entry, [entry["record"]], None))
    for line in (REAL / "files.jsonl").read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        path = REPO / entry["file"]
        out.append((entry, list(import_path(path).records), path))
    return out


def _baseline_rules() -> tuple[Any, ...]:
    # The default profile without the generic families: scan's rules before auto.
    generic = {r.id for r in load_profile(GENERIC_PROFILE)}
    return tuple(r for r in load_profile(DEFAULT_PROFILE) if r.id not in generic)


def _status(records: list[dict[str, Any]], rules: tuple[Any, ...]) -> str:
    detector = Detector()
    statuses = [scan_record(r, rules, detector=detector).status for r in records]
    for worst in ("flagged", "review", "clean"):
        if worst in statuses:
            return worst
    return "no_data"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--split", choices=("tune", "holdout", "all"), default="all")
    args = parser.parse_args()
    baseline = _baseline_rules()
    rows: list[tuple[dict[str, Any], str, str, str]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for entry, records, path in _entries():
            if args.split != "all" and entry["split"] != args.split:
                continue
            if path is None:
                path = Path(tmp) / f"{entry['id']}.json"
                path.write_text(json.dumps(records), encoding="utf-8")
            choice = choose_profiles(path, ("auto",), None, None)
            rows.append(
                (
                    entry,
                    _status(records, choice.rules),
                    _status(records, baseline),
                    "+".join(choice.names),
                )
            )
    if args.split == "all":
        # Tuning and held-out slices are reported apart: only the held-out one says
        # anything about logs the rules were not shaped on.
        for part in ("tune", "holdout"):
            _report([row for row in rows if row[0]["split"] == part], part)
            print()
    _report(rows, args.split)
    return 0


def _report(rows: list[tuple[dict[str, Any], str, str, str]], split: str) -> None:
    print(
        f"real logs, split {split}: {len(rows)} log(s); now = --profile auto, base = default profile only"
    )
    groups: dict[tuple[str, str], list[tuple[str, str]]] = defaultdict(list)
    for entry, now, base, _ in rows:
        groups[("family", entry["family"])].append((now, base))
        groups[("source", entry["source"])].append((now, base))
        groups[("label", entry["label"])].append((now, base))
        groups[("source+label", f"{entry['source']} / {entry['label']}")].append((now, base))
    print(
        f"{'group':66} {'n':>3} {'flagged now/base':>18} {'review now/base':>17} {'clean now/base':>16}"
    )
    for (kind, name), results in sorted(groups.items()):
        n = len(results)
        flagged = (
            sum(now == "flagged" for now, _ in results),
            sum(b == "flagged" for _, b in results),
        )
        review = sum(now == "review" for now, _ in results), sum(b == "review" for _, b in results)
        clean = sum(now == "clean" for now, _ in results), sum(b == "clean" for _, b in results)
        print(
            f"{kind + ' ' + name:66} {n:>3} {f'{flagged[0]}/{flagged[1]}':>18} "
            f"{f'{review[0]}/{review[1]}':>17} {f'{clean[0]}/{clean[1]}':>16}"
        )
    cheats = [(e, now, base) for e, now, base, _ in rows if e["label"] == "cheat"]
    honest = [(e, now, base) for e, now, base, _ in rows if e["label"] == "honest"]
    if cheats:
        caught = sum(now == "flagged" for _, now, _ in cheats)
        before = sum(b == "flagged" for _, _, b in cheats)
        print(f"cheats flagged: {caught}/{len(cheats)} (baseline {before}/{len(cheats)})")
    if honest:
        fp = sum(now == "flagged" for _, now, _ in honest)
        rv = sum(now == "review" for _, now, _ in honest)
        before_fp = sum(b == "flagged" for _, _, b in honest)
        print(
            f"honest flagged: {fp}/{len(honest)}, review {rv}/{len(honest)} "
            f"(baseline flagged {before_fp}/{len(honest)})"
        )
    for entry, now, base, chosen in rows:
        print(f"  {entry['id']:52} {entry['label']:7} {now:8} (base {base:8}) profiles {chosen}")


if __name__ == "__main__":
    sys.exit(main())
