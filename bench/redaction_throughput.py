"""vf-eval throughput with all-hostile replies versus benign ones, against an instant model.

A local OpenAI-compatible server answers instantly: with the oracle's reply (benign), or
with the oracle plus a rule that burns the whole CPU budget on every episode (hostile).
``vf-eval redaction-pressure`` runs the same tasks in both modes with the same
concurrency. Throughput is episodes divided by the span from the first episode's start
to the last one's end, read from the traces (so start-up is left out). Before scoring
moved to worker processes a hostile reply held vf-eval's event loop for its whole budget;
the target is hostile >= 0.8x benign.

    .venv/bin/python bench/redaction_throughput.py [--tasks 32] [--concurrency 8]
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import subprocess
import sys
import tempfile
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

from redaction_pressure.corpus import generate_task
from redaction_pressure.policies import oracle
from redaction_pressure.prompt import render_prompt
from redaction_pressure.scanner import EPISODE_CPU_BUDGET_S
from redaction_pressure.splits import DEV_SIZE, public_task_seed

HOSTILE_RULE = {"pattern": r"(?:\S|\S\S)+\s{2}Q", "replacement": ""}
FAKE_SERVER = (
    Path(__file__).resolve().parent.parent
    / "environments"
    / "redaction_pressure"
    / "tests"
    / "fake_openai.py"
)


def _server_class() -> Any:
    spec = importlib.util.spec_from_file_location("rp_bench_fake_openai", FAKE_SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.FakeChatServer


def _replies(tasks: int, hostile: bool) -> dict[str, str]:
    replies = {}
    for index in range(tasks):
        task = generate_task(public_task_seed("dev", index))
        rules = json.loads(oracle(task))["rules"]
        if hostile:
            rules.append(HOSTILE_RULE)
        replies[render_prompt(task)] = json.dumps({"rules": rules})
    return replies


def _stamp(value: Any) -> float:
    if isinstance(value, int | float):
        return float(value)
    return datetime.fromisoformat(str(value)).timestamp()


def _span(episodes: list[dict[str, Any]]) -> float:
    starts, ends = [], []
    for episode in episodes:
        for trace in episode["traces"]:
            timing = trace["timing"]
            starts.append(_stamp(timing["start"]))
            spans = ("boot", "setup", "agent", "finalize", "scoring")
            ends.append(max(_stamp(timing[name].get("end", 0.0)) for name in spans))
    return max(ends) - min(starts)


def _stage_medians(episodes: list[dict[str, Any]]) -> dict[str, float]:
    stages: dict[str, list[float]] = {}
    for episode in episodes:
        for trace in episode["traces"]:
            for name in ("setup", "agent", "scoring"):
                span = trace["timing"][name]
                stages.setdefault(name, []).append(max(0.0, span["end"] - span["start"]))
    return {name: sorted(values)[len(values) // 2] for name, values in stages.items()}


def _run(
    mode: str, tasks: int, concurrency: int, workdir: Path
) -> tuple[float, list[float], dict[str, float]]:
    replies = _replies(tasks, hostile=mode == "hostile")

    def answer(user_text: str) -> str:
        return replies.get(user_text, '{"rules": []}')

    chosen: Callable[[str], str] = answer
    server = _server_class()(chosen).start()
    try:
        bin_dir = Path(sys.executable).parent
        env = dict(os.environ)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        env["RP_BENCH_API_KEY"] = "not-a-real-key"
        out_dir = workdir / mode
        command = [
            str(bin_dir / "vf-eval"),
            "redaction-pressure",
            "-m",
            "fake-model",
            "--client.base-url",
            server.base_url,
            "--client.api-key-var",
            "RP_BENCH_API_KEY",
            "--no-push",
            "--no-rich",
            "--env.taskset.split",
            "dev",
            "-n",
            str(tasks),
            "-c",
            str(concurrency),
            "-o",
            str(out_dir),
            "--run.name",
            mode,
        ]
        completed = subprocess.run(
            command, cwd=workdir, env=env, capture_output=True, text=True, timeout=1800
        )
    finally:
        server.stop()
    if completed.returncode != 0:
        raise SystemExit(f"vf-eval failed ({mode}):\n{completed.stderr[-3000:]}")
    trace_file = sorted(out_dir.rglob("traces.jsonl"))[0]
    episodes = [json.loads(line) for line in trace_file.read_text().splitlines() if line]
    rewards = [
        sum(r["score"] * r["weight"] for r in trace["rewards"].values() if r)
        for episode in episodes
        for trace in episode["traces"]
    ]
    return len(episodes) / _span(episodes), rewards, _stage_medians(episodes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=32)
    parser.add_argument("--concurrency", type=int, default=8)
    args = parser.parse_args()
    tasks = max(1, min(args.tasks, DEV_SIZE))
    print(
        f"redaction-pressure vf-eval throughput, split=dev, tasks={tasks}, "
        f"concurrency={args.concurrency}, CPU budget {EPISODE_CPU_BUDGET_S:g} s"
    )
    print(f"{platform.platform()} | {os.cpu_count()} CPUs | Python {platform.python_version()}")
    with tempfile.TemporaryDirectory(prefix="rp-throughput-") as tmp:
        # Keep the run directories for inspection when asked.
        tmp = os.environ.get("RP_BENCH_KEEP", tmp)
        results = {
            mode: _run(mode, tasks, args.concurrency, Path(tmp)) for mode in ("benign", "hostile")
        }
    for mode, (rate, rewards, stages) in results.items():
        medians = "  ".join(f"{name} {value:.2f}s" for name, value in stages.items())
        print(
            f"{mode:<8} {rate:6.2f} episodes/s  mean reward {sum(rewards) / len(rewards):.3f} "
            f"over {len(rewards)} episodes  (median per episode: {medians})"
        )
    ratio = results["hostile"][0] / results["benign"][0]
    print(f"hostile / benign throughput: {ratio:.2f}x (target >= 0.8x)")


if __name__ == "__main__":
    main()
