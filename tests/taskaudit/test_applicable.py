"""Which exploits the audit skips on a task, decided from its checks and seed alone.

An exploit is skipped only when its run would be the no-op's: it touches no file, or
only files no correctness check reads. Each case below is one an over-eager skip would
get wrong (a hack lost) or a needless run the skip saves.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from benchguard.harness.tasks import Task, load_task
from benchguard.taskaudit.applicable import not_applicable, seed_files
from benchguard.taskaudit.exploits.library import BUILTIN

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
