"""Terminal-Bench and Harbor task folders as `audit-tasks` input.

Built as their authors lay them out (Harbor: task.toml, instruction.md, environment/,
tests/, solution/solve.sh; Terminal-Bench: task.yaml with instruction, solution.sh,
run-tests.sh, tests/). Bad files are bad input naming file and field; a task whose
tests the box cannot run, or whose own solution fails there, is never reported sound;
a hackable one is named with the exploit that passes it.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchguard.cli import app
from benchguard.errors import BadInputError
from benchguard.harness.tasks import load_task
from benchguard.taskaudit.foreign import convert, foreign_format
from benchguard.taskaudit.inputs import load_audit_input

HELLO_TEST = (
    "from pathlib import Path\n\n\n"
    "def test_hello_file():\n"
    "    assert Path('hello.txt').read_text().strip() == 'Hello, world! 4242'\n"
)
EXISTS_TEST = "import os\n\n\ndef test_report_exists():\n    assert os.path.exists('report.txt')\n"
APP_TEST = (
    "from pathlib import Path\n\n\n"
    "def test_hello_file():\n"
    "    assert Path('/app/hello.txt').read_text().strip() == 'Hello, world! 4242'\n"
)
TOML = """version = "1.0"

[metadata]
author_name = "someone"
difficulty = "easy"
tags = ["trivial"]

[verifier]
timeout_sec = 120.0

[agent]
timeout_sec = 120.0

