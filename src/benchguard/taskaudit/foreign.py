"""Terminal-Bench and Harbor task directories, read as benchguard tasks for the audit.

Two layouts, recognised per folder:

- **Harbor**: ``task.toml`` (TOML, read with ``tomllib``), ``instruction.md`` (the
  prompt), ``environment/`` (a Dockerfile and its build context), ``tests/`` (the
  verifier: ``test.sh`` and usually ``test_*.py``), ``solution/solve.sh`` (optional);
- **Terminal-Bench 1**: ``task.yaml`` with an ``instruction`` field (and no
  ``prompt``: that is a benchguard task), the build context beside it, ``tests/``,
  ``run-tests.sh`` and ``solution.sh``.

Each becomes a benchguard task folder written under a scratch directory: the prompt is
the instruction; the workspace seed is the build context without the container's
definition files (what a ``COPY`` of it would place); ``tests/`` is a grading folder,
never in the workspace (both formats upload the tests only after the agent ends); the
one correctness check runs pytest over ``tests/`` in the clean grading box; the
reference solution is ``solve.sh`` / ``solution.sh``; the agent's timeout and the
verifier's come from the task file. The container is never built and ``test.sh`` /
``run-tests.sh`` are never run (they install packages and write the reward inside the
container): a task whose tests are only a shell script cannot be audited here, and one
whose reference solution does not pass in the box (absolute container paths such as
``/app``, packages the image installs) is not reported sound (the audit lists it as
unaudited).

A file that cannot be read or parsed, or a field of the wrong type, is bad input naming
the file and the field.
"""

from __future__ import annotations

import json
import os
import shutil
import stat
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchguard.errors import BadInputError
from benchguard.harness.tasks import MAX_TIMEOUT_S, TASK_FILE, WORKSPACE_SEED_DIR
from benchguard.yamlfile import YamlFileError, load_yaml_file

ForeignFormat = Literal["harbor", "terminal-bench"]
HARBOR_FILE = "task.toml"
HARBOR_INSTRUCTION = "instruction.md"
TESTS_DIR = "tests"
# Not part of what the agent's container holds: the container's definition, the
# task's own files, the tests and the solution.
CONTAINER_FILES = frozenset(
    {"Dockerfile", "docker-compose.yaml", "docker-compose.yml", ".dockerignore"}
)
TERMINAL_BENCH_OWN = frozenset(
    {TASK_FILE, "solution.sh", "solution.yaml", "run-tests.sh", TESTS_DIR}
)
MAX_INSTRUCTION_BYTES = 1 << 20
MAX_SEED_ENTRIES = 20_000
MAX_CHECK_TIMEOUT_S = 3600.0
DEFAULT_AGENT_TIMEOUT_S = 600.0
DEFAULT_TEST_TIMEOUT_S = 180.0
ModelT = TypeVar("ModelT", bound=BaseModel)


class _Section(BaseModel):
    model_config = ConfigDict(extra="allow")
    timeout_sec: float | None = Field(default=None, gt=0)


class HarborConfig(BaseModel):
    """The fields of ``task.toml`` the audit reads (metadata and the rest are kept)."""

    model_config = ConfigDict(extra="allow")
    version: str | None = None
    agent: _Section = Field(default_factory=_Section)
    verifier: _Section = Field(default_factory=_Section)


class TerminalBenchConfig(BaseModel):
    """The fields of a Terminal-Bench ``task.yaml`` the audit reads."""

    model_config = ConfigDict(extra="allow")
    instruction: str = Field(min_length=1)
    max_agent_timeout_sec: float | None = Field(default=None, gt=0)
    max_test_timeout_sec: float | None = Field(default=None, gt=0)


@dataclass(frozen=True)
class ForeignTask:
    """One converted task: where it came from and the benchguard task file written."""

    folder: str
    format: ForeignFormat
    source: Path
    task_file: Path
    # Why it cannot be audited here (the task is listed, never run), or None.
    unrunnable: str | None = None


def foreign_format(folder: Path) -> ForeignFormat | None:
    """The layout of ``folder``: Harbor (``task.toml``), Terminal-Bench (a
    ``task.yaml`` with ``instruction`` and no ``prompt``), or None (benchguard's own,
    or not a task)."""
    if (folder / HARBOR_FILE).is_file():
        return "harbor"
    task_yaml = folder / TASK_FILE
    if not task_yaml.is_file():
        return None
    try:
        data = load_yaml_file(task_yaml)
    except YamlFileError:
        return None  # the native loader words the error
    if isinstance(data, dict) and "instruction" in data and "prompt" not in data:
        return "terminal-bench"
    return None


