"""A real ``vf-eval redaction-pressure`` run against a local fake model that answers
with the oracle's reply; the written traces must show the contract's 1.0."""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from redaction_pressure.corpus import generate_task
from redaction_pressure.policies import oracle
from redaction_pressure.prompt import render_prompt
from redaction_pressure.splits import PUBLIC_COMMITMENTS, public_task_seed

TASKS = 2


def _fake_chat_server_class() -> type:
    # pytest runs with --import-mode=importlib, so sibling helpers are not importable
    # by name; load the helper module from its file.
    path = Path(__file__).with_name("fake_openai.py")
    spec = importlib.util.spec_from_file_location("rp_fake_openai", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    server_class: type = module.FakeChatServer
    return server_class


@pytest.mark.slow
def test_vf_eval_oracle_run_writes_perfect_traces(tmp_path: Path) -> None:
    """Guards the whole path a user takes: package loading by id, the exported Env's
    null-harness/subprocess/one-turn defaults, scoring inside vf-eval, and what lands in
    traces.jsonl (vf-eval exits 0 even when rollouts fail, so the traces are checked)."""
    replies = {}
    for index in range(TASKS):
        task = generate_task(public_task_seed("dev", index))
        replies[render_prompt(task)] = oracle(task)

    def answer(user_text: str) -> str:
        return replies.get(user_text, '{"rules": []}')

    server = _fake_chat_server_class()(answer).start()
    try:
        bin_dir = Path(sys.executable).parent
        env = dict(os.environ)
        env["PATH"] = f"{bin_dir}{os.pathsep}{env.get('PATH', '')}"
        env["RP_FAKE_API_KEY"] = "not-a-real-key"
        out_dir = tmp_path / "outputs"
        command = [
            str(bin_dir / "vf-eval"),
            "redaction-pressure",
            "-m",
            "fake-model",
            "--client.base-url",
            server.base_url,
            "--client.api-key-var",
            "RP_FAKE_API_KEY",
            "--no-push",
            "--no-rich",
            "--env.taskset.split",
            "dev",
            "-n",
            str(TASKS),
            "-o",
            str(out_dir),
            "--run.name",
            "e2e",
        ]
        completed = subprocess.run(
            command, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=540
        )
    finally:
        server.stop()
    diagnostics = completed.stdout[-3000:] + completed.stderr[-3000:]
    assert completed.returncode == 0, diagnostics
    trace_files = sorted(out_dir.rglob("traces.jsonl"))
    assert trace_files, diagnostics
    episodes = [json.loads(line) for line in trace_files[0].read_text().splitlines() if line]
    assert len(episodes) == TASKS, diagnostics
    seen = set()
    for episode in episodes:
        assert episode["ok"] is True, episode.get("errors")
        assert episode["errors"] == []
        (trace,) = episode["traces"]
        assert trace["ok"] is True, trace.get("errors")
        rewards = {name: r["score"] * r["weight"] for name, r in trace["rewards"].items()}
        assert sum(rewards.values()) == 1.0, trace["rewards"]
        info = trace["info"]
        assert info["redaction_errors"] == []
        identity = info["environment"]
        assert identity["environment"] == "redaction-pressure"
        assert identity["split"] == "dev"
        assert identity["split_commitment"] == PUBLIC_COMMITMENTS["dev"]
        assert identity["source_digest"].startswith("sha256:")
        assert trace["task"]["data"]["environment"] == identity
        assert trace["metrics"]["damaged_decoys"] == 0
        seen.add(trace["task"]["data"]["index"])
    assert seen == set(range(TASKS))
    # The model really was asked through the null harness: one request per task.
    assert len(server.requests) == TASKS
