"""Agent configs, argv rendering, the trajectory adapters and the process-group kill."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from benchguard.harness.agents.config import (
    AgentConfig,
    AgentConfigError,
    agent_environment,
    render_argv,
    resolve_agent,
)
from benchguard.harness.process import run_process
from benchguard.harness.trajectory import capture, parse_protocol_lines
from harness.helpers import AGENTS, claude_bash_call, eventually_gone


def test_prompt_with_shell_metacharacters_stays_one_argument(tmp_path: Path) -> None:
    """Guards against a prompt being interpreted by a shell (argv, never a string)."""
    agent = AgentConfig(name="a", argv=("{python}", "-c", "x", "--p={prompt}", "{{lit}}"))
    prompt = 'it\'s $(rm -rf ~); `echo` "quoted"\nnew line'
    argv = render_argv(agent, prompt=prompt, workspace=tmp_path, home=tmp_path / "h")
    assert argv == [sys.executable, "-c", "x", f"--p={prompt}", "{lit}"]


def test_shell_string_argv_and_unknown_placeholder_are_rejected(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nargv: 'claude -p {prompt}'\n", "utf-8")
    with pytest.raises(AgentConfigError, match=r"bad\.yaml: field argv: .*not a shell string"):
        resolve_agent(str(bad))
    bad.write_text("name: bad\nargv: [x, '{task_dir}']\n", "utf-8")
    with pytest.raises(AgentConfigError, match=r"unknown placeholder \{task_dir\}"):
        resolve_agent(str(bad))


def test_environment_is_an_allowlist_and_never_carries_harness_variables(tmp_path: Path) -> None:
    """Guards against the operator's env (keys, harness settings) leaking into the agent."""
    with pytest.raises(ValueError, match="cannot be allowlisted"):
        AgentConfig(name="a", argv=("x",), env=("BENCHGUARD_CHEAT_RULES",))
    agent = AgentConfig(name="a", argv=("x",), env=("KEEP", "ABSENT"), set_env={"FIXED": "1"})
    parent = {"KEEP": "k", "SECRET_TOKEN": "s", "PATH": "/opt/bin", "HOME": "/root"}
    env = agent_environment(agent, home=tmp_path, trajectory_file=tmp_path / "t", parent=parent)
    assert env == {
        "KEEP": "k",
        "FIXED": "1",
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(tmp_path),
        "BENCHGUARD_TRAJECTORY": str(tmp_path / "t"),
    }


def test_agents_resolve_by_path_by_name_and_builtin() -> None:
    assert resolve_agent(str(AGENTS / "honest.yaml")).name == "honest"
    assert resolve_agent("cheat-task-yaml", search_dirs=(AGENTS,)).name == "cheat-task-yaml"
    assert resolve_agent("benchguard-agent").uses_builtin_agent()
    with pytest.raises(AgentConfigError, match="unknown agent 'nobody'"):
        resolve_agent("nobody", search_dirs=(AGENTS,))


def test_corrupt_and_unknown_protocol_lines_become_errors_and_good_lines_survive() -> None:
    """Guards against one bad line (or a killed writer's half line) losing the transcript."""
    lines = [
        json.dumps(
            {"name": "shell", "args": {"command": "ls"}, "result": "a", "status": "completed"}
        ),
        "{not json",
        json.dumps(["a list"]),
        json.dumps({"name": "read", "args": '{"path": "x"}', "status": "weird", "extra": 1}),
        json.dumps({"args": {"command": "cat ~/x"}, "result": {"structured": True}}),
        '{"name": "shell", "args": {"command": "cat ta',
    ]
    steps, errors = parse_protocol_lines(lines)
    assert [s["name"] for s in steps] == ["shell", "read", "unknown"]
    assert steps[1]["args"] == {"path": "x", "_unknown": {"extra": 1}}
    assert steps[1]["status"] == "error"
    assert steps[2]["result"] == '{"structured": true}'
    assert [e.split(":")[0] for e in errors] == [
        "trajectory line 2",
        "trajectory line 3",
        "trajectory line 4",
        "trajectory line 4",
        "trajectory line 5",
        "trajectory line 6",
    ]


def test_claude_stream_json_and_stdout_adapters(tmp_path: Path) -> None:
    stdout = tmp_path / "out"
    stdout.write_text(
        "\n".join(
            json.dumps(e)
            for e in [
                {"type": "system", "subtype": "init", "session_id": "s"},
                *claude_bash_call("cat tasks/a/task.yaml", "verification: []"),
                {"type": "mystery"},
                {"type": "result", "subtype": "success", "result": "done"},
            ]
        ),
        "utf-8",
    )
    taken = capture("claude-stream-json", stdout_file=stdout, trajectory_file=tmp_path / "none")
    assert taken.trajectory == [
        {
            "name": "Bash",
            "args": {"command": "cat tasks/a/task.yaml"},
            "result": "verification: []",
            "status": "completed",
        }
    ]
    assert taken.output == "done"
    assert len(taken.errors) == 1 and "unknown type 'mystery'" in taken.errors[0]
    plain = capture("stdout", stdout_file=stdout, trajectory_file=tmp_path / "none")
    assert plain.trajectory == [] and plain.output.endswith('"result": "done"}')


@pytest.mark.slow
def test_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    """Guards against an agent's background children outliving its run after a timeout."""
    pid_file = tmp_path / "grandchild.pid"
    script = f"sleep 300 & echo $! > {pid_file}; wait"
    finished = run_process(
        ["/bin/sh", "-c", script],
        cwd=tmp_path,
        env={"PATH": "/usr/bin:/bin"},
        timeout_s=1.0,
        stdout_file=tmp_path / "o",
        stderr_file=tmp_path / "e",
    )
    assert finished.timed_out and finished.returncode is None
    grandchild = int(pid_file.read_text().strip())
    assert eventually_gone(grandchild)
