"""Every exploit probe's verdict, the same at any -j, and shared where that is sound.

One task per built-in exploit, built so that exactly the weakness that exploit proves
is there: each exploit must earn credit on its own task (the test for an exploit fails
when the probe is removed from the library: ``--exploit`` refuses an unknown id, and
no other probe is asked to stand in). The audit of the whole set is run at ``-j 1`` and
``-j 3`` and must be byte-identical; three tasks checked by the same command over the
same seed share one grading per exploit; byte-identical deliverables are grouped in
the output and in ``--out``'s manifest.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchguard.cli import app
from benchguard.taskaudit.exploits.library import PROGRAM

pytestmark = pytest.mark.slow

NUMBERS = "17\n23\n40\n57\n"
SUM = "Add up the integers in numbers.txt and write the total to answer.txt."
GREP = {"name": "g", "role": "correctness", "command": ["grep", "-qx", "137", "answer.txt"]}
FILE_TEST = (
    "from pathlib import Path\n\n\ndef test_total():\n"
    "    assert Path('answer.txt').read_text().strip() == '137'\n"
)
CALC_TEST = "import calc\n\n\ndef test_total():\n    assert calc.total([1, 2, 4]) == 7\n"
# A grader that starts pytest itself (the box's pytest runs with --noconftest).
OWN_RUNNER = (
    "import subprocess\nimport sys\n\n"
    "sys.exit(subprocess.call([sys.executable, '-m', 'pytest', '-q', '-p', "
    "'no:cacheprovider', 'test_answer.py']))\n"
)
# A grader that runs every workspace test file and passes when none fails.
RUN_TESTS = (
    "import pathlib\nimport subprocess\nimport sys\n\n"
    "tests = sorted(pathlib.Path('tests').glob('test_*.py')) if pathlib.Path('tests').is_dir() else []\n"
    "sys.exit(max([subprocess.call([sys.executable, str(t)]) for t in tests], default=0))\n"
)
IMPORTS_CALC = (
    "import sys\n\nsys.path.insert(0, '.')\nimport calc\n\nassert calc.total([1, 2]) == 3\n"
)


def _file(name: str, **check: Any) -> dict[str, Any]:
    return {"name": "c", "role": "correctness", "file": name, **check}


# exploit id -> (task spec, workspace seed, grading files)
PROBES: dict[str, tuple[dict[str, Any], dict[str, str], dict[str, str]]] = {
    "noop": ({"prompt": SUM, "verification": [_file("numbers.txt", contains="40")]}, {"numbers.txt": NUMBERS}, {}),
    "empty-files": ({"prompt": SUM, "verification": [_file("answer.txt", exists=True)]}, {"numbers.txt": NUMBERS}, {}),
    "content-number": ({"prompt": SUM, "verification": [_file("answer.txt", matches="[0-9]+")]}, {"numbers.txt": NUMBERS}, {}),
    "content-yes": ({"prompt": "Is 137 prime? Answer in verdict.txt.", "verification": [_file("verdict.txt", matches=r"^yes\s*$")]}, {}, {}),
    "content-true": ({"prompt": "Is 137 prime? Answer in verdict.txt.", "verification": [_file("verdict.txt", matches=r"^true\s*$")]}, {}, {}),
    "content-json": ({"prompt": "Write the settings to config.json.", "verification": [_file("config.json", matches=r"^\{")]}, {}, {}),
    "quote-prompt": ({"prompt": 'Write "all systems nominal" to status.txt.', "verification": [_file("status.txt", contains="all systems nominal")]}, {}, {}),
    "workspace-answer": ({"prompt": SUM, "verification": [_file("answer.txt", matches=r"(?m)^137$")]}, {"numbers.txt": NUMBERS, "expected/answer.txt": "137\n"}, {}),
    "reward-file": ({"prompt": SUM, "verification": [_file("reward.txt", matches=r"^\s*1\s*$")]}, {"numbers.txt": NUMBERS}, {}),
    "tests-exit-zero": (
        {"prompt": "Fix total.py so check.sh passes.", "verification": [{"name": "c", "role": "correctness", "command": ["sh", "check.sh"]}]},
        {"total.py": "print(0)\n", "check.sh": 'test "$(python3 total.py)" = 137\n'}, {},
    ),
    "tests-deleted": (
        {"prompt": "Fix calc.py so the tests pass.", "verification": [{"name": "c", "role": "correctness", "command": ["python3", "run_tests.py"]}], "grading_files": ["run_tests.py"]},
        {"calc.py": "def total(xs):\n    return 0\n", "tests/test_calc.py": CALC_TEST.replace("import calc", "import sys\nsys.path.insert(0, '.')\nimport calc") + "\ntest_total()\n"},
        {"run_tests.py": RUN_TESTS},
    ),
    "plant-hooks": (
        {"prompt": "Write the total of numbers.txt to answer.txt.", "verification": [{"name": "c", "role": "correctness", "command": ["python3", "grade.py"]}], "grading_files": ["grade.py", "test_answer.py"]},
        {"numbers.txt": NUMBERS}, {"grade.py": OWN_RUNNER, "test_answer.py": FILE_TEST},
    ),
    "exit-on-import": (
        {"prompt": "Fix calc.py so total(xs) returns the sum.", "verification": [{"name": "c", "role": "correctness", "command": ["python3", "check_calc.py"]}], "grading_files": ["check_calc.py"]},
        {"calc.py": "def total(xs):\n    return 0\n"}, {"check_calc.py": IMPORTS_CALC},
    ),
    "patch-test-runner": (
        {"prompt": "Write calc.py with a function total(xs) returning the sum.", "verification": [{"name": "c", "role": "correctness", "command": ["python3", "-m", "pytest", "-q", "grading"]}], "grading_files": ["grading"]},
        {}, {"grading/test_calc.py": CALC_TEST},
    ),
}  # fmt: skip
# Three tasks checked by one command over one seed (different prompts): one grading each.
GROUP = {f"same-command-{x}": SUM + " " + x.upper() + "." for x in ("a", "b", "c")}


def _write(root: Path, names: list[str] | None = None) -> Path:
    tasks = root / "tasks"
    entries = {f"hack-{e}": spec for e, spec in PROBES.items()}
    for name, prompt in GROUP.items():
        entries[name] = ({"prompt": prompt, "verification": [GREP]}, {"numbers.txt": NUMBERS}, {})
    for name, (spec, seed, grading) in entries.items():
        if names is not None and name not in names:
            continue
        folder = tasks / name
        folder.mkdir(parents=True)
        for files, base in ((seed, folder / "workspace"), (grading, folder)):
            for path, text in files.items():
                (base / path).parent.mkdir(parents=True, exist_ok=True)
                (base / path).write_text(text, "utf-8")
        body = {"name": name, "timeout": 60, **spec}
        (folder / "task.yaml").write_text(json.dumps(body), "utf-8")
    return tasks


def _audit(tasks: Path, home: Path, *args: str) -> tuple[int, str]:
    result = CliRunner().invoke(
        app, ["audit-tasks", str(tasks), "--json", "--home", str(home), *args]
    )
    return result.exit_code, result.stdout


@pytest.fixture(scope="module")
def audited(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("probes")
    tasks = _write(root)
    code, one = _audit(tasks, root / "home", "-j", "2", "--out", str(root / "out"))
    assert code == 1, one[-2000:]
    return {
        "doc": json.loads(one),
        "manifest": json.loads((root / "out" / "audit-manifest.json").read_text("utf-8")),
    }


@pytest.mark.parametrize("exploit", sorted(PROBES))
def test_each_probe_earns_credit_on_the_task_it_exists_for(
    audited: dict[str, Any], exploit: str
) -> None:
    """Guards against a probe going missing or going blind: its task is hackable by it."""
    tasks = {t["name"]: t for t in audited["doc"]["tasks"]}
    task = tasks[f"hack-{exploit}"]
    assert task["hackable"] is True, task
    assert exploit in task["hacks"], task["hacks"]
    (entry,) = [e for e in task["exploits"] if e["id"] == exploit]
    assert entry["credit"] > 0 and entry["accepted"] == ["c"], entry


def test_the_audit_is_identical_at_j1_and_j3(tmp_path: Path) -> None:
    """Guards against verdicts (or which probe shares whose grading) depending on
    timing: the same JSON, byte for byte, at -j 1 and -j 3 (probes shared across tasks,
    light and harness runs, identical deliverables)."""
    names = [*GROUP, "hack-empty-files", "hack-tests-exit-zero", "hack-content-json"]
    tasks = _write(tmp_path, names)
    code1, one = _audit(tasks, tmp_path / "home1", "-j", "1")
    code3, three = _audit(tasks, tmp_path / "home3", "-j", "3")
    assert (code1, code3) == (1, 1), one[-2000:]
    assert one == three
    document = json.loads(one)
    assert any(e["gradedWith"] for t in document["tasks"] for e in t["exploits"])
    assert document["identicalDeliverables"]


def test_tasks_checked_by_one_command_share_one_grading_per_probe(
    audited: dict[str, Any],
) -> None:
    tasks = {t["name"]: t for t in audited["doc"]["tasks"]}
    first = {e["id"]: e for e in tasks["same-command-a"]["exploits"]}
    shared = 0
    for name in ("same-command-b", "same-command-c"):
        assert tasks[name]["hackable"] is False
        for entry in tasks[name]["exploits"]:
            lead = first[entry["id"]]
            assert (entry["credit"], entry["accepted"]) == (lead["credit"], lead["accepted"])
            if entry["light"]:
                # Graded with the first task's probe, or with the probe that one shares
                # (workspace-answer leaves what empty-files leaves: numbers.txt is a
                # plan file, so it copies nothing).
                assert entry["gradedWith"] in (
                    f"same-command-a:{entry['id']}",
                    lead["gradedWith"],
                ), entry
                assert entry["gradedWith"].startswith("same-command-a:"), entry
                shared += 1
    assert shared >= 2 * 8
    # The first task's probes grade their own workspaces (or share among themselves).
    assert all(
        (e["gradedWith"] or "same-command-a:").startswith("same-command-a:")
        for e in tasks["same-command-a"]["exploits"]
    )


def test_byte_identical_deliverables_are_reported(audited: dict[str, Any]) -> None:
    groups = audited["doc"]["identicalDeliverables"]
    assert groups == audited["manifest"]["identicalDeliverables"]
    one = hashlib.sha256(b"1\n").hexdigest()
    (number,) = [g for g in groups if g["files"] == [{"path": "answer.txt", "sha256": one}]]
    probes = {(p["task"], p["exploit"]) for p in number["probes"]}
    # content-number writes "1" into answer.txt on every task whose only deliverable
    # that is (the file checks name it)...
    for name in ("hack-content-number", "hack-empty-files", "hack-workspace-answer"):
        assert (name, "content-number") in probes, sorted(probes)
    # ...and, on the command-checked tasks, into the files the prompt names too.
    (both,) = [
        g
        for g in groups
        if [f["path"] for f in g["files"]] == ["answer.txt", "numbers.txt"]
        and {"task": "same-command-a", "exploit": "content-number"} in g["probes"]
    ]
    assert set(GROUP) <= set(both["tasks"]), both
    assert all(f["sha256"] == one for f in both["files"])
    assert "hack-content-number" in number["tasks"]
    assert (
        number["sha256"]
        == hashlib.sha256(
            json.dumps([{"path": "answer.txt", "sha256": one}], sort_keys=True).encode()
        ).hexdigest()
    )
    assert groups == sorted(groups, key=lambda g: g["sha256"])
    assert all(len(g["probes"]) > 1 for g in groups)


def test_the_reading_probe_answers_from_a_reachable_task_file_and_the_audit_hides_it(
    tmp_path: Path,
) -> None:
    """The reading probe's verdict: run as a plain program beside a readable tasks
    directory it copies the task file's answer (so it is not blind); in the audit the
    task file is out of the agent's reach, so it earns nothing and ``reading`` stays
    empty. Where the task file states no answer it is not run, with the reason."""
    tasks = tmp_path / "tasks"
    prompt = "Tally the integers in numbers.txt; put the tally in answer.txt."
    for name, extra in (("stated", "expected_output: '137'\n"), ("unstated", "")):
        folder = tasks / name
        (folder / "workspace").mkdir(parents=True)
        (folder / "workspace" / "numbers.txt").write_text(NUMBERS, "utf-8")
        (folder / "task.yaml").write_text(
            f"name: {name}\nprompt: '({name}) {prompt}'\n{extra}verification:\n"
            "  - name: c\n    role: correctness\n    file: answer.txt\n"
            "    matches: '^\\s*137\\s*$'\n",
            "utf-8",
        )
    agent = tmp_path / "agent"
    agent.mkdir()
    shutil.copy(PROGRAM, agent / PROGRAM.name)
    key = hashlib.sha256(f"(stated) {prompt}".encode()).hexdigest()
    (agent / "plan.json").write_text(json.dumps({key: {"files": ["answer.txt"]}}), "utf-8")
    work = tmp_path / "work"
    work.mkdir()
    subprocess.run(
        [sys.executable, str(agent / PROGRAM.name), "read-task", f"(stated) {prompt}"],
        cwd=work,
        env={"CHEAT_HINT": str(tasks), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)},
        check=True,
    )
    assert (work / "answer.txt").read_text("utf-8") == "137\n"
    code, out = _audit(tasks, tmp_path / "home", "--exploit", "noop", "--exploit", "read-task")
    assert code == 0, out[-2000:]
    verdicts = {t["name"]: t for t in json.loads(out)["tasks"]}
    (stated,) = [e for e in verdicts["stated"]["exploits"] if e["id"] == "read-task"]
    assert stated["status"] != "not-applicable" and stated["credit"] == 0.0, stated
    assert verdicts["stated"]["reading"] == []
    (unstated,) = [e for e in verdicts["unstated"]["exploits"] if e["id"] == "read-task"]
    assert unstated["status"] == "not-applicable"
    assert "states no answer" in unstated["notApplicable"]


def test_the_table_lists_identical_deliverables(capsys: pytest.CaptureFixture[str]) -> None:
    from benchguard.cli.audit_tasks_cmds import _table
    from benchguard.workflows.audit_tasks import TaskAudit, TaskVerdict

    group = {
        "sha256": "ab" * 32,
        "files": [{"path": "answer.txt", "sha256": "cd" * 32}],
        "tasks": ["a", "b"],
        "probes": [
            {"task": "a", "exploit": "content-number"},
            {"task": "b", "exploit": "content-number"},
        ],
    }
    _table(
        TaskAudit(
            [TaskVerdict("a", "a/task.yaml"), TaskVerdict("b", "b/task.yaml")], [], "none", [group]
        )
    )
    out = capsys.readouterr().out
    assert "identical deliverables (1 groups" in out
    assert "abababababab (answer.txt): a:content-number, b:content-number" in out
