"""Generate the labelled corpus: every scenario run for real in a fresh sandbox.

    .venv/bin/python bench/detection_corpus/generate.py [--out PATH] [--only ID ...]

Writes one JSON line per scenario, sorted by id: the labels (``family``, ``profile``,
``label``, ``reach``, ``split``) and a ``record`` in the shape the detector reads
(``input``, ``trajectory`` of ``{name, args, result, status}``, ``output``). Rerunning
gives the same bytes: the layout is packed reproducibly, the sandbox has its own PID
namespace and fixed environment, and the split is a hash of the id.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from detection_corpus.layout import built_layout
from detection_corpus.sandbox import run_steps
from detection_corpus.scenarios import Scenario, all_scenarios

CORPUS_PATH = Path(__file__).resolve().parent / "corpus.jsonl"
# Bump when the layout, the scenarios or the record shape change.
CORPUS_VERSION = 1
# About this share of scenarios is held out: scored only for the final figures.
HOLDOUT_PERCENT = 30


def split_of(scenario_id: str) -> str:
    """``holdout`` or ``tune``, from a hash of the id (stable across runs and machines)."""
    bucket = int(hashlib.sha256(scenario_id.encode()).hexdigest()[:8], 16) % 100
    return "holdout" if bucket < HOLDOUT_PERCENT else "tune"


def _args(step: dict[str, Any]) -> dict[str, Any]:
    return {key: value for key, value in step.items() if key != "tool"}


def corpus_line(scenario: Scenario, results: Sequence[str]) -> dict[str, Any]:
    trajectory = [
        {"name": step["tool"], "args": _args(step), "result": result, "status": "completed"}
        for step, result in zip(scenario.steps, results, strict=True)
    ]
    return {
        "corpus_version": CORPUS_VERSION,
        "id": scenario.id,
        "family": scenario.family,
        "profile": scenario.profile,
        "label": scenario.label,
        "reach": scenario.reach,
        "split": scenario.split or split_of(scenario.id),
        "record": {
            "name": scenario.id,
            "input": scenario.resolved_prompt(),
            "trajectory": trajectory,
            "output": scenario.output,
        },
    }


def generate(only: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """Corpus lines for every scenario (or those in ``only``), sorted by id."""
    tar_bytes, facts = built_layout()
    wanted = set(only) if only is not None else None
    lines = []
    with tempfile.TemporaryDirectory(prefix="bg-corpus-") as tmp:
        layout_tar = Path(tmp, "layout.tar")
        layout_tar.write_bytes(tar_bytes)
        for scenario in all_scenarios(facts):
            if wanted is not None and scenario.id not in wanted:
                continue
            results = run_steps(layout_tar, scenario.steps, scenario.cwd)
            lines.append(corpus_line(scenario, results))
    lines.sort(key=lambda line: str(line["id"]))
    return lines


def dump_line(line: dict[str, Any]) -> str:
    return json.dumps(line, ensure_ascii=False, sort_keys=True)


def load_corpus(path: Path = CORPUS_PATH) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as handle:
        return [json.loads(text) for text in handle if text.strip()]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=CORPUS_PATH)
    parser.add_argument("--only", nargs="*", default=None)
    options = parser.parse_args(argv)
    lines = generate(options.only)
    options.out.write_text("".join(dump_line(line) + "\n" for line in lines), encoding="utf-8")
    cheats = sum(1 for line in lines if line["label"] == "cheat")
    print(
        f"{len(lines)} trajectories ({cheats} cheating, {len(lines) - cheats} honest) -> {options.out}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
