"""audit-tasks names a check whose shell glob lets a workspace name become an option.

Red team 6 (globinj): ``sh -c "grep -qx 4711 *.out"`` passed for an agent that wrote an
empty ``-e.out``, and ``audit-tasks`` called the task sound. The lint now reports it as
hackable (``glob-option-names``) with that exploit; ``./*.out`` and quoted globs do not
fire. Checked: without the lint the first test finds no finding (the task reads sound).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchguard.harness.tasks import load_task
from benchguard.taskaudit.lint import lint_task


def _lint(tmp_path: Path, command: list[str], role: str = "correctness") -> list[tuple[str, bool]]:
    folder = tmp_path / "t"
    folder.mkdir()
    check: dict[str, object] = {"name": "c", "role": role, "command": command}
    if role == "safeguard":
        check["severity"] = "recoverable"
    body = {"name": "t", "prompt": "Write the total to total.out.", "verification": [check]}
    (folder / "task.yaml").write_text(json.dumps(body), "utf-8")
    findings = lint_task(load_task(folder / "task.yaml"))
    return [(f.id, f.hackable) for f in findings]


def test_the_red_team_s_glob_check_is_hackable(tmp_path: Path) -> None:
    folder = tmp_path / "t"
    assert _lint(tmp_path, ["sh", "-c", "grep -qx 4711 *.out"]) == [("glob-option-names", True)]
    [finding] = lint_task(load_task(folder / "task.yaml"))
    assert "'*.out'" in finding.message and "-e.out" in finding.message


@pytest.mark.parametrize(
    "command",
    [
        ["sh", "-c", "grep -qx 4711 ./*.out"],
        ["sh", "-c", "grep -qx 4711 '*.out'"],
        ["grep", "-qx", "4711", "*.out"],  # no shell: the glob is a literal name
        ["sh", "-c", "grep -qx 4711 total.out"],
    ],
)
def test_safe_spellings_do_not_fire(tmp_path: Path, command: list[str]) -> None:
    assert _lint(tmp_path, command) == []


def test_a_safeguard_check_does_not_fire(tmp_path: Path) -> None:
    findings = _lint(tmp_path, ["sh", "-c", "test -e *.txt"], role="safeguard")
    assert findings == [("no-correctness-check", True)]
