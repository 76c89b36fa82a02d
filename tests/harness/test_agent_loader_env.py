"""An agent file cannot hand the dynamic loader to the harness's own wrappers.

Red team 5's ``ldpreload-steal``: ``set_env: {LD_PRELOAD: steal.so}`` reached every
program the harness starts before the launcher confines the agent (``unshare``,
``setpriv``, ``bwrap``, the separation), so the library's constructor ran as uid 0 with
every capability in the host's namespaces, read the task's expected output and scored
1.0 clean in five configurations. Loader and libc variables are now refused when the
agent file loads (bad input, nothing runs); the agent's own command can still set them,
and runs confined.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from benchguard.harness.agents.config import AgentConfig
from harness.helpers import Operator

LOADER = ["LD_PRELOAD", "LD_LIBRARY_PATH", "LD_AUDIT", "GCONV_PATH", "GLIBC_TUNABLES"]


def _agent_file(root: Path, setting: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    agent = root / "preload.yaml"
    agent.write_text(
        "name: preload\n"
        "argv: [\"{python}\", \"-c\", \"open('answer.txt', 'w').write('ok')\"]\n"
        "trajectory: stdout\nmodel: scripted\n" + setting,
        "utf-8",
    )
    return agent


@pytest.mark.parametrize("name", LOADER)
def test_a_loader_variable_in_set_env_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match=f"{name}.*cannot be set.*agent's command"):
        AgentConfig(name="a", argv=("x",), set_env={name: "/tmp/steal.so"})


@pytest.mark.parametrize("name", LOADER)
def test_a_loader_variable_cannot_be_allowlisted(name: str) -> None:
    with pytest.raises(ValueError, match=f"{name}.*cannot be allowlisted"):
        AgentConfig(name="a", argv=("x",), env=(name,))


def test_an_ordinary_variable_is_still_set() -> None:
    agent = AgentConfig(name="a", argv=("x",), set_env={"LANG": "C.UTF-8", "LDFLAGS": "-s"})
    assert agent.set_env == {"LANG": "C.UTF-8", "LDFLAGS": "-s"}


@pytest.mark.parametrize(
    "setting",
    ['set_env: {LD_PRELOAD: "/tmp/steal.so"}\n', "env: [LD_PRELOAD]\n"],
    ids=["set_env", "env"],
)
def test_benchguard_run_refuses_the_agent_file_before_any_run(
    operator: Operator, tmp_path: Path, setting: str
) -> None:
    agent = _agent_file(tmp_path / "agent", setting)
    code, output, run_dir = operator.run(str(operator.tasks), "--agent", str(agent))
    assert code == 2, output
    assert "LD_PRELOAD" in output and str(agent) in output, output
    assert "Traceback" not in output
    assert run_dir is None or not list(run_dir.glob("runs/*.json"))
