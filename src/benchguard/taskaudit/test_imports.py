"""Which modules a pytest check's grading tests import that the agent could have written.

The grading box runs a pytest check in one interpreter: the tests and the deliverable
they import share it. A deliverable's module-level code therefore runs inside the
test process and can rewrite pytest's own state (make every test a no-op, forge its
reports) whatever the box reads the outcome from. This module names, per pytest check,
the top-level modules its grading test files import that are neither the standard
library, an installed package, nor a grading file of the task: those resolve to the
box's copy of the workspace, i.e. to the agent's files.

Read with ``ast`` from the task folder (never executed), bounded in files and bytes.
Imports inside functions are read too (``ast.walk``); an import built at run time
(``importlib.import_module(name)``, ``__import__``) is not seen.
"""

from __future__ import annotations

import ast
import importlib.machinery
import os
import sys
from pathlib import Path

from benchguard.harness.check_programs import GradingPaths, PytestRun

MAX_TEST_FILES = 200
MAX_TEST_BYTES = 1 << 20
# The test runner itself: importing it is not importing the deliverable.
RUNNER_MODULES = frozenset({"pytest", "_pytest", "pluggy"})


def workspace_imports(task_dir: Path, run: PytestRun, grading: GradingPaths) -> list[str]:
    """Sorted top-level module names the grading operands of ``run`` import that would
    come from the workspace (module doc)."""
    names: set[str] = set()
    for file in _test_files(task_dir, run.operands):
        # A module beside the test file is the task's own (pytest puts the test's
        # folder on the path, and the box copies that folder from the task).
        names.update(
            n
            for n in _imports(file)
            if not (file.parent / f"{n}.py").is_file() and not (file.parent / n).is_dir()
        )
    return sorted(
        name
        for name in names
        if name not in sys.stdlib_module_names
        and name not in RUNNER_MODULES
        and not grading.covers(name + ".py")
        and not grading.covers(name)
        and not _installed(name)
    )


def _test_files(task_dir: Path, operands: tuple[str, ...]) -> list[Path]:
    found: list[Path] = []
    root = task_dir.resolve()
    for operand in operands:
        path = (task_dir / operand.partition("::")[0]).resolve()
        if not path.is_relative_to(root):
            continue
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.py") if p.is_file())
        elif path.is_file():
            found.append(path)
        if len(found) >= MAX_TEST_FILES:
            break
    return found[:MAX_TEST_FILES]


def _imports(file: Path) -> set[str]:
    try:
        if file.stat().st_size > MAX_TEST_BYTES:
            return set()
        tree = ast.parse(file.read_bytes(), filename=str(file))
    except (OSError, SyntaxError, ValueError):
        return set()
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


def _installed(name: str) -> bool:
    """``name`` is found on the harness's own path (not its working directory): the
    box appends the workspace copy last, so an installed module wins over it."""
    cwd = os.getcwd()
    path = [p for p in sys.path if p and os.path.abspath(p) != cwd]
    try:
        return importlib.machinery.PathFinder.find_spec(name, path) is not None
    except (ImportError, ValueError):
        return False
