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
- the harness's checkout or its package directory (the grant holds either);
- given this batch's task files (:mod:`benchguard.harness.grant_content`), their
  content: a git repository holding one as a blob (a bare repository or a ``.git``
  directory or file, or an object directory on its own, in, at or around the grant),
  or a regular file that is a copy of one under any name.

The search is bounded (:class:`Bounds`: depth, entries, time). A grant that cannot be
searched within them is refused too (fail closed), and the message says which bound.
Symlinks are not followed: the kernel resolves a link in a granted tree to its target,
which the grant does not cover.

What it cannot see: another batch's material under a name it does not know (a results
file renamed); this batch's files inside an archive, compressed, encrypted or edited;
git objects renamed out of git's layout; material fetched at run time.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from stat import S_ISREG

import benchguard
from benchguard.harness.agents.config import AgentConfig, program_tree, resolve_program
from benchguard.harness.grant_content import (
    Material,
    RepoResult,
    is_git_dir,
    repo_match,
    store_formats,
    store_match,
)
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
    repos: int = 16


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


@dataclass(frozen=True)
class _Entry:
    name: str
    is_dir: bool
    size: int | None  # a regular file's size; None for anything else


class _Content:
    """The content checks of one grant's search: git repositories asked (bounded by
    ``Bounds.repos``) and regular files compared with this batch's task files."""

    def __init__(self, material: Material | None, bounds: Bounds) -> None:
        self.material = material
        self.bounds = bounds
        self.asked: set[str] = set()

    def repo(self, git_dir: Path) -> Found | None:
        return self._ask(git_dir, "a git repository", lambda m: repo_match(git_dir, m))

    def store(self, folder: Path, dirs: set[str]) -> Found | None:
        """``folder`` if it is an object directory on its own (not its repository's,
        asked already): a copied ``objects/`` git can read without ``HEAD``."""
        if self.material is None or not self.material.files:
            return None
        if os.path.realpath(folder.parent) in self.asked:
            return None
        formats = store_formats(folder, dirs)
        if not formats:
            return None
        return self._ask(
            folder, "a git object directory", lambda m: store_match(folder, formats, m)
        )

    def _ask(self, where: Path, what: str, ask: Callable[[Material], RepoResult]) -> Found | None:
        if self.material is None or not self.material.files:
            return None
        key = os.path.realpath(where)
        if key in self.asked:
            return None
        if len(self.asked) >= self.bounds.repos:
            return Found(f"more than {self.bounds.repos} git repositories", None)
        self.asked.add(key)
        result = ask(self.material)
        if result.error is not None:
            return Found(f"{what} {where} git could not check: {result.error}", None)
        if result.match is not None:
            return Found(
                f"{what} holding this batch's task file {result.match.path} (as a git object)",
                where,
            )
        return None

    @property
    def wants_sizes(self) -> bool:
        """Whether a listing needs its files' sizes: only to compare them with task
        files, so never when there are none (one stat per file saved)."""
        return self.material is not None and bool(self.material.files)

    def file(self, path: Path, size: int | None) -> Found | None:
        if self.material is None or size is None:
            return None
        task = self.material.copy_of(path, size)
        if task is None:
            return None
        return Found(f"a copy of this batch's task file {task.path}", path)

    def folder(self, folder: Path, entries: list[_Entry]) -> Found | None:
        files = {e.name for e in entries if not e.is_dir}
        dirs = {e.name for e in entries if e.is_dir}
        if is_git_dir(files, dirs):
            found = self.repo(folder)
            if found is not None:
                return found
        elif (found := self.store(folder, dirs)) is not None:
            return found
        if ".git" in files:  # a worktree's gitfile ("gitdir: ..."); git follows it
            found = self.repo(folder / ".git")
            if found is not None:
                return found
        for entry in entries:
            found = self.file(folder / entry.name, entry.size)
            if found is not None:
                return found
        return None


