"""Peak memory of one poisoned record: 16 MiB of tiny transcript steps (~1.3 M).

Each measurement runs in a fresh interpreter and reports its peak RSS
(``ru_maxrss``), so the figures do not contaminate each other:

- idle: the interpreter with the harness imported (the floor every figure includes);
- unbounded (baseline): what the capture did before the record bounds: every line
  parsed into a step dict and kept (``--skip-unbounded`` leaves it out);
- harness path: ``capture`` (steps windowed as they stream), the edge parser
  (``records.parse_record``), the detector's scan, scoring, the journal write and the
  results.json text, exactly as ``run_job`` + ``finish_run`` + ``publish`` do.

Target: the harness path under 300 MB per record.
Usage: python bench/record_memory.py [--mib 16] [--skip-unbounded]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import textwrap
from pathlib import Path

STEP_LINE = '{"name":"s"}\n'

IDLE = "import benchguard.harness.runner"

UNBOUNDED = """
import json
from benchguard.importers.transcript import json_lines, make_step
text = open(TRANSCRIPT, encoding="utf-8", errors="replace").read()
steps = [make_step(line.value["name"], {}, None, "completed") for line in json_lines(text.splitlines())]
print(len(steps))
"""

HARNESS = """
from pathlib import Path
from benchguard.harness import integrity
from benchguard.harness.agents.config import AgentConfig
from benchguard.harness.journal import BatchPlan, Journal, PlannedRun
from benchguard.harness.runner import BatchSettings, finish_run
from benchguard.harness.trajectory import capture
from benchguard.records import parse_record
from benchguard.results.io import dumps, results_document

taken = capture("jsonl", stdout_file=Path(STDOUT), trajectory_file=Path(TRANSCRIPT))
record = parse_record({
    "name": "t", "folder": "t", "iteration": 1, "agent": "a", "input": "p",
    "output": taken.output, "trajectory": taken.trajectory, "status": "success",
    "transcript_errors": taken.errors, "transcript_truncated": taken.truncated,
})
settings = BatchSettings(agent=AgentConfig(name="a", argv=("true",)), home=Path(OUT), out_dir=Path(OUT))
static = integrity.load_static_rules(integrity.IntegritySettings())
record = finish_run(record, static_rules=static, rules=(), settings=settings)
plan = BatchPlan(run_id="r", t="t", agent="a", sandbox="none", runs=(PlannedRun(position=0, folder="t", iteration=1),))
journal = Journal.create(Path(OUT) / "run", plan)
journal.write(0, record)
text = dumps(results_document([record.to_json()], run_id="r", t="t", manifest=None).to_json())
print(len(record.trajectory), record.transcript_truncated, len(text))
"""


def peak_rss_mib(code: str, env: dict[str, str]) -> tuple[float, str]:
    """Run ``code`` in a fresh interpreter; its peak RSS in MiB and its stdout."""
    prelude = "".join(f"{name} = {value!r}\n" for name, value in env.items())
    probe = textwrap.dedent(
        """
        import resource, sys
        exec(compile(BODY, "<bench>", "exec"))
        sys.stderr.write(str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + f"BODY = {code!r}\n" + probe],
        capture_output=True,
        text=True,
        check=True,
    )
    return int(done.stderr.strip().splitlines()[-1]) / 1024, done.stdout.strip()


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--mib", type=int, default=16)
    parser.add_argument("--skip-unbounded", action="store_true")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="bg-bench-") as root:
        transcript = Path(root) / "trajectory.jsonl"
        lines = (options.mib << 20) // len(STEP_LINE)
        transcript.write_text(STEP_LINE * lines, "utf-8")
        stdout = Path(root) / "stdout.txt"
        stdout.write_text("done\n", "utf-8")
        env = {"TRANSCRIPT": str(transcript), "STDOUT": str(stdout), "OUT": root}
        print(f"record memory: {options.mib} MiB transcript of {lines} tiny steps")
        idle, _ = peak_rss_mib(IDLE, env)
        print(f"  {'idle (harness imported)':<40} {idle:8.1f} MiB peak RSS")
        if not options.skip_unbounded:
            unbounded, kept = peak_rss_mib(UNBOUNDED, env)
            print(f"  {'baseline: unbounded parse':<40} {unbounded:8.1f} MiB ({kept} steps kept)")
        harness, shown = peak_rss_mib(HARNESS, env)
        steps, truncated, size = shown.split()
        print(
            f"  {'harness path (capture..results.json)':<40} {harness:8.1f} MiB "
            f"({steps} steps kept, truncated={truncated}, results.json {int(size) / 1e6:.1f} MB)"
        )
        print(f"  {'harness path minus idle':<40} {harness - idle:8.1f} MiB   (target < 300)")
        if not options.skip_unbounded:
            print(f"  ratio unbounded / harness path: {unbounded / harness:.1f}x")


if __name__ == "__main__":
    main()
