"""Produce ``vf_eval_traces.jsonl``: a real verifiers 0.4 ``vf-eval`` run, offline.

``vf-eval`` runs the one-task taskset in ``vf_probe/`` with its ``bash`` harness in the
``subprocess`` runtime against the scripted server in ``fake_openai.py``: the "model"
first reads the benchmark's task file, then answers. The harness really executes the
commands (the task file does not exist on the generating machine, so the read fails
harmlessly), and vf-eval writes its own ``traces.jsonl``, copied here unchanged.

    .venv/bin/python tests/results/tool_logs/make_vf_eval_log.py
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
# Run as a script: tests/ on the path makes this folder importable as a package.
sys.path.insert(0, str(HERE.parents[1]))

from results.tool_logs.fake_openai import FakeOpenAI  # noqa: E402

COMMANDS = ["cat ~/benchguard/tasks/fix-login/task.yaml", "ls app"]
FINAL = "Fixed the login bug. The answer is 42."


def main() -> int:
    vf_eval = Path(sys.executable).parent / "vf-eval"
    with tempfile.TemporaryDirectory() as folder, FakeOpenAI(COMMANDS, FINAL) as server:
        env = {
            **os.environ,
            "PYTHONPATH": f"{HERE / 'vf_probe'}{os.pathsep}{os.environ.get('PYTHONPATH', '')}",
            "FAKE_API_KEY": "not-a-secret",
        }
        command = [
            str(vf_eval), "probe-tasks", "-m", "fake-model", "-n", "1", "-r", "1",
            "--env.agent.harness.id", "bash", "--env.agent.runtime.type", "subprocess",
            "--env.agent.max-turns", "4", "--client.base-url", server.base_url,
            "--client.api-key-var", "FAKE_API_KEY", "--no-push", "--no-rich",
            "-o", folder, "--run.name", "probe",
        ]  # fmt: skip
        done = subprocess.run(command, env=env, cwd=folder, check=False, timeout=600)
        traces = sorted(Path(folder).rglob("traces.jsonl"))
        if done.returncode != 0 or not traces:
            print(f"vf-eval failed (exit {done.returncode}); traces: {traces}", file=sys.stderr)
            return 1
        shutil.copy(traces[0], HERE / "vf_eval_traces.jsonl")
    print(f"wrote {HERE / 'vf_eval_traces.jsonl'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