def convert(folder: Path, kind: ForeignFormat, root: Path) -> ForeignTask:
    """Write ``folder`` as a benchguard task under ``root`` (module doc); BadInputError
    naming the file and field when its task file cannot be read."""
    if kind == "harbor":
        source = folder / HARBOR_FILE
        config = _harbor(source)
        prompt = _instruction(folder / HARBOR_INSTRUCTION)
        agent_timeout = config.agent.timeout_sec
        test_timeout = config.verifier.timeout_sec
        seed = folder / "environment"
        seed_skip: frozenset[str] = CONTAINER_FILES
        solution = folder / "solution" / "solve.sh"
    else:
        source = folder / TASK_FILE
        tb = _terminal_bench(source)
        prompt = tb.instruction
        agent_timeout = tb.max_agent_timeout_sec
        test_timeout = tb.max_test_timeout_sec
        seed = folder
        seed_skip = CONTAINER_FILES | TERMINAL_BENCH_OWN
        solution = folder / "solution.sh"
    target = root / folder.name
    target.mkdir(parents=True)
    unrunnable = _tests_runnable(folder / TESTS_DIR)
    if unrunnable is None and seed.is_dir():
        unrunnable = _copy_seed(seed, target / WORKSPACE_SEED_DIR, seed_skip)
    spec: dict[str, Any] = {
        "name": folder.name,
        "prompt": prompt,
        "timeout": min(agent_timeout or DEFAULT_AGENT_TIMEOUT_S, MAX_TIMEOUT_S),
        "verification": [],
    }
    if unrunnable is None:
        shutil.copytree(folder / TESTS_DIR, target / TESTS_DIR, symlinks=True)
        spec["grading_files"] = [TESTS_DIR]
        spec["verification"] = [
            {
                "name": "tests-pass",
                "role": "correctness",
                "command": ["python3", "-m", "pytest", "-q", TESTS_DIR],
                "timeout": min(test_timeout or DEFAULT_TEST_TIMEOUT_S, MAX_CHECK_TIMEOUT_S),
            }
        ]
        if solution.is_file() and not solution.is_symlink():
            shutil.copyfile(solution, target / "solution.sh")
            spec["solution"] = "solution.sh"
    task_file = target / TASK_FILE
    task_file.write_text(json.dumps(spec, sort_keys=True), "utf-8")
    return ForeignTask(folder.name, kind, source, task_file, unrunnable)


def _harbor(path: Path) -> HarborConfig:
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: cannot be read ({exc})") from None
    except tomllib.TOMLDecodeError as exc:
        raise BadInputError(f"{path}: not TOML: {exc}") from None
    return _validate(path, HarborConfig, data)


def _terminal_bench(path: Path) -> TerminalBenchConfig:
    data = load_yaml_file(path)
    if not isinstance(data, dict):
        raise BadInputError(f"{path}: the top level must be a mapping with instruction, ...")
    return _validate(path, TerminalBenchConfig, data)


def _validate(path: Path, model: type[ModelT], data: dict[str, Any]) -> ModelT:
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = "; ".join(
            f"field {'.'.join(str(p) for p in e['loc']) or '(top level)'}: {e['msg']}"
            for e in exc.errors(include_url=False)
        )
        raise BadInputError(f"{path}: {problems}") from None


def _instruction(path: Path) -> str:
    try:
        if path.stat().st_size > MAX_INSTRUCTION_BYTES:
            raise BadInputError(f"{path}: over {MAX_INSTRUCTION_BYTES} bytes")
        text = path.read_text("utf-8")
    except FileNotFoundError:
        raise BadInputError(
            f"{path}: missing (a Harbor task's instruction, beside {HARBOR_FILE})"
        ) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInputError(f"{path}: cannot be read ({exc})") from None
    if not text.strip():
        raise BadInputError(f"{path}: empty (the instruction is the agent's prompt)")
    return text


def _tests_runnable(tests: Path) -> str | None:
    """None when ``tests`` holds a pytest file the box can run; else why not."""
    if not tests.is_dir() or tests.is_symlink():
        return f"{TESTS_DIR}/ is missing: nothing to grade with"
    for _, _, files in os.walk(tests):
        if any(
            f.endswith(".py") and (f.startswith("test_") or f.endswith("_test.py")) for f in files
        ):
            return None
    return (
        f"{TESTS_DIR}/ holds no pytest file: its shell verifier runs only in the task's container"
    )


def _copy_seed(source: Path, target: Path, skip: frozenset[str]) -> str | None:
    """Copy the build context (links kept as links: the harness's seeding rules apply);
    the reason when it is past the bound."""
    count = 0
    for _, dirs, files in os.walk(source):
        count += len(dirs) + len(files)
        if count > MAX_SEED_ENTRIES:
            return f"{source}: more than {MAX_SEED_ENTRIES} entries in the build context"
    target.mkdir()
    for entry in sorted(source.iterdir()):
        if entry.name in skip or _special(entry):
            continue
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, target / entry.name, symlinks=True, ignore=_specials)
        else:
            shutil.copy2(entry, target / entry.name, follow_symlinks=False)
    return None


def _special(path: Path) -> bool:
    """A FIFO, socket or device: never copied (reading a FIFO would block)."""
    mode = path.lstat().st_mode
    return not (stat.S_ISREG(mode) or stat.S_ISDIR(mode) or stat.S_ISLNK(mode))


def _specials(folder: str, names: list[str]) -> list[str]:
    return [n for n in names if _special(Path(folder) / n)]
