"""Whether a path the agent file grants itself holds benchmark material of any batch.

An agent file is the agent author's own input: its ``install:`` and ``skills:`` paths,
its directory and its program's tree become read grants (Landlock's allow-list, the
sandbox's read-only binds). Comparing them with this batch's tasks and ``--out`` only
(red team 6, resgrab and taskgrab) let a grant name an earlier batch's results, whose
records carry every task's expected output, or another copy of the task folders. So
pre-flight searches each granted path, and the directories above it, for:

- a benchguard results batch: a directory holding ``batch.json`` or ``results.json``
  beside another file benchguard writes there (``manifest.json``, ``command.json``,
  ``rows.json``, ``results.json``, ``batch.json``, the journal's ``runs/``);
- a task folder: a directory holding ``task.yaml``;
- the harness's checkout or its package directory (the grant holds either).

The search is bounded (:class:`Bounds`: depth, entries, time). A grant that cannot be
searched within them is refused too (fail closed), and the message says which bound.
Symlinks are not followed: the kernel resolves a link in a granted tree to its target,
which the grant does not cover.

What it cannot see: material under a name it does not know (a results file renamed,
a copied expected output on its own); a hard link to such a file inside a grant.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import benchguard
from benchguard.harness.agents.config import AgentConfig, program_tree, resolve_program
from benchguard.harness.workspace import granted_paths

TASK_FILE = "task.yaml"
# The files benchguard writes in a batch's directory (record.codec, the journal).
BATCH_FILES = frozenset(
    {"batch.json", "results.json", "manifest.json", "command.json", "rows.json"}
)
BATCH_ANCHORS = frozenset({"batch.json", "results.json"})
JOURNAL_DIR = "runs"


@dataclass(frozen=True)
class Bounds:
    depth: int = 32
    entries: int = 100_000
    seconds: float = 20.0


@dataclass(frozen=True)
class Found:
    """What a grant holds (``kind``) and where (``path``); or, with ``path`` None, the
    bound the search hit."""

    kind: str
    path: Path | None


def harness_trees() -> tuple[Path, ...]:
    """The harness's package directory and, when it runs from a checkout (``src/``
    layout beside a ``pyproject.toml``), the checkout."""
    package = Path(benchguard.__file__).resolve().parent
    trees = [package]
    above = package.parent
    if above.name == "src" and (above.parent / "pyproject.toml").is_file():
        trees.append(above.parent)
    return tuple(trees)


def is_batch(names: Iterable[str], dirs: Iterable[str] = ()) -> bool:
    """A benchguard results batch, recognised by the files benchguard writes there."""
    present = set(names) & BATCH_FILES
    if JOURNAL_DIR in set(dirs):
        present.add(JOURNAL_DIR)
    return bool(present & BATCH_ANCHORS) and len(present) >= 2


def scan(
    grant: Path, *, trees: Iterable[Path] | None = None, bounds: Bounds = Bounds()
) -> Found | None:
    """The first benchmark material ``grant`` holds (or lies in), else None."""
    real = Path(os.path.realpath(grant))
    for tree in harness_trees() if trees is None else trees:
        tree = Path(os.path.realpath(tree))
        if tree == real or real in tree.parents:
            return Found(
                "the harness's checkout" if tree.name != "benchguard" else "the harness's package",
                tree,
            )
    for folder in (real, *real.parents):
        found = _material_at(folder)
        if found is not None:
            return found
    if not real.is_dir():
        return None
    return _walk(real, bounds)


def _material_at(folder: Path) -> Found | None:
    try:
        with os.scandir(folder) as listing:
            entries = [(e.name, e.is_dir(follow_symlinks=False)) for e in listing]
    except OSError:
        return None
    return _judge(folder, entries)


def _judge(folder: Path, entries: list[tuple[str, bool]]) -> Found | None:
    files = [name for name, is_dir in entries if not is_dir]
    dirs = [name for name, is_dir in entries if is_dir]
    if TASK_FILE in files:
        return Found("a task folder", folder / TASK_FILE)
    if is_batch(files, dirs):
        return Found("a benchguard results batch", folder)
    return None


def _walk(root: Path, bounds: Bounds) -> Found | None:
    deadline = time.monotonic() + bounds.seconds
    seen = 0
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        if time.monotonic() > deadline:
            return Found(f"more than {bounds.seconds:g} s of searching", None)
        try:
            with os.scandir(folder) as listing:
                entries = sorted((e.name, e.is_dir(follow_symlinks=False)) for e in listing)
        except OSError as exc:
            return Found(f"an unreadable directory {folder} ({exc.strerror})", None)
        seen += len(entries)
        if seen > bounds.entries:
            return Found(f"more than {bounds.entries} entries", None)
        found = _judge(folder, entries)
        if found is not None:
            return found
        below = [folder / name for name, is_dir in entries if is_dir]
        if below and depth + 1 > bounds.depth:
            return Found(f"directories deeper than {bounds.depth} levels", None)
        stack.extend((path, depth + 1) for path in reversed(below))
    return None


def problem(where: str, field: str, grant: Path, found: Found) -> str:
    """The pre-flight message for one refused grant."""
    allowed = (
        "an agent may be granted only paths that hold no task folders (task.yaml), no "
        "results of any benchguard batch and not the harness's checkout"
    )
    if found.path is None:
        return (
            f"{where}: {field} path {grant} could not be searched for benchmark material "
            f"within its bounds ({found.kind}); grant a smaller directory ({allowed})"
        )
    return f"{where}: {field} path {grant} holds {found.kind} ({found.path}); {allowed}"


def label(grant: Path, fields: Mapping[Path, str] | None) -> str:
    """Which field of the agent file granted ``grant``."""
    if fields:
        for path, name in fields.items():
            if os.path.realpath(path) == os.path.realpath(grant):
                return name
    return "granted"


def grant_fields(agent: AgentConfig, home: Path) -> dict[Path, str]:
    """Each path the agent file grants, by the field that grants it."""
    fields: dict[Path, str] = {}
    program = resolve_program(agent)
    if program is not None:
        fields[program_tree(program)] = "argv (its program's tree)"
    if agent.agent_dir is not None:
        fields[agent.agent_dir] = "its own directory (argv uses {agent_dir})"
    for path in granted_paths(agent.skills, home):
        fields[path] = "skills"
    for path in agent.install_paths():
        fields[path] = "install"
    return fields
