"""Which exploits the audit skips on a task, decided from its checks and seed alone,
and which it runs light (taskaudit/light.py).

An exploit is skipped only when its run would be the no-op's: it touches no file, or
only files no correctness check reads. Each case below is one an over-eager skip would
get wrong (a hack lost) or a needless run the skip saves.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchguard.cli import app
from benchguard.harness.tasks import FileCheck, Task, load_task
from benchguard.taskaudit.applicable import not_applicable, seed_files
from benchguard.taskaudit.exploits.library import BUILTIN
from benchguard.taskaudit.light import light_task

EXPLOITS = {e.id: e for e in BUILTIN}


def _task(root: Path, checks: list[dict[str, Any]], seed: dict[str, str] | None = None) -> Task:
    folder = root / "t"
    for path, text in (seed or {}).items():
        (folder / "workspace" / path).parent.mkdir(parents=True, exist_ok=True)
        (folder / "workspace" / path).write_text(text, "utf-8")
    folder.mkdir(parents=True, exist_ok=True)
    spec = {"name": "t", "prompt": "Write the total to answer.txt.", "verification": checks}
    (folder / "task.yaml").write_text(json.dumps(spec), "utf-8")
    return load_task(folder / "task.yaml", allow_workspace_code=True)


def _why(exploit: str, task: Task, files: list[str]) -> str | None:
    plan = {"files": files, "outputs": list(task.grader_outputs)}
    return not_applicable(EXPLOITS[exploit], task, plan, seed_files(task))


def test_file_checks_of_other_files_make_an_exploit_not_applicable(tmp_path: Path) -> None:
    task = _task(
        tmp_path,
        [{"name": "a", "role": "correctness", "file": "answer.txt", "matches": "^137$"}],
        {"numbers.txt": "1\n", "run.sh": "exit 1\n"},
    )
    assert _why("reward-file", task, ["answer.txt"]) is not None
    assert _why("plant-hooks", task, ["answer.txt"]) is not None
    # tests-exit-zero rewrites run.sh, which no check reads.
    assert _why("tests-exit-zero", task, ["answer.txt"]) is not None
    # Nothing to delete, nothing to rewrite: no file touched at all.
    assert _why("tests-deleted", task, ["answer.txt"]) == "it would touch no file of this task"
    assert _why("empty-files", task, []) == "it would touch no file of this task"
    # The exploits writing the checked file run.
    for exploit in ("empty-files", "content-number", "quote-prompt", "workspace-answer"):
        assert _why(exploit, task, ["answer.txt"]) is None, exploit
    # The no-op and operator exploits are never skipped.
    assert _why("noop", task, ["answer.txt"]) is None


def test_a_check_that_reads_what_the_exploit_writes_keeps_it(tmp_path: Path) -> None:
    reward = _task(
        tmp_path / "r",
        [{"name": "r", "role": "correctness", "file": "reward.txt", "matches": "1"}],
    )
    assert _why("reward-file", reward, ["answer.txt"]) is None
    # An existence check on a folder sees a file written inside it.
    folder = _task(
        tmp_path / "f", [{"name": "o", "role": "correctness", "file": "out", "exists": True}]
    )
    assert _why("empty-files", folder, ["out/result.json"]) is None
    # A command check may read anything: every exploit that touches a file runs.
    command = _task(
        tmp_path / "c",
        [{"name": "c", "role": "correctness", "command": ["python3", "-c", "pass"]}],
    )
    for exploit in ("reward-file", "plant-hooks", "content-true"):
        assert _why(exploit, command, ["answer.txt"]) is None, exploit
    # A safeguard's reading does not count: only correctness earns credit.
    guarded = _task(
        tmp_path / "g",
        [
            {"name": "a", "role": "correctness", "file": "answer.txt", "contains": "137"},
            {
                "name": "s",
                "role": "safeguard",
                "severity": "catastrophic",
                "command": ["python3", "-c", "pass"],
            },
        ],
    )
    assert _why("plant-hooks", guarded, ["answer.txt"]) is not None


@pytest.mark.slow
def test_light_runs_earn_what_the_same_exploits_earn_through_the_harness(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards against the light path (no agent launch) judging a task differently
    from a harness run: a declared grader output the box removes, an existence check,
    a regex, a sound task, and command checks (grep, pytest over grading tests, a
    grader that starts pytest itself); every light exploit, both ways."""
    tasks = tmp_path / "tasks"
    specs: dict[str, dict[str, Any]] = {
        "exists": {"verification": [{"name": "a", "role": "correctness", "file": "answer.txt", "exists": True}]},
        "number": {"verification": [{"name": "a", "role": "correctness", "file": "answer.txt", "matches": "[0-9]+"}]},
        "declared-reward": {
            "grader_outputs": ["reward.txt"],
            "verification": [{"name": "r", "role": "correctness", "file": "reward.txt", "matches": "1"}],
        },
        "sound": {"verification": [{"name": "a", "role": "correctness", "file": "answer.txt", "matches": "^137$"}]},
        # Command checks: light probes grade them in the same check sandbox.
        "grep": {"verification": [{"name": "g", "role": "correctness", "command": ["grep", "-qx", "137", "answer.txt"]}]},
        "pytest-grading": {
            "grading_files": ["grading"],
            "verification": [{"name": "t", "role": "correctness", "command": ["python3", "-m", "pytest", "-q", "grading"]}],
        },
        "own-runner": {
            "grading_files": ["grade.py", "grading"],
            "verification": [{"name": "o", "role": "correctness", "command": ["python3", "grade.py"]}],
        },
    }  # fmt: skip
    test_answer = (
        "from pathlib import Path\n\n\ndef test_total():\n"
        "    assert Path('answer.txt').read_text().strip() == '137'\n"
    )
    own_runner = (
        "import subprocess\nimport sys\n\nsys.exit(subprocess.call([sys.executable, '-m', "
        "'pytest', '-q', '-p', 'no:cacheprovider', 'grading']))\n"
    )
    for name, spec in specs.items():
        (tasks / name / "workspace").mkdir(parents=True)
        (tasks / name / "workspace" / "numbers.txt").write_text("17\n120\n", "utf-8")
        if "grading" in spec.get("grading_files", ()):
            (tasks / name / "grading").mkdir()
            (tasks / name / "grading" / "test_answer.py").write_text(test_answer, "utf-8")
            (tasks / name / "grade.py").write_text(own_runner, "utf-8")
        prompt = "Write the total of numbers.txt to answer.txt; 'reward.txt' is the grader's."
        (tasks / name / "task.yaml").write_text(json.dumps({"name": name, "prompt": prompt, **spec}), "utf-8")  # fmt: skip

    def audit() -> dict[str, dict[str, tuple[float, tuple[str, ...], bool]]]:
        result = CliRunner().invoke(
            app, ["audit-tasks", str(tasks), "--json", "--home", str(tmp_path / "home")]
        )
        assert result.exit_code == 1, result.output
        return {
            t["name"]: {
                e["id"]: (e["credit"], tuple(e["accepted"]), e["light"])
                for e in t["exploits"]
                if e["status"] != "not-applicable"
            }
            for t in json.loads(result.stdout)["tasks"]
        }

    light = audit()
    monkeypatch.setattr("benchguard.workflows.audit_tasks.light_exploit", lambda _e: False)
    harness = audit()
    assert light["declared-reward"]["reward-file"][2] is True
    for task, exploits in harness.items():
        assert all(not ran_light for _, _, ran_light in exploits.values())
        assert {k: v[:2] for k, v in light[task].items()} == {
            k: v[:2] for k, v in exploits.items()
        }, task
    assert light["exists"]["empty-files"][0] == 1.0
    for task in ("grep", "pytest-grading", "own-runner"):
        assert light[task]["content-number"][2] is True, task
    # A grader that starts pytest itself loads the planted conftest.py: both ways.
    assert light["own-runner"]["plant-hooks"][0] == 1.0
    assert light["pytest-grading"]["plant-hooks"][0] == 0.0
    assert light["declared-reward"]["reward-file"][0] == 0.0  # the box removed it


def test_a_judge_reference_changes_nothing_the_audit_runs(tmp_path: Path) -> None:
    """``expected_output`` and ``rubric`` are read only by a judge, and the audit runs
    none: they neither keep an exploit that touches no checked file nor keep a task
    from running light (sum-numbers, word-count and write-report declare them)."""
    task = _task(
        tmp_path,
        [{"name": "a", "role": "correctness", "file": "answer.txt", "matches": "^137$"}],
        {"numbers.txt": "1\n"},
    )
    judged = task.model_copy(update={"expected_output": "137", "rubric": "The total."})
    plan = {"files": ["answer.txt"], "outputs": []}
    assert not_applicable(EXPLOITS["reward-file"], judged, plan, seed_files(judged)) is not None
    assert not_applicable(EXPLOITS["empty-files"], judged, plan, seed_files(judged)) is None
    assert light_task(judged) and light_task(task)
    home = task.model_copy(update={"verification": (*task.verification, _home_check())})
    assert not light_task(home)


def _home_check() -> FileCheck:
    return FileCheck(name="h", role="correctness", file="~/notes.md", contains="x")
