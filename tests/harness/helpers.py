"""Helpers shared by the harness tests: an operator tree, result readers and process probes."""

from __future__ import annotations

import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from benchguard.cli import app
from benchguard.harness.identity import AgentIdentity, hand_over
from benchguard.harness.process import read_process
from benchguard.harness.tasks import Task
from benchguard.harness.verification import CheckSandbox, Grading, grade

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
AGENTS = EXAMPLES / "agents"
# Generous: the processes the tests wait on are killed within milliseconds; the bound
# only keeps a broken build from hanging the suite.
GONE_WITHIN_S = 20.0


@dataclass
class Operator:
    """An operator's tree: the tasks, a harness checkout, results and the agent home."""

    root: Path
    tasks: Path
    checkout: Path
    results: Path
    agent_home: Path

    def run(
        self, *args: str, env: dict[str, str] | None = None, home: Path | None = None
    ) -> tuple[int, str, Path | None]:
        """``benchguard run`` in-process; returns exit code, stderr+stdout, run dir."""
        result = CliRunner().invoke(
            app,
            [
                "run",
                *args,
                "--out",
                str(self.results),
                "--home",
                str(home or self.agent_home),
                "--quiet",
            ],
            env=env,
            catch_exceptions=False,
        )
        lines = result.stdout.strip().splitlines()
        # A batch that ran prints its run directory last, whatever its exit code.
        run_dir = Path(lines[-1]) if lines and Path(lines[-1]).is_dir() else None
        return result.exit_code, result.output, run_dir

    def run_ok(
        self,
        *args: str,
        env: dict[str, str] | None = None,
        home: Path | None = None,
        code: int | None = None,
    ) -> Path:
        """``run`` that must publish: asserts the exit ``code`` (default: 0 or 1, every
        run completed, flagged or not) and returns the run dir."""
        exit_code, output, run_dir = self.run(*args, env=env, home=home)
        assert exit_code in ((0, 1) if code is None else (code,)), output
        assert run_dir is not None
        return run_dir


def only_tasks(operator: Operator, *folders: str) -> Path:
    """A tasks directory (named ``tasks``) holding just ``folders``, in the given order."""
    target = operator.root / "subsets" / "-".join(folders) / "tasks"
    if target.is_dir():
        return target
    target.mkdir(parents=True)
    for index, folder in enumerate(folders):
        shutil.copytree(operator.tasks / folder, target / f"{index:02d}-{folder}")
    return target


def load_run(run_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    records = json.loads((run_dir / "results.json").read_text("utf-8"))["records"]
    rows = json.loads((run_dir / "rows.json").read_text("utf-8"))
    manifest = json.loads((run_dir / "manifest.json").read_text("utf-8"))
    return records, rows, manifest


def agent(name: str) -> str:
    return str(AGENTS / f"{name}.yaml")


def claude_bash_call(command: str, result: str) -> list[dict[str, Any]]:
    """Claude stream-json events for one ``Bash`` tool call: the assistant's
    ``tool_use`` of ``command`` and the user message returning ``result``."""
    call = {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": command}}
    returned = {"type": "tool_result", "tool_use_id": "t1", "content": result}
    return [
        {"type": "assistant", "message": {"content": [call]}},
        {"type": "user", "message": {"content": [returned]}},
    ]


def prior_run(operator: Operator, folder: str = "sum-numbers") -> Path:
    """An honest run of one example task: its run directory is a cheater's "prior
    results", and its deliverables stay in the agent home as leftovers (the home is
    persistent for it, as an operator's shared home would be)."""
    return operator.run_ok(
        str(only_tasks(operator, folder)), "--agent", agent("honest"), "--home-mode", "persistent"
    )


def alive(pid: int) -> bool:
    """Whether ``pid`` runs; a killed process not yet reaped (a zombie) counts as dead."""
    info = read_process(pid)
    return info is not None and info.state not in ("Z", "X")


def eventually_gone(pid: int) -> bool:
    """Whether ``pid`` is dead within :data:`GONE_WITHIN_S`."""
    deadline = time.monotonic() + GONE_WITHIN_S
    while time.monotonic() < deadline:
        if not alive(pid):
            return True
        time.sleep(0.05)
    return False


def box_sandbox(sandbox: str, workspace: Path) -> CheckSandbox | None:
    """The grading box's sandbox for ``sandbox`` ("none" or "bwrap"), as the harness
    makes it: in bubblewrap as the agent uid when the tests run as root, the workspace
    handed to that uid."""
    if sandbox != "bwrap":
        return None
    identity = AgentIdentity(65534, 65534) if os.geteuid() == 0 else None
    if identity is not None:
        hand_over(identity, workspace)
    return CheckSandbox("bwrap", identity)


def grade_workspaces(
    task: Task, root: Path, workspaces: dict[str, dict[str, str]], sandbox: str
) -> dict[str, Grading]:
    """Each named workspace (relative path -> text) under ``root``, graded against
    ``task`` in the box as the harness grades it (``sandbox``: "none" or "bwrap"),
    with one empty home."""
    home = root / "home"
    home.mkdir(exist_ok=True)
    outcomes: dict[str, Grading] = {}
    for name, files in workspaces.items():
        workspace = root / name
        workspace.mkdir()
        for file, text in files.items():
            (workspace / file).parent.mkdir(parents=True, exist_ok=True)
            (workspace / file).write_text(text, "utf-8")
        checks = box_sandbox(sandbox, workspace)
        outcomes[name] = grade(task, workspace=workspace, home=home, sandbox=checks)
    return outcomes
