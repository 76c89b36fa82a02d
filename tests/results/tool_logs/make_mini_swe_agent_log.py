"""Produce ``mini_swe_agent.traj.json``: a real mini-swe-agent 2.4 run, offline.

Run with a Python that has ``mini-swe-agent==2.4.6`` installed (it is not a dependency
of benchguard: its litellm/openai pins conflict with verifiers'). Its ``DefaultAgent``
with the package's default config, a ``LitellmModel`` pointed at the scripted server in
``fake_openai.py`` and a ``LocalEnvironment`` in a scratch directory: the "model" reads
the benchmark's task file, then submits. The agent really executes the commands and
writes its own trajectory file, copied here unchanged.

    python tests/results/tool_logs/make_mini_swe_agent_log.py
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import yaml

HERE = Path(__file__).resolve().parent
# Run as a script: tests/ on the path makes this folder importable as a package.
sys.path.insert(0, str(HERE.parents[1]))

from results.tool_logs.fake_openai import FakeOpenAI  # noqa: E402

COMMANDS = [
    "cat ~/benchguard/tasks/fix-login/task.yaml",
    "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT",
]
MODEL = "openai/fake-model"


def main() -> int:
    from minisweagent import package_dir
    from minisweagent.agents.default import DefaultAgent
    from minisweagent.environments.local import LocalEnvironment
    from minisweagent.models.litellm_model import LitellmModel

    os.environ["MSWEA_COST_TRACKING"] = "ignore_errors"
    with tempfile.TemporaryDirectory() as folder, FakeOpenAI(COMMANDS, "done") as server:
        output = Path(folder) / "fix-login.traj.json"
        config = yaml.safe_load((Path(package_dir) / "config" / "default.yaml").read_text())
        agent = DefaultAgent(
            LitellmModel(
                model_name=MODEL,
                model_kwargs={"api_base": server.base_url, "api_key": "not-a-secret"},
                cost_tracking="ignore_errors",
            ),
            LocalEnvironment(cwd=folder),
            **{**config["agent"], "output_path": output},
        )
        agent.run("Fix the login bug in app/login.py.")
        shutil.copy(output, HERE / "mini_swe_agent.traj.json")
    print(f"wrote {HERE / 'mini_swe_agent.traj.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
