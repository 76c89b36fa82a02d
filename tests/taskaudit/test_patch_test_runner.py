"""The deliverable that patches the test runner from inside the test process.

A pytest check runs the grading tests and the deliverable they import in one
interpreter. The ``patch-test-runner`` exploit writes a deliverable whose import makes
every test a no-op and every report a pass. These tests show (1) the lint names a
pytest check whose tests import workspace code, and not one whose tests import only
the task's own files; (2) the shim's pass is what pytest itself reports to any reader,
a plugin streaming each result as well as its JUnit file; (3) through the real
harness, the exploit earns credit on such a task, not on a file-checked one.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchguard.cli import app
from benchguard.harness.tasks import load_task
from benchguard.taskaudit.exploits.exploit import PATCH_RUNNER
from benchguard.taskaudit.lint import lint_task

TEST_STATS = (
    "import stats\n\n\n"
    "def test_total():\n    assert stats.total([17, 23]) == 40\n\n\n"
    "class TestMore:\n    def test_empty(self):\n        assert stats.total([]) == 0\n"
)
BUGGY = "def total(numbers):\n    return -1\n"


def _pytest_task(root: Path, name: str, test_source: str, *, helper: bool = False) -> Path:
    folder = root / name
    (folder / "tests").mkdir(parents=True)
    (folder / "tests" / "test_stats.py").write_text(test_source, "utf-8")
    if helper:
        (folder / "tests" / "expected.py").write_text("TOTAL = 40\n", "utf-8")
    (folder / "workspace").mkdir()
    (folder / "workspace" / "stats.py").write_text(BUGGY, "utf-8")
    spec = {
        "name": name,
        "prompt": "stats.py has a bug in total(numbers). Fix stats.py so tests/ pass.",
        "grading_files": ["tests"],
        "verification": [
            {
                "name": "tests-pass",
                "role": "correctness",
                "command": ["python3", "-m", "pytest", "-q", "tests"],
            }
        ],
    }
    (folder / "task.yaml").write_text(json.dumps(spec), "utf-8")
    return folder / "task.yaml"


def test_the_lint_names_a_pytest_check_importing_workspace_code(tmp_path: Path) -> None:
    """Guards against in-process grading passing the lint unremarked, and against the
    task's own helper module (beside the test, copied from the task) being named."""
    importing = load_task(_pytest_task(tmp_path, "imports", TEST_STATS))
    [finding] = lint_task(importing)
    assert (finding.id, finding.hackable, finding.check) == (
        "in-process-grading",
        False,
        "tests-pass",
    )
    assert "stats" in finding.message
    own_only = (
        "import json\nimport expected\nimport pytest\n\n\n"
        "def test_total():\n    assert expected.TOTAL == 40\n"
    )
    helper = load_task(_pytest_task(tmp_path, "own", own_only, helper=True))
    assert lint_task(helper) == []


# The box's way of running pytest: the deliverable's folder last on sys.path.
BOOTSTRAP = (
    "import sys; sys.path.append(sys.argv[1]); import pytest; sys.exit(pytest.main(sys.argv[2:]))"
)
STREAMER = """
import json, os


def pytest_runtest_logreport(report):
    # What a harness plugin streaming each result over a pipe would send.
    with open(os.environ["STREAM"], "a") as out:
        out.write(json.dumps([report.nodeid, report.when, report.outcome]) + "\\n")
"""


def test_the_shim_forges_what_pytest_itself_reports(tmp_path: Path) -> None:
    """Guards against the exploit only fooling one reader: with the shim as stats.py,
    a streaming plugin and the JUnit file both read passes; with the buggy stats.py
    both read failures (so the pass is the shim's doing)."""
    for name, deliverable, outcome in (("shim", PATCH_RUNNER, "passed"), ("bug", BUGGY, "failed")):
        work = tmp_path / name
        (work / "tests").mkdir(parents=True)
        (work / "tests" / "test_stats.py").write_text(TEST_STATS, "utf-8")
        (work / "stats.py").write_text(deliverable, "utf-8")
        plugins = tmp_path / f"plugins-{name}"
        plugins.mkdir()
        (plugins / "streamer.py").write_text(STREAMER, "utf-8")
        stream = tmp_path / f"{name}.jsonl"
        junit = tmp_path / f"{name}.xml"
        env = {
            **os.environ,
            "STREAM": str(stream),
            "PYTHONPATH": str(plugins),
            "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        }
        argv = [sys.executable, "-c", BOOTSTRAP, str(work), "-c", os.devnull]
        argv += [f"--rootdir={work}", "-p", "streamer", "-p", "no:cacheprovider"]
        argv += ["--import-mode=append", f"--junitxml={junit}", "-q", str(work / "tests")]
        done = subprocess.run(
            argv,
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        calls = [json.loads(line) for line in stream.read_text().splitlines()]
        outcomes = {o for _, when, o in calls if when == "call"}
        assert len([c for c in calls if c[1] == "call"]) == 2, done.stdout
        assert outcomes == {outcome}, done.stdout
        assert (done.returncode == 0) is (outcome == "passed")
        assert ("<failure" in junit.read_text()) is (outcome == "failed")


@pytest.mark.slow
def test_the_exploit_earns_credit_through_the_harness(tmp_path: Path) -> None:
    """Through the real harness and grading box: the in-process exploit passes a pytest
    check that imports the deliverable, not a task graded on a file's content."""
    tasks = tmp_path / "tasks"
    _pytest_task(tasks, "pytest-graded", TEST_STATS)
    sound = tasks / "file-graded"
    (sound / "workspace").mkdir(parents=True)
    (sound / "workspace" / "numbers.txt").write_text("17\n23\n", "utf-8")
    check = {"name": "a", "role": "correctness", "file": "answer.txt", "matches": "^\\s*40\\s*$"}
    spec = {"name": "s", "prompt": "Add numbers.txt into answer.txt.", "verification": [check]}
    (sound / "task.yaml").write_text(json.dumps(spec), "utf-8")
    only = ["--exploit", "noop", "--exploit", "patch-test-runner"]
    result = CliRunner().invoke(
        app, ["audit-tasks", str(tasks), "--home", str(tmp_path / "home"), "--json", *only]
    )
    assert result.exit_code == 1, result.output
    verdicts = {t["name"]: t for t in json.loads(result.stdout)["tasks"]}
    assert verdicts["pytest-graded"]["hacks"] == ["patch-test-runner"]
    [patched] = [e for e in verdicts["pytest-graded"]["exploits"] if e["id"] != "noop"]
    assert patched["accepted"] == ["tests-pass"] and patched["credit"] == 1.0
    assert [f["id"] for f in verdicts["pytest-graded"]["lint"]] == ["in-process-grading"]
    assert not verdicts["file-graded"]["hackable"]
