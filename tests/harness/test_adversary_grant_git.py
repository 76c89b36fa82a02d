"""An agent file cannot grant itself a git repository holding this batch's tasks.

Red team 27 (git-objects): the agent file's ``install:`` named a bare ``git clone
--bare --no-local`` of a repository holding the task folders. Git stores every file as
an object under a hashed name, so the grant scan's search by name saw no ``task.yaml``;
the agent read each task's expected answer with ``git show`` and scored a clean 1.0 as
root and as a user, sandboxed and not. Here a standard-library agent
(tests/harness/adversaries/git_material.py) does the same through ``benchguard run``:
pre-flight must refuse the batch, naming the agent file, the grant, the repository and
a matching task file. An honest agent whose install holds an unrelated repository still
runs clean.
Checked: with the git check removed (grant_scan._Content.repo returning None) the
refused batches run and score 1.0 (answer 137 with no numbers.txt), in all four
configurations.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from harness.helpers import EXAMPLES
from harness.privileges import ADVERSARIES, Harness, records
from harness.test_adversary_grant_material import _hidden_tasks, _refused, _world

SCRIPT = ADVERSARIES / "git_material.py"
GIT_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"}


def git(*args: str, cwd: Path | None = None) -> None:
    subprocess.run(
        [
            "git",
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "init.defaultBranch=main",
            *args,
        ],
        cwd=cwd,
        env=GIT_ENV,
        check=True,
        capture_output=True,
    )


def bare_clone_of(tree: Path, repo: Path) -> Path:
    """A bare ``--no-local`` clone (its own objects, no hard links) of a repository
    whose one commit holds ``tree``'s files."""
    work = repo.with_name(repo.name + "-work")
    shutil.copytree(tree, work)
    git("init", "-q", str(work))
    git("add", "-A", cwd=work)
    git("commit", "-qm", "the suite", cwd=work)
    git("clone", "-q", "--bare", "--no-local", str(work), str(repo))
    shutil.rmtree(work)
    return repo


def _agent(root: Path, script: Path, grant: Path, *args: str) -> Path:
    agents = root / "git-agents"
    agents.mkdir(exist_ok=True)
    shutil.copy(script, agents / script.name)
    config = {
        "name": script.stem,
        "argv": ["{python}", "{agent_dir}/" + script.name, "{prompt}", *args],
        "install": [str(grant)],
        "trajectory": "jsonl",
        "model": "adversary",
    }
    path = agents / f"{script.stem}.yaml"
    path.write_text(json.dumps(config), "utf-8")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_a_git_repository_of_the_tasks_cannot_be_granted(harness: Harness, sandbox: str) -> None:
    """Guards against git-objects: ``install:`` naming a bare clone of the suite."""
    operator = harness.operator
    tasks = _hidden_tasks(operator.root)
    repo = bare_clone_of(tasks, operator.root / "agentdata" / "bench.git")
    agent = _agent(operator.root, SCRIPT, repo, str(repo))
    message = _refused(harness, tasks, agent, sandbox)
    assert str(agent) in message and f"install path {repo}" in message, message
    assert f"a git repository holding this batch's task file {tasks}" in message, message
    assert f"({repo})" in message and "Traceback" not in message, message


@pytest.mark.slow
def test_an_unrelated_git_repository_can_be_granted(harness: Harness) -> None:
    """An honest agent whose install is a repository of something else runs clean."""
    operator = harness.operator
    library = operator.root / "library-src"
    library.mkdir()
    (library / "README.md").write_text("A small helper library for the agent.\n", "utf-8")
    (library / "helper.py").write_text("def helper() -> int:\n    return 42\n", "utf-8")
    repo = bare_clone_of(library, operator.root / "agentdata" / "library.git")
    git(f"--git-dir={repo}", "gc", "-q", "--prune=now")
    agent = _agent(operator.root, EXAMPLES / "agents" / "honest.py", repo)
    shutil.copy(EXAMPLES / "agents" / "scripted.py", agent.parent / "scripted.py")
    _world(operator.root)
    run_dir = harness.run_ok(str(operator.tasks), "--agent", str(agent))
    found = records(run_dir)
    assert found and all(r["cheating_report"]["status"] == "clean" for r in found), found
    scores = [r["scores"]["OutcomeScore"]["score"] for r in found]
    assert scores == [1.0] * len(found), scores