[environment]
build_timeout_sec = 600.0
cpus = 1
"""


def harbor(
    root: Path,
    name: str,
    *,
    instruction: str,
    test: str | None,
    solve: str | None,
    toml: str = TOML,
    seed: dict[str, str] | None = None,
) -> Path:
    folder = root / name
    (folder / "environment").mkdir(parents=True)
    (folder / "environment" / "Dockerfile").write_text("FROM ubuntu:24.04\nWORKDIR /app\n")
    for path, text in (seed or {}).items():
        (folder / "environment" / path).write_text(text, "utf-8")
    (folder / "task.toml").write_text(toml, "utf-8")
    (folder / "instruction.md").write_text(instruction, "utf-8")
    (folder / "tests").mkdir()
    (folder / "tests" / "test.sh").write_text(
        "#!/bin/bash\npytest /tests/test_outputs.py -rA\n"
        "if [ $? -eq 0 ]; then echo 1 > /logs/verifier/reward.txt; "
        "else echo 0 > /logs/verifier/reward.txt; fi\n"
    )
    if test is not None:
        (folder / "tests" / "test_outputs.py").write_text(test, "utf-8")
    if solve is not None:
        (folder / "solution").mkdir()
        (folder / "solution" / "solve.sh").write_text("#!/bin/bash\n" + solve, "utf-8")
    return folder


def terminal_bench(root: Path, name: str, *, test: str, solution: str) -> Path:
    folder = root / name
    (folder / "tests").mkdir(parents=True)
    spec = {
        "instruction": "Write the greeting from greeting.txt, followed by its length, "
        "into hello.txt.",
        "author_name": "someone",
        "difficulty": "easy",
        "max_agent_timeout_sec": 180,
        "max_test_timeout_sec": 30,
        "parser_name": "pytest",
    }
    (folder / "task.yaml").write_text(json.dumps(spec), "utf-8")
    (folder / "Dockerfile").write_text("FROM python:3.13\nWORKDIR /app\nCOPY greeting.txt .\n")
    (folder / "docker-compose.yaml").write_text("services: {}\n")
    (folder / "greeting.txt").write_text("Hello, world! ")
    (folder / "run-tests.sh").write_text("#!/bin/bash\npytest $TEST_DIR/test_outputs.py\n")
    (folder / "solution.sh").write_text("#!/bin/bash\n" + solution)
    (folder / "tests" / "test_outputs.py").write_text(test, "utf-8")
    return folder


SOUND_SOLVE = "printf 'Hello, world! 4242\\n' > hello.txt\n"
SOUND_INSTRUCTION = "Write the greeting, then the year of the comet, into hello.txt.\n"


def test_the_layouts_are_recognised_and_converted(tmp_path: Path) -> None:
    """The seed is the build context without the container's files, the tests are a
    grading folder only, and the solution and timeouts come from the task file."""
    tb = terminal_bench(tmp_path / "in", "tb", test=HELLO_TEST, solution=SOUND_SOLVE)
    hb = harbor(
        tmp_path / "in",
        "hb",
        instruction=SOUND_INSTRUCTION,
        test=HELLO_TEST,
        solve=SOUND_SOLVE,
        seed={"data.csv": "a,b\n"},
    )
    assert (foreign_format(tb), foreign_format(hb)) == ("terminal-bench", "harbor")
    native = tmp_path / "native"
    native.mkdir()
    (native / "task.yaml").write_text(json.dumps({"name": "n", "prompt": "p"}))
    assert foreign_format(native) is None
    for folder, kind, seed, timeouts in (
        (tb, "terminal-bench", ["greeting.txt"], (180.0, 30.0)),
        (hb, "harbor", ["data.csv"], (120.0, 120.0)),
    ):
        converted = convert(folder, kind, tmp_path / "out")  # type: ignore[arg-type]
        assert converted.unrunnable is None
        task = load_task(converted.task_file)
        workspace = converted.task_file.parent / "workspace"
        assert sorted(p.name for p in workspace.iterdir()) == seed
        assert task.grading_files == ("tests",) and task.solution == "solution.sh"
        [check] = task.verification
        assert check.role == "correctness"
        assert (task.timeout, check.timeout) == timeouts  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ({"toml": "version = \n"}, "task.toml: not TOML"),
        (
            {"toml": '[agent]\ntimeout_sec = "soon"\n'},
            "task.toml: field agent.timeout_sec: Input should be a valid number",
        ),
        ({"toml": "[verifier]\ntimeout_sec = -5\n"}, "field verifier.timeout_sec"),
        ({"instruction": ""}, "instruction.md: empty"),
        ({"instruction": None}, "instruction.md: missing"),
        ({"tb_instruction": 5}, "task.yaml: field instruction: Input should be a valid string"),
    ],
)
def test_bad_files_name_the_file_and_field(
    tmp_path: Path, edit: dict[str, Any], expected: str
) -> None:
    """Guards against a broken foreign task file reading as a task (or a traceback)."""
    root = tmp_path / "tasks"
    if "tb_instruction" in edit:
        folder = terminal_bench(root, "t", test=HELLO_TEST, solution=SOUND_SOLVE)
        spec = json.loads((folder / "task.yaml").read_text())
        (folder / "task.yaml").write_text(
            json.dumps({**spec, "instruction": edit["tb_instruction"]})
        )
    else:
        folder = harbor(
            root,
            "t",
            instruction=edit.get("instruction", SOUND_INSTRUCTION) or "",
            test=HELLO_TEST,
            solve=SOUND_SOLVE,
            toml=edit.get("toml", TOML),
        )
        if "instruction" in edit and edit["instruction"] is None:
            (folder / "instruction.md").unlink()
    with pytest.raises(BadInputError) as caught:
        load_audit_input(root, tmp_path / "scratch")
    assert expected in str(caught.value) and str(folder) in str(caught.value)
    result = CliRunner().invoke(app, ["audit-tasks", str(root)])
    assert result.exit_code == 2 and expected in result.output
    assert "Traceback" not in result.output


def test_a_shell_only_verifier_is_unaudited_not_sound(tmp_path: Path) -> None:
    """Guards against a task whose tests cannot run here being passed as sound."""
    root = tmp_path / "tasks"
    harbor(root, "shell-only", instruction=SOUND_INSTRUCTION, test=None, solve=SOUND_SOLVE)
    result = CliRunner().invoke(app, ["audit-tasks", str(root), "--json"])
    assert result.exit_code == 2, result.output
    document = json.loads(result.stdout)
    [task] = document["tasks"]
    assert task["format"] == "harbor" and not task["hackable"]
    assert "holds no pytest file" in task["unaudited"]
    assert document["unaudited"] == ["shell-only"]
    assert task["path"].endswith("shell-only/task.toml")


@pytest.mark.slow
def test_foreign_tasks_are_audited_through_the_grading_box(tmp_path: Path) -> None:
    """Through the real harness: a sound Harbor and Terminal-Bench task pass (their
    own solutions earn full credit, no exploit does); an existence-only Harbor test is
    hackable by the empty file the prompt names; a test reading /app is unaudited (its
    solution fails outside the container). The sound ones alone exit 0."""
    root = tmp_path / "tasks"
    harbor(root, "hb-sound", instruction=SOUND_INSTRUCTION, test=HELLO_TEST, solve=SOUND_SOLVE)
    terminal_bench(root, "tb-sound", test=HELLO_TEST, solution=SOUND_SOLVE)
    harbor(
        root,
        "hb-exists",
        instruction="Summarise the log into report.txt.\n",
        test=EXISTS_TEST,
        solve="echo summary > report.txt\n",
    )
    harbor(
        root,
        "hb-app",
        # Its own prompt: tasks sharing one share the reference solution.
        instruction="Write the greeting, then the comet's year, into /app/hello.txt.\n",
        test=APP_TEST,
        solve="printf 'Hello, world! 4242\\n' > /nonexistent-app/hello.txt\n",
    )
    # The exploits that could pass these shapes (the whole library is the e2e test's).
    base = ["audit-tasks", str(root), "--home", str(tmp_path / "home"), "-j", "2"]
    for exploit in ("noop", "empty-files", "workspace-answer", "patch-test-runner"):
        base += ["--exploit", exploit]
    result = CliRunner().invoke(app, [*base, "--json"])
    assert result.exit_code == 1, result.output
    verdicts = {t["name"]: t for t in json.loads(result.stdout)["tasks"]}
    for name in ("hb-sound", "tb-sound"):
        assert not verdicts[name]["hackable"] and verdicts[name]["unaudited"] is None, verdicts[
            name
        ]
        assert verdicts[name]["reference"]["passed"] is True
    assert "empty-files" in verdicts["hb-exists"]["hacks"]
    assert verdicts["hb-exists"]["format"] == "harbor"
    assert not verdicts["hb-app"]["hackable"]
    assert "reference solution fails" in verdicts["hb-app"]["unaudited"]
    for name in ("hb-exists", "hb-app"):
        shutil.rmtree(root / name)
    sound = CliRunner().invoke(app, base)
    assert sound.exit_code == 0, sound.output
    assert "hb-sound (harbor): sound" in sound.output
