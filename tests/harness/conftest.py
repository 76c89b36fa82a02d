"""Fixtures for the harness tests: a throwaway HOME and an operator tree.

Every test runs with HOME pointing at a temporary directory, so nothing here can read
or write the real home, and the harness's own toggles are cleared from the environment.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.helpers import EXAMPLES, Operator
from harness.privileges import IDENTITIES, Harness, harness_as


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
        "CHEAT_HINT",
        "OPENAI_BASE_URL",
        "OPENAI_MODEL",
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
    (checkout / "docs" / "harness.md").write_text(
        "# Harness\nEach task's verification checks run after the agent.\n", "utf-8"
    )
    results = root / "results"
    agent_home = tmp_path / "agent-home"
    return Operator(root, tasks, checkout, results, agent_home)


@pytest.fixture(params=IDENTITIES)
def harness(request: pytest.FixtureRequest, operator: Operator) -> Iterator[Harness]:
    """``benchguard run`` as root and as an unprivileged user (see harness.privileges)."""
    yield from harness_as(request.param, operator)
