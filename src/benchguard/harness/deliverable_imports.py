"""Which workspace modules a pytest check may import: the top-level names its test
files import, read with Python's own parser.

Why: the grading box used to put the workspace copy on ``sys.path`` before pytest
started, so any module there that something merely probed for ran inside the test
process (a red team's ``org/__init__.py`` ran when pickle, imported by pytest at start,
probed for Jython's ``org.python.core``, and rewrote every report to "passed" before the
harness's stream plugin was loaded). The box now serves from the workspace only the
names the tests import (``grading.PYTEST_BOOTSTRAP``), and only once pytest itself is
imported; every other name is not found there.

What it cannot see: a module the tests import by a computed name
(``importlib.import_module(name)``, ``__import__``) is not served; such a suite fails
in the box rather than letting anything of the workspace load unasked.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator, Sequence
from pathlib import Path

# Bounds on what is parsed (the test files are the task's; a bound keeps a huge or
# agent-made tree from stalling the check). Past them the names found so far are used.
MAX_TEST_FILES = 2_000
MAX_TEST_FILE_BYTES = 2 << 20
MAX_DEPTH = 32


def imported_names(work: Path, operands: Sequence[str]) -> list[str]:
    """The sorted top-level module names the test files under ``operands`` (paths
    relative to ``work``; none: the whole tree, as pytest collects it) import
    absolutely, and, transitively, the workspace modules those served modules import.

    Why the closure: an honest deliverable split into modules (``stats.py`` importing
    its own ``sumhelp.py``) must import in the box as it does in the workspace (red
    team 30's honest helper scored 0). It grants nothing new: a served module already
    runs its own code in the test process, and the finder is last on ``sys.meta_path``,
    so a served name never shadows one the grader's own paths provide. A file that does
    not parse contributes nothing (pytest reports it)."""
    names = _imports_of(_test_files(work, operands))
    frontier = sorted(names)
    parsed = 0
    while frontier and parsed < MAX_TEST_FILES:
        name = frontier.pop()
        files = list(_workspace_module_files(work, name))[: MAX_TEST_FILES - parsed]
        parsed += len(files)
        for found in sorted(_imports_of(iter(files)) - names):
            names.add(found)
            frontier.append(found)
    return sorted(name for name in names if name.isidentifier())


def _imports_of(paths: Iterator[Path]) -> set[str]:
    names: set[str] = set()
    for path in paths:
        try:
            if path.stat().st_size > MAX_TEST_FILE_BYTES:
                continue
            tree = ast.parse(path.read_bytes(), filename=str(path))
        except (OSError, SyntaxError, ValueError, RecursionError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".", 1)[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".", 1)[0])
    return names


def _workspace_module_files(work: Path, name: str) -> Iterator[Path]:
    """The Python files of the workspace's top-level module ``name``: ``name.py``, or
    the ``.py`` files of the package folder ``name/`` (regular files only)."""
    if not name.isidentifier():
        return
    single = work / f"{name}.py"
    if single.is_file() and not single.is_symlink():
        yield single
        return
    package = work / name
    if package.is_dir() and not package.is_symlink():
        yield from _test_files(package, [])


def _test_files(work: Path, operands: Sequence[str]) -> Iterator[Path]:
    roots = [work / _node_path(op) for op in operands if not op.startswith("-")] or [work]
    seen = 0
    for root in roots:
        if root.is_file():
            if root.suffix == ".py":
                seen += 1
                yield root
            continue
        for folder, dirs, files in os.walk(root):
            depth = Path(folder).relative_to(root).parts
            if len(depth) >= MAX_DEPTH:
                dirs.clear()
            dirs.sort()
            for name in sorted(files):
                if name.endswith(".py"):
                    seen += 1
                    if seen > MAX_TEST_FILES:
                        return
                    yield Path(folder) / name


def _node_path(operand: str) -> str:
    """``tests/test_x.py::test_y`` names the file ``tests/test_x.py``."""
    return operand.split("::", 1)[0]
