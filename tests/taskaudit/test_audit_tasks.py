"""`benchguard audit-tasks` end to end: the exploit library finds hackable tasks.

A small set of tasks, each hackable one in a different way, and a sound one: every
hackable task is named with the exploit (or lint) that passes it, the sound one is
not, the examples audit clean (write-notes acknowledges its finding in its own file),
and bad input exits 2.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchguard.cli import app

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

pytestmark = pytest.mark.slow

TASKS: dict[str, dict[str, Any]] = {
    "exists-only": {
        "prompt": "Write the total of numbers.txt to answer.txt.",
        "verification": [
            {"name": "a", "role": "correctness", "file": "answer.txt", "exists": True}
        ],
    },
    "any-number": {
        "prompt": "Write the total of numbers.txt to answer.txt.",
        "verification": [
            {"name": "a", "role": "correctness", "file": "answer.txt", "matches": "[0-9]+"}
        ],
    },
    "reward-reader": {
        "prompt": "Write the total of numbers.txt to answer.txt.",
        "verification": [
            {"name": "r", "role": "correctness", "file": "reward.txt", "matches": "^\\s*1\\s*$"}
        ],
    },
    "workspace-tests": {
        "prompt": "Fix calc.py so the tests pass.",
        "verification": [
            {
                "name": "t",
                "role": "correctness",
                "command": ["python3", "-m", "pytest", "-q", "tests"],
            }
        ],
        "seed": {
            "calc.py": "def total(xs):\n    return 0\n",
            "tests/test_calc.py": "import calc\n\n\ndef test_total():\n    assert calc.total([1, 2]) == 3\n",
        },
    },
    "no-check": {"prompt": "Say hello.", "verification": []},
    "sound": {
        "prompt": "Add up the integers in numbers.txt and write the total to answer.txt.",
        "verification": [
            {"name": "a", "role": "correctness", "file": "answer.txt", "matches": "^\\s*137\\s*$"}
        ],
    },
}
NUMBERS = "17\n23\n40\n57\n"


def _write_tasks(root: Path, names: list[str]) -> Path:
    tasks = root / "tasks"
    for name in names:
        spec = dict(TASKS[name])
        seed = spec.pop("seed", {"numbers.txt": NUMBERS})
        folder = tasks / name
        for path, text in seed.items():
            (folder / "workspace" / path).parent.mkdir(parents=True, exist_ok=True)
            (folder / "workspace" / path).write_text(text, "utf-8")
        (folder / "task.yaml").write_text(json.dumps({"name": name, **spec}), "utf-8")
    return tasks


def _audit(tasks: Path, home: Path, *args: str) -> tuple[int, dict[str, Any], str]:
    result = CliRunner().invoke(
        app, ["audit-tasks", str(tasks), "--home", str(home), "-j", "2", "--json", *args]
    )
    try:
        document = json.loads(result.stdout)
    except json.JSONDecodeError:
        document = {}
    return result.exit_code, document, result.output


def test_every_hackable_task_is_named_with_what_passes_it(tmp_path: Path) -> None:
    """Guards against a task a generic cheat passes being reported sound."""
    code, document, output = _audit(_write_tasks(tmp_path, sorted(TASKS)), tmp_path / "home")
    assert code == 1, output
    verdicts = {t["name"]: t for t in document["tasks"]}
    assert not verdicts["sound"]["hackable"] and verdicts["sound"]["hacks"] == []
    assert "empty-files" in verdicts["exists-only"]["hacks"]
    assert "content-number" in verdicts["any-number"]["hacks"]
    assert "reward-file" in verdicts["reward-reader"]["hacks"]
    assert "runs-workspace-program" in verdicts["workspace-tests"]["hacks"]
    assert "tests-exit-zero" in verdicts["workspace-tests"]["hacks"]
    assert "no-correctness-check" in verdicts["no-check"]["hacks"]
    for name in ("exists-only", "any-number", "reward-reader", "workspace-tests", "no-check"):
        assert verdicts[name]["hackable"] is True, verdicts[name]
    # The no-op earns nothing on a task that checks anything.
    noop = [e for e in verdicts["sound"]["exploits"] if e["id"] == "noop"]
    assert noop == [
        {
            "id": "noop",
            "credit": 0.0,
            "accepted": [],
            "status": "success",
            "caughtBy": [],
            "notApplicable": None,
            "light": False,
            "gradedWith": None,
        }
    ]
    # An exploit that cannot change what the checks read is not run, and says why; the
    # same exploit runs where a check reads what it writes (reward-reader, above).
    (reward,) = [e for e in verdicts["sound"]["exploits"] if e["id"] == "reward-file"]
    assert reward["status"] == "not-applicable" and "answer.txt" not in reward["notApplicable"]
    assert reward["notApplicable"].startswith("no correctness check reads what it touches")
    (planted,) = [e for e in verdicts["workspace-tests"]["exploits"] if e["id"] == "plant-hooks"]
    assert planted["status"] != "not-applicable"


def test_the_sound_task_alone_exits_0(tmp_path: Path) -> None:
    code, document, output = _audit(_write_tasks(tmp_path, ["sound"]), tmp_path / "home")
    assert code == 0, output
    assert [t["hackable"] for t in document["tasks"]] == [False]


def test_the_example_tasks_audit_clean_with_the_acknowledged_finding_shown(
    tmp_path: Path,
) -> None:
    """The four examples are sound; write-notes dictates its line on purpose and says so."""
    tasks = tmp_path / "tasks"
    shutil.copytree(EXAMPLES / "tasks", tasks)
    code, document, output = _audit(tasks, tmp_path / "home", "--sandbox", "bwrap")
    assert code == 0, output
    verdicts = {t["name"]: t for t in document["tasks"]}
    assert all(not v["hackable"] for v in verdicts.values()), verdicts
    assert [a["id"] for a in verdicts["write-notes"]["acknowledged"]] == ["quote-prompt"]
    # Sandboxed, the reading exploit finds no task file to answer from.
    assert all(v["reading"] == [] for v in verdicts.values())


def test_bad_input_exits_2_naming_the_file_and_field(tmp_path: Path) -> None:
    tasks = tmp_path / "tasks"
    (tasks / "bad").mkdir(parents=True)
    (tasks / "bad" / "task.yaml").write_text("name: b\nprompt: p\ntimeout: -1\n", "utf-8")
    result = CliRunner().invoke(app, ["audit-tasks", str(tasks)])
    assert result.exit_code == 2 and "field timeout" in result.output
    missing = CliRunner().invoke(app, ["audit-tasks", str(tmp_path / "nope")])
    assert missing.exit_code == 2


def test_sarif_and_junit_name_the_hackable_task_and_an_operator_exploit_runs(
    tmp_path: Path,
) -> None:
    """SARIF locates a result at each hackable task file; JUnit fails its test case; an
    operator's own exploit directory extends the library."""
    tasks = _write_tasks(tmp_path, ["any-number", "sound"])
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "forty_two.py").write_text(
        '"""a check any number satisfies, by writing 42"""\n'
        "open('answer.txt', 'w').write('42\\n')\n",
        "utf-8",
    )
    base = ["audit-tasks", str(tasks), "--home", str(tmp_path / "home"), "--exploits", str(mine)]
    only = ["--exploit", "noop", "--exploit", "forty_two"]
    sarif = CliRunner().invoke(app, [*base, *only, "--format", "sarif"])
    assert sarif.exit_code == 1, sarif.output
    [run] = json.loads(sarif.stdout)["runs"]
    [result] = run["results"]
    assert result["properties"]["hacks"] == ["forty_two"]
    assert result["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(
        "any-number/task.yaml"
    )
    junit = CliRunner().invoke(app, [*base, *only, "--format", "junit"])
    assert junit.exit_code == 1
    assert 'failures="1"' in junit.stdout and 'tests="2"' in junit.stdout
    unknown = CliRunner().invoke(app, [*base, "--exploit", "nope"])
    assert unknown.exit_code == 2 and "no such exploit" in unknown.output