def scan(
    grant: Path,
    *,
    trees: Iterable[Path] | None = None,
    bounds: Bounds = Bounds(),
    material: Material | None = None,
) -> Found | None:
    """The first benchmark material ``grant`` holds (or lies in), else None.
    ``material``: this batch's task files, searched for by content."""
    real = Path(os.path.realpath(grant))
    for tree in harness_trees() if trees is None else trees:
        tree = Path(os.path.realpath(tree))
        if tree == real or real in tree.parents:
            return Found(
                "the harness's checkout" if tree.name != "benchguard" else "the harness's package",
                tree,
            )
    content = _Content(material, bounds)
    for folder in (real, *real.parents):
        found = _material_at(folder, content, inside=folder != real)
        if found is not None:
            return found
    if real.is_file():
        return content.file(real, _size(real))
    if not real.is_dir():
        return None
    return _walk(real, bounds, content)


def _size(path: Path) -> int | None:
    try:
        stat = path.lstat()
    except OSError:
        return None
    return stat.st_size if S_ISREG(stat.st_mode) else None


def _listing(folder: Path, *, sizes: bool) -> list[_Entry]:
    """``folder``'s entries by name; regular files' sizes only if ``sizes`` (a stat
    each, which the directories above a grant and a search without task files skip)."""
    entries = []
    with os.scandir(folder) as listing:
        for e in listing:
            is_dir = e.is_dir(follow_symlinks=False)
            size = None
            if sizes and e.is_file(follow_symlinks=False):
                with contextlib.suppress(OSError):
                    size = e.stat(follow_symlinks=False).st_size
            entries.append(_Entry(e.name, is_dir, size))
    return sorted(entries, key=lambda e: e.name)


def _material_at(folder: Path, content: _Content, *, inside: bool) -> Found | None:
    """Material at ``folder``, the grant or (``inside``) a directory above it: there,
    a git directory counts (a grant of its ``objects/`` holds its objects), not the
    directory's other files, which the grant does not cover."""
    try:
        entries = _listing(folder, sizes=False)  # above the grant only git counts
    except OSError:
        return None
    found = _judge(folder, entries)
    if found is not None or not inside:
        return found
    files = {e.name for e in entries if not e.is_dir}
    dirs = {e.name for e in entries if e.is_dir}
    if is_git_dir(files, dirs):
        return content.repo(folder)
    return content.store(folder, dirs)


def _judge(folder: Path, entries: list[_Entry]) -> Found | None:
    files = [e.name for e in entries if not e.is_dir]
    dirs = [e.name for e in entries if e.is_dir]
    if TASK_FILE in files:
        return Found("a task folder", folder / TASK_FILE)
    if is_batch(files, dirs):
        return Found("a benchguard results batch", folder)
    return None


def _walk(root: Path, bounds: Bounds, content: _Content) -> Found | None:
    deadline = time.monotonic() + bounds.seconds
    seen = 0
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack:
        folder, depth = stack.pop()
        if time.monotonic() > deadline:
            return Found(f"more than {bounds.seconds:g} s of searching", None)
        try:
            entries = _listing(folder, sizes=content.wants_sizes)
        except OSError as exc:
            return Found(f"an unreadable directory {folder} ({exc.strerror})", None)
        seen += len(entries)
        if seen > bounds.entries:
            return Found(f"more than {bounds.entries} entries", None)
        found = _judge(folder, entries) or content.folder(folder, entries)
        if found is not None:
            return found
        below = [folder / e.name for e in entries if e.is_dir]
        if below and depth + 1 > bounds.depth:
            return Found(f"directories deeper than {bounds.depth} levels", None)
        stack.extend((path, depth + 1) for path in reversed(below))
    return None


def problem(where: str, field: str, grant: Path, found: Found) -> str:
    """The pre-flight message for one refused grant."""
    allowed = (
        "an agent may be granted only paths that hold no task folders (task.yaml), no "
        "copy of this batch's task files (as a file or in a git repository), no results "
        "of any benchguard batch and not the harness's checkout"
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
