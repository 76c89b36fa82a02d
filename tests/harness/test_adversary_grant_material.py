"""An agent file cannot grant itself benchmark material of another batch.

Red team 6 (resgrab, taskgrab): the agent file's ``install:`` named a directory holding
an earlier batch's results (every record carries the task's ``expected_output``) or
another copy of the task folders; pre-flight only refused this batch's tasks and
``--out``, Landlock granted the read, and the agent answered from it on a task whose
workspace holds nothing to compute from. Here a standard-library agent
(tests/harness/adversaries/grant_material.py) does the same through ``benchguard run``,
as root and as an unprivileged harness, sandboxed and not: pre-flight must refuse the
batch, naming the agent file, the field, the material found and what is allowed.
Checked: with the search removed (confine.exposure_problems back to its prefix test)
the resgrab and taskgrab batches run and score 1.0 (answer 137 with no numbers.txt).
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from benchguard.harness import grant_scan
from benchguard.harness.agents.config import resolve_agent
from benchguard.harness.confine import exposure_problems
from benchguard.harness.grant_content import task_material
from benchguard.harness.job import sandbox_read_only
from harness.helpers import EXAMPLES, REPO
from harness.privileges import ADVERSARIES, Harness, records

SCRIPT = ADVERSARIES / "grant_material.py"


def _hidden_tasks(root: Path) -> Path:
    """sum-numbers without its numbers.txt (nothing to compute the answer from) and so
    without the checks on it: a grabbed answer scores a clean 1.0."""
    tasks = root / "hidden-tasks"
    shutil.copytree(EXAMPLES / "tasks" / "sum-numbers", tasks / "sum-numbers")
    (tasks / "sum-numbers" / "workspace" / "numbers.txt").write_text("", "utf-8")
    task = tasks / "sum-numbers" / "task.yaml"
    text = task.read_text("utf-8")
    task.write_text(
        text[: text.index("  - name: input-kept")] + 'expected_output: "137"\n', "utf-8"
    )
    return tasks


def _agent(root: Path, grant: Path) -> Path:
    agents = root / "grab-agents"
    agents.mkdir(exist_ok=True)
    shutil.copy(SCRIPT, agents / SCRIPT.name)
    config = {
        "name": "grab",
        "argv": ["{python}", "{agent_dir}/" + SCRIPT.name, "{prompt}", str(grant)],
        "install": [str(grant)],
        "trajectory": "jsonl",
        "model": "adversary",
    }
    path = agents / "grab.yaml"
    path.write_text(json.dumps(config), "utf-8")
    return path


def _world(root: Path) -> None:
    for path in [root, *root.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644, follow_symlinks=False)
        if os.geteuid() == 0 and root.stat().st_uid != 0:
            os.chown(path, root.stat().st_uid, root.stat().st_gid, follow_symlinks=False)


def _refused(harness: Harness, tasks: Path, agent: Path, sandbox: str) -> str:
    _world(harness.operator.root)
    code, output, run_dir = harness.run(str(tasks), "--agent", str(agent), "--sandbox", sandbox)
    if run_dir is not None:
        scores = [r.get("scores") for r in records(run_dir)]
        pytest.fail(f"the batch ran (exit {code}); records' scores: {scores}")
    assert code == 2, output
    return " ".join(output.split())


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_an_earlier_batch_s_results_cannot_be_granted(harness: Harness, sandbox: str) -> None:
    """Guards against resgrab: ``install:`` naming an earlier batch's --out."""
    operator = harness.operator
    old = operator.root / "old-results"
    # An earlier batch (any agent): its records carry expected_output.
    harness.run_ok(str(operator.tasks), "--agent", str(EXAMPLES / "agents" / "noop.yaml"))
    operator.results.rename(old)
    agent = _agent(operator.root, old)
    message = _refused(harness, _hidden_tasks(operator.root), agent, sandbox)
    assert str(agent) in message and "install path" in message, message
    assert "a benchguard results batch" in message and str(old) in message, message
    assert "may be granted only" in message, message


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_another_copy_of_the_task_folders_cannot_be_granted(harness: Harness, sandbox: str) -> None:
    """Guards against taskgrab: ``install:`` naming another copy of the tasks."""
    operator = harness.operator
    other = operator.root / "suite-v0"
    shutil.copytree(EXAMPLES / "tasks", other)
    agent = _agent(operator.root, other)
    message = _refused(harness, _hidden_tasks(operator.root), agent, sandbox)
    assert "install path" in message and "a task folder" in message, message
    assert str(other / "sum-numbers" / "task.yaml") in message, message


def test_a_grant_inside_a_batch_or_a_task_folder_is_refused(tmp_path: Path) -> None:
    """The directories above a grant count: a batch's runs/ or a task's workspace."""
    batch = tmp_path / "out" / "run_1"
    (batch / "runs").mkdir(parents=True)
    for name in ("batch.json", "manifest.json"):
        (batch / name).write_text("{}", "utf-8")
    task = tmp_path / "tasks" / "t"
    (task / "workspace").mkdir(parents=True)
    (task / "task.yaml").write_text("name: t\n", "utf-8")
    inside_batch = grant_scan.scan(batch / "runs", trees=())
    inside_task = grant_scan.scan(task / "workspace", trees=())
    assert inside_batch == grant_scan.Found("a benchguard results batch", batch)
    assert inside_task == grant_scan.Found("a task folder", task / "task.yaml")


def test_the_harness_checkout_cannot_be_granted(tmp_path: Path) -> None:
    problems = exposure_problems([REPO.parent], [], where="agent 'x' (x.yaml)")
    assert problems and "the harness's checkout" in problems[0], problems


def test_a_search_past_its_bounds_fails_closed(tmp_path: Path) -> None:
    deep = tmp_path / "grant"
    (deep / "a" / "b" / "c").mkdir(parents=True)
    for index in range(30):
        (deep / f"f{index}").write_text("", "utf-8")
    fields = {deep: "skills"}
    by_depth = exposure_problems(
        [deep], [], where="agent 'x'", fields=fields, bounds=grant_scan.Bounds(depth=2)
    )
    by_count = exposure_problems(
        [deep], [], where="agent 'x'", fields=fields, bounds=grant_scan.Bounds(entries=10)
    )
    assert by_depth and "deeper than 2 levels" in by_depth[0], by_depth
    assert by_count and "more than 10 entries" in by_count[0], by_count
    assert "skills path" in by_count[0] and "could not be searched" in by_count[0]
    assert exposure_problems([deep], [], where="agent 'x'") == []


@pytest.mark.parametrize("name", ["honest", "noop", "claude-code", "codex"])
def test_the_example_agents_grants_hold_no_material(name: str, tmp_path: Path) -> None:
    """The honest example agents (and the real CLIs' node_modules) still pass."""
    agent = resolve_agent(str(EXAMPLES / "agents" / f"{name}.yaml"))
    env_path = os.environ.get("PATH", "")
    clis = REPO / ".agent-clis" / "node_modules" / ".bin"
    os.environ["PATH"] = f"{clis}:{env_path}"
    try:
        granted = sandbox_read_only(agent, tmp_path)
    finally:
        os.environ["PATH"] = env_path
    # Matched by content too: no copy of the example tasks' files, no repository of them.
    material = task_material(EXAMPLES / "tasks")
    assert exposure_problems(granted, [], where=name, material=material) == []