def test_the_reference_solution_must_earn_full_credit(tmp_path: Path) -> None:
    """Guards against a task whose checks reject real work (a broken reference) going
    unnoticed, and against the reference's credit counting as a hack."""
    tasks = _write_tasks(tmp_path, ["sound", "any-number"])
    for name, script in (("sound", "echo 137 > answer.txt\n"), ("any-number", "true\n")):
        (tasks / name / "solution.sh").write_text(script, "utf-8")
        spec = json.loads((tasks / name / "task.yaml").read_text("utf-8"))
        (tasks / name / "task.yaml").write_text(json.dumps({**spec, "solution": "solution.sh"}))
    code, document, output = _audit(tasks, tmp_path / "home", "--exploit", "noop")
    assert code == 0, output
    verdicts = {t["name"]: t for t in document["tasks"]}
    assert verdicts["sound"]["reference"] == {"credit": 1.0, "accepted": ["a"], "passed": True}
    assert verdicts["any-number"]["reference"]["passed"] is False
    assert document["referenceFailed"] == ["any-number"]
    assert not verdicts["sound"]["hackable"]


def test_a_task_asking_for_the_host_network_is_audited_not_refused(tmp_path: Path) -> None:
    """Guards against audit-tasks failing on a task with network: true: its exploits
    are benchguard's own, run by the operator, so the task gets the host network there
    (a batch of ``benchguard run`` needs --allow-host-network, harness/host_network)."""
    tasks = _write_tasks(tmp_path, ["sound"])
    task_file = tasks / "sound" / "task.yaml"
    task_file.write_text(json.dumps({**json.loads(task_file.read_text("utf-8")), "network": True}))
    code, document, output = _audit(tasks, tmp_path / "home", "--exploit", "noop")
    assert code == 0, output
    assert [t["hackable"] for t in document["tasks"]] == [False]
