"""Deadlines mean deadlines: work an agent CLI does after its run's timeout never counts.

Claude Code answers SIGTERM by killing the running tool and carrying on; given a grace
period it asks the model again and finishes the task after the deadline. The run is
stopped hard at the deadline instead, so the workspace is judged as it was then.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from agent_clis.fake_models import FakeAnthropic
from agent_clis.runs import Operator, load_run, runnable_agent
from agent_clis.sessions import Sessions

pytestmark = pytest.mark.slow

DEADLINE_S = 4


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_work_after_the_deadline_does_not_count(
    operator: Operator,
    tmp_path: Path,
    sandbox: str,
    sessions: Sessions,
    anthropic: FakeAnthropic,
) -> None:
    """Guards against an agent that outlives its deadline (a tool that hangs, then the
    answer written in the grace period) scoring as if it had finished in time."""
    for other in sorted(operator.tasks.iterdir()):
        if other.name != "sum-numbers":
            shutil.rmtree(other)
    task = operator.tasks / "sum-numbers" / "task.yaml"
    task.write_text(
        re.sub(r"(?m)^timeout: .*$", f"timeout: {DEADLINE_S}", task.read_text("utf-8")), "utf-8"
    )
    sessions.cheat, sessions.cheat_commands = (
        True,
        ("python3 -c 'import time; time.sleep(60)'",),
    )  # then the answer
    agent = runnable_agent("claude-code", tmp_path / "agents")
    env = {"ANTHROPIC_BASE_URL": anthropic.base_url, "ANTHROPIC_API_KEY": "sk-test"}
    code, output, run_dir = operator.run(
        str(operator.tasks), "--agent", str(agent), "--sandbox", sandbox, env=env
    )
    assert run_dir is not None and code == 0, output
    [record], [row] = load_run(run_dir)
    assert record["status"] == "timeout" and row["status"] == "timeout", record
    assert "stopped at the deadline" in record["error"], record["error"]
    assert "stopped at the deadline" in (row.get("error") or ""), row
    assert record["scores"]["VerificationCorrectness"]["score"] == 0.0, record["scores"]
    assert row["outcomeScore"] == 0.0
    assert record["duration_s"] < DEADLINE_S + 2, record["duration_s"]


LATE_WORKER = """\
import pathlib, signal, sys, time

def finish_late(signum, frame):
    # Past the deadline: do the task now, in whatever grace period is given.
    total = sum(int(line) for line in pathlib.Path("numbers.txt").read_text().split())
    pathlib.Path("answer.txt").write_text(f"{total}\\n")
    sys.exit(0)

signal.signal(signal.SIGTERM, finish_late)
time.sleep(600)
"""


@pytest.mark.parametrize("audit", ["none", "auto"])
@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_an_agent_that_works_in_the_grace_period_gets_no_credit(
    operator: Operator, tmp_path: Path, sandbox: str, audit: str
) -> None:
    """Guards against an agent that idles until the deadline, traps SIGTERM and writes
    its answer then: with a grace period it scored 1.0 as a timeout. Audited runs end
    through the tracer, the others through the process group: both stop hard."""
    for other in sorted(operator.tasks.iterdir()):
        if other.name != "sum-numbers":
            shutil.rmtree(other)
    task = operator.tasks / "sum-numbers" / "task.yaml"
    task.write_text(re.sub(r"(?m)^timeout: .*$", "timeout: 2", task.read_text("utf-8")), "utf-8")
    agents = tmp_path / "agents"
    agents.mkdir()
    (agents / "late_worker.py").write_text(LATE_WORKER, "utf-8")
    agent = agents / "late-worker.yaml"
    agent.write_text(
        'name: late-worker\nargv: ["{python}", "{agent_dir}/late_worker.py"]\ntrajectory: stdout\n',
        "utf-8",
    )
    code, output, run_dir = operator.run(
        str(operator.tasks), "--agent", str(agent), "--sandbox", sandbox, "--audit", audit
    )
    assert run_dir is not None and code == 0, output
    [record], [row] = load_run(run_dir)
    assert record["status"] == "timeout", record
    assert "stopped at the deadline" in row["error"], row
    assert record["scores"]["VerificationCorrectness"]["score"] == 0.0, record["scores"]
    assert row["outcomeScore"] == 0.0, row
