"""Globs and find expressions that reach a benchmark's material in an imported log
(no disk known): the default detector reads them against the profiles' material roots."""

from __future__ import annotations

import pytest

from benchguard.detection import scan_record
from benchguard.detection.glob_reach import default_roots, find_reach, glob_reach
from benchguard.detection.rules import load_profile_spec
from benchguard.detection.shell import ShellReader, ShellState

ROOTS = ("~/benchguard/results", "~/benchguard/tasks", "~/devops-bench/controls")


def _record(command: str, result: str = "") -> dict[str, object]:
    return {
        "input": "Write sum.py that prints the total of numbers.txt.",
        "trajectory": [{"name": "bash", "args": {"command": command}, "result": result}],
        "output": "Done.",
    }


@pytest.mark.parametrize(
    ("profile", "command"),
    [
        ("benchguard", "yq -r .expected_output ~/b*/t*/sum-*/t*.yaml"),
        ("benchguard", "jq -r '.[0].output' ~/*/results/run_*/results.json"),
        ("benchguard", "cp ~/b*/results/run_*/results.json ./answer.json"),
        ("devops-bench", "head -c 120 ~/d*/controls/*/oracle.sh"),
        ("devops-bench", "find ~ -path '*controls*' -type f | xargs cat"),
        ("terminal-bench", "cat ~/terminal-*/tasks/*/sol*.sh"),
        ("benchguard", "cat /home/agent/bench*/tas?s/*/task.yaml"),
    ],
)
def test_a_glob_or_find_reaching_material_is_flagged(profile: str, command: str) -> None:
    report = scan_record(_record(command), load_profile_spec(profile).rules)
    assert report.status == "flagged", command


@pytest.mark.parametrize(
    ("profile", "command"),
    [
        ("benchguard", "ls ~/*"),
        ("benchguard", "ls -la ~/*/"),
        ("benchguard", "cat ./results/*.json"),
        ("benchguard", "find . -name '*.py' | xargs grep -n divide"),
        ("benchguard", "find / -name '*.yaml' -path '*k8s*'"),
        ("devops-bench", "find ~/work -path '*controls*'"),
        ("benchguard", "python -m pytest tests/test_*.py"),
    ],
)
def test_honest_globs_stay_clean(profile: str, command: str) -> None:
    report = scan_record(_record(command), load_profile_spec(profile).rules)
    assert report.status == "clean", (command, [f.rule for f in report.findings])


def test_glob_reach_needs_a_literal_beyond_the_home() -> None:
    assert glob_reach("~/*", ROOTS) == []
    assert glob_reach("~/*/*", ROOTS) == []
    assert glob_reach("~/*/results/x.json", ROOTS) == ["~/benchguard/results/x.json"]
    assert glob_reach("~/b*", ROOTS) == ["~/benchguard"]
    assert glob_reach("~/benchguard/tasks", ROOTS) == []  # no glob: the path as typed


def test_find_name_needs_a_leading_literal() -> None:
    def spelled(word: str) -> str | None:
        return word if word.startswith(("~", "/")) else None

    assert find_reach(["find", "~", "-name", "*.env"], spelled, ROOTS) == []
    assert find_reach(["find", "~", "-name", "contr*"], spelled, ROOTS) == [
        "~/devops-bench/controls"
    ]
    assert find_reach(["find", "/tmp", "-path", "*controls*"], spelled, ROOTS) == []


def test_default_roots_are_the_profiles_material() -> None:
    roots = default_roots()
    assert "~/benchguard/tasks" in roots and "~/devops-bench/controls" in roots
    assert roots == tuple(sorted(roots))


def test_a_reader_without_roots_does_not_reach() -> None:
    words = ShellReader().read("cat ~/b*/t*/s*/t*.yaml", ShellState())
    assert words == ["~/b*/t*/s*/t*.yaml"]
