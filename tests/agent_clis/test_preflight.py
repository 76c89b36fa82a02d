"""Pre-flight: a batch whose agent cannot start is refused before the first run."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from agent_clis.runs import Operator, runnable_agent

pytestmark = pytest.mark.slow


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _refused(operator: Operator, agent: Path, *args: str, env: dict[str, str] | None = None) -> str:
    before = _run_dirs(operator)
    code, output, run_dir = operator.run(str(operator.tasks), "--agent", str(agent), *args, env=env)
    assert code == 2, output
    assert run_dir is None
    assert "pre-flight refused the batch" in output
    assert _run_dirs(operator) == before, "no run may start"
    return output


def _run_dirs(operator: Operator) -> list[str]:
    return sorted(p.name for p in operator.results.glob("run_*"))


def test_a_program_missing_from_the_agents_path_is_refused(
    operator: Operator, tmp_path: Path
) -> None:
    """Guards against a batch that fails every run because the CLI is not installed
    where the agent's PATH looks (the harness's own PATH does not count)."""
    agent = tmp_path / "ghost.yaml"
    agent.write_text('name: ghost\nargv: ["ghost-cli-not-installed", "{prompt}"]\n', "utf-8")
    output = _refused(operator, agent)
    assert "'ghost-cli-not-installed' is not found" in output and "ghost.yaml" in output


def test_a_program_that_cannot_run_inside_the_sandbox_is_refused(
    operator: Operator, tmp_path: Path
) -> None:
    """Guards against discovering only after the batch that the sandbox hides part of
    the agent (here the interpreter its launcher names), as `bwrap: execvp ...` on
    every record: unsandboxed the check passes, sandboxed the batch is refused."""
    interpreters = tmp_path / "opt" / "interp"
    interpreters.mkdir(parents=True)
    (interpreters / "python3").symlink_to(sys.executable)
    launcher = tmp_path / "opt" / "bin" / "launcher"
    launcher.parent.mkdir()
    launcher.write_text(
        f"#!{interpreters / 'python3'}\nimport sys\nprint('launcher 1.0')\n", "utf-8"
    )
    launcher.chmod(0o755)
    agent = tmp_path / "agents" / "launcher.yaml"
    agent.parent.mkdir()
    agent.write_text(
        f'name: launcher\nargv: ["{launcher}", "{{prompt}}"]\n'
        f'check_argv: ["{launcher}", "--version"]\ntrajectory: stdout\n',
        "utf-8",
    )
    operator.run_ok(str(operator.tasks), "--agent", str(agent), "--no-detect")
    output = _refused(operator, agent, "--sandbox", "bwrap")
    assert "inside the bwrap sandbox" in output and "exited" in output


@pytest.mark.parametrize("cli", ["claude-code", "codex"])
def test_a_model_endpoint_that_does_not_answer_is_refused(
    operator: Operator, tmp_path: Path, cli: str
) -> None:
    """Guards against a batch of runs that each hang or retry until the timeout
    because the model endpoint is down."""
    agent = runnable_agent(cli, tmp_path / "agents")
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    variable = "ANTHROPIC_BASE_URL" if cli == "claude-code" else "OPENAI_BASE_URL"
    output = _refused(operator, agent, env={variable: url})
    assert f"model endpoint {url} ({variable}) does not answer" in output


def test_codex_without_its_endpoint_variable_is_refused(operator: Operator, tmp_path: Path) -> None:
    """Guards against Codex starting with an empty provider URL (its argv needs one)."""
    output = _refused(operator, runnable_agent("codex", tmp_path / "agents"))
    assert "OPENAI_BASE_URL is not set" in output
