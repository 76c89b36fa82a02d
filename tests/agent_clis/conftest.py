"""Fixtures for the real agent CLIs: an operator tree and the fake model servers."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_clis.fake_models import FakeAnthropic, FakeResponses, ScriptFor
from agent_clis.runs import EXAMPLES, Operator
from agent_clis.sessions import Sessions


@pytest.fixture(autouse=True)
def isolated_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    home = tmp_path / "operator-home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    for name in (
        "BENCHGUARD_CHEAT_DETECT",
        "BENCHGUARD_CHEAT_INVENTORY",
        "BENCHGUARD_CHEAT_RULES",
        "BENCHGUARD_INVENTORY_ROOTS",
        "BENCHGUARD_AGENT_HOME",
        "ANTHROPIC_BASE_URL",
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_MODEL",
        "OPENAI_BASE_URL",
        "OPENAI_API_KEY",
    ):
        monkeypatch.delenv(name, raising=False)
    yield home


@pytest.fixture
def operator(tmp_path: Path) -> Operator:
    root = tmp_path / "operator"
    tasks = root / "tasks"
    shutil.copytree(EXAMPLES / "tasks", tasks)
    checkout = root / "benchguard"
    (checkout / "docs").mkdir(parents=True)
    (checkout / "docs" / "harness.md").write_text("# Harness\n", "utf-8")
    return Operator(root, tasks, checkout, root / "results", tmp_path / "agent-home")


@pytest.fixture
def sessions(operator: Operator) -> Sessions:
    return Sessions(tasks=operator.tasks)


def _serve(server: FakeAnthropic | FakeResponses) -> Iterator[FakeAnthropic | FakeResponses]:
    server.start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def anthropic(sessions: Sessions) -> Iterator[FakeAnthropic | FakeResponses]:
    script_for: ScriptFor = sessions.script_for
    yield from _serve(FakeAnthropic(script_for))


@pytest.fixture
def responses(sessions: Sessions) -> Iterator[FakeAnthropic | FakeResponses]:
    yield from _serve(FakeResponses(sessions.script_for))
