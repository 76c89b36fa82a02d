"""What reading Harbor costs: an ATIF trajectory imported and scanned, beside the same
run as a benchguard record (no importer) in the same process.

Generates (fixed seed) one terminus-2-shaped ATIF trajectory of ``--steps`` agent steps
(keystrokes tool calls, results without ``source_call_id``, terminal output of
``--output-chars`` each) and the equivalent benchguard results list, then times, in CPU
seconds (best of ``--repeat``; wall time on a shared machine measures the neighbours):

- ``import_path`` of the ATIF file (decode, map, bound) and of the results list;
- a scan of each record with the terminal-bench profile, by a fresh detector each time
  (a detector remembers the commands it read: a second scan would time its cache).

    .venv/bin/python bench/atif_import.py                  # 2,000 steps
    .venv/bin/python bench/atif_import.py --steps 200      # quick look
"""

from __future__ import annotations

import argparse
import json
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchguard.detection.detector import Detector
from benchguard.detection.rules import load_ruleset
from benchguard.importers.registry import import_path
from benchguard.record.rules import ScanRulesets

WORDS = ("build", "make", "test", "ls", "grep", "python3", "cat", "echo", "cd", "src")


def _command(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(2, 8))) + "\n"


def _output(rng: random.Random, chars: int) -> str:
    text: list[str] = []
    size = 0
    while size < chars:
        word = rng.choice(WORDS)
        text.append(word)
        size += len(word) + 1
    return "New Terminal Output:\n" + " ".join(text)[:chars]


def corpus(steps: int, chars: int, seed: int) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The ATIF document and the same run as a benchguard results list."""
    rng = random.Random(seed)
    atif_steps: list[dict[str, Any]] = [
        {"step_id": 1, "source": "user", "message": "Build the project in /app."}
    ]
    trajectory = []
    for i in range(steps):
        command, output = _command(rng), _output(rng, chars)
        atif_steps.append(
            {
                "step_id": i + 2,
                "source": "agent",
                "message": f"Analysis: step {i}.",
                "tool_calls": [
                    {
                        "tool_call_id": f"call_{i}",
                        "function_name": "bash_command",
                        "arguments": {"keystrokes": command, "duration": 0.1},
                    }
                ],
                "observation": {"results": [{"content": output}]},
            }
        )
        trajectory.append(
            {
                "name": "bash_command",
                "args": {"keystrokes": command, "duration": 0.1},
                "result": output,
                "status": "completed",
            }
        )
    document = {
        "schema_version": "ATIF-v1.5",
        "session_id": "bench",
        "agent": {"name": "terminus-2", "version": "2.0.0"},
        "steps": atif_steps,
    }
    record = {"name": "bench", "input": "Build.", "output": "done", "trajectory": trajectory}
    return document, [record]


def best(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.process_time()
        fn()
        times.append(time.process_time() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=2000)
    parser.add_argument("--output-chars", type=int, default=400)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    rules = load_ruleset("terminal-bench")
    document, records = corpus(args.steps, args.output_chars, args.seed)
    with tempfile.TemporaryDirectory() as folder:
        atif_file = Path(folder) / "trajectory.json"
        results_file = Path(folder) / "results.json"
        atif_file.write_text(json.dumps(document, indent=2))
        results_file.write_text(json.dumps(records, indent=2))
        atif_mb = atif_file.stat().st_size / 1e6
        results_mb = results_file.stat().st_size / 1e6
        [atif_record] = import_path(atif_file).records
        [plain_record] = import_path(results_file).records
        assert len(atif_record["trajectory"]) == len(plain_record["trajectory"]) == args.steps
        rows = [
            ("import atif", best(lambda: import_path(atif_file), args.repeat), atif_mb),
            ("import benchguard (baseline)", best(lambda: import_path(results_file), args.repeat),
             results_mb),
            ("scan atif record", best(lambda: Detector().scan(atif_record, ScanRulesets.of(rules)), args.repeat),
             atif_mb),
            ("scan benchguard record (baseline)",
             best(lambda: Detector().scan(plain_record, ScanRulesets.of(rules)), args.repeat), results_mb),
        ]  # fmt: skip
    print(f"{args.steps} steps, {args.output_chars} output chars each; terminal-bench profile")
    print(f"{'':36} {'CPU s':>8} {'MB':>7} {'MB/s':>8}")
    for name, seconds, mb in rows:
        print(f"{name:36} {seconds:8.3f} {mb:7.2f} {mb / max(seconds, 1e-9):8.1f}")
    print(f"import ratio atif/baseline: {rows[0][1] / max(rows[1][1], 1e-9):.2f}x CPU")
    print(f"scan ratio atif/baseline:   {rows[2][1] / max(rows[3][1], 1e-9):.2f}x CPU")


if __name__ == "__main__":
    main()
