"""Per-run scratch space and the persistent agent home.

Each run gets a fresh scratch directory (outside the tasks and results trees) holding
its workspace, seeded from the task's ``workspace/`` folder, and its transcript and
output files. The agent home, by contrast, persists across runs and batches on
purpose: what one run leaves there is really there for the next, which is the
situation the per-task inventory exists to catch.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchguard.errors import BadInputError
from benchguard.harness.disk_budget import RunDisk
from benchguard.harness.tasks import Task

DEFAULT_AGENT_HOME = Path("~/.benchguard/agent-home")
# Short and neutral: the prefix shows in every `pwd`, and must not look like (or be
# matched as) benchmark material.
SCRATCH_PREFIX = "bg-run-"


@dataclass(frozen=True)
class Scratch:
    root: Path
    workspace: Path
    trajectory_file: Path
    stdout_file: Path
    stderr_file: Path
    # The run's disk budget over this tree (harness.disk_budget); None: unbounded.
    disk: RunDisk | None = None

    def remove(self) -> list[str]:
        """Remove the scratch tree (its size-limited mount first); what could not be
        removed (empty when all went)."""
        problem = self.disk.release() if self.disk is not None else None
        return [*([problem] if problem else []), *remove_tree(self.root)]


# Problems reported per removal; past this they are only counted.
_MAX_REMOVAL_PROBLEMS = 5
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def remove_tree(root: Path) -> list[str]:
    """Delete ``root`` and everything under it, at any depth; the problems, if any.

    ``shutil.rmtree`` recurses once per level (a 1,100-level directory left by an agent
    exhausts Python's recursion limit) and builds full paths (which pass PATH_MAX).
    This walks with one open directory descriptor at a time, moving down by name and
    back up through ``..``, so neither depth nor path length matters. Symlinks are
    unlinked, never followed; a directory the agent made unreadable or read-only is
    given back its owner's permissions first. It never raises.
    """
    problems: list[str] = []

    def note(message: str) -> None:
        if len(problems) < _MAX_REMOVAL_PROBLEMS:
            problems.append(message)

    try:
        fd = os.open(root, _DIR_FLAGS)
    except FileNotFoundError:
        return []
    except OSError as exc:
        if os.path.islink(root) or not os.path.isdir(root):
            try:
                root.unlink()
                return []
            except OSError as inner:
                return [f"{root}: cannot remove ({inner.strerror or inner})"]
        return [f"{root}: cannot open ({exc.strerror or exc})"]
    # The names walked down from root, and per level the subdirectories given up on.
    names: list[str] = []
    skipped: list[set[str]] = [set()]
    try:
        while True:
            child = _enter_next_subdirectory(fd, skipped[-1], note)
            if child is not None:
                name, child_fd = child
                os.close(fd)
                fd = child_fd
                names.append(name)
                skipped.append(set())
                continue
            if not names:
                break
            parent = os.open("..", _DIR_FLAGS, dir_fd=fd)
            os.close(fd)
            fd = parent
            name = names.pop()
            skipped.pop()
            try:
                os.rmdir(name, dir_fd=fd)
            except OSError as exc:
                note(
                    f"{root}: a directory {len(names) + 1} level(s) down: cannot remove "
                    f"({exc.strerror or exc})"
                )
                skipped[-1].add(name)
    except OSError as exc:
        note(f"{root}: removal stopped {len(names)} level(s) down ({exc.strerror or exc})")
    finally:
        os.close(fd)
    try:
        os.rmdir(root)
    except FileNotFoundError:
        pass
    except OSError as exc:
        note(f"{root}: cannot remove ({exc.strerror or exc})")
    return problems


def _enter_next_subdirectory(
    fd: int, skipped: set[str], note: Callable[[str], None]
) -> tuple[str, int] | None:
    """Unlink every non-directory in ``fd``, then open its first subdirectory not in
    ``skipped``: ``(name, fd)``, or None when no such subdirectory is left."""
    with contextlib.suppress(OSError):
        # An agent's chmod a-w on its own directory must not keep its files.
        os.fchmod(fd, 0o700)
    with os.scandir(fd) as entries:
        listed = [(entry.name, entry.is_dir(follow_symlinks=False)) for entry in entries]
    for name, is_dir in sorted(listed):
        if not is_dir:
            try:
                os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                pass
            except OSError as exc:
                note(f"{name}: cannot remove ({exc.strerror or exc})")
        elif name not in skipped:
            try:
                return name, _open_subdirectory(fd, name)
            except OSError as exc:
                note(f"{name}: cannot enter ({exc.strerror or exc})")
                skipped.add(name)
    return None


def _open_subdirectory(fd: int, name: str) -> int:
    try:
        return os.open(name, _DIR_FLAGS, dir_fd=fd)
    except PermissionError:
        # chmod 000 by the agent: the harness owns the tree, so it takes it back.
        os.chmod(name, 0o700, dir_fd=fd)
        return os.open(name, _DIR_FLAGS, dir_fd=fd)


def make_scratch(task: Task, disk_budget: int | None = None) -> Scratch:
    """A fresh scratch directory with the task's seed files copied into its workspace;
    with ``disk_budget``, first made a size-limited mount where the harness can
    (harness.disk_budget), so the seed counts against the run's budget too."""
    root = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX)).resolve()
    disk = RunDisk.make(root, disk_budget) if disk_budget is not None else None
    workspace = root / "workspace"
    seed = task.seed_dir()
    try:
        if seed is not None:
            # symlinks=True: a seed link is copied as a link, never followed out of the
            # task.
            shutil.copytree(seed, workspace, symlinks=True)
        else:
            workspace.mkdir()
    except OSError:
        if disk is not None:
            disk.release()
        remove_tree(root)
        raise
    scratch = Scratch(
        root=root,
        workspace=workspace,
        trajectory_file=root / "trajectory.jsonl",
        stdout_file=root / "stdout.txt",
        stderr_file=root / "stderr.txt",
        disk=disk,
    )
    scratch.trajectory_file.touch()
    return scratch


class WorkspaceError(BadInputError):
    """A directory the harness needs cannot be used; the message names the path and why."""


def ensure_directory(path: Path) -> Path:
    """``path`` as an absolute directory, created with any missing parents.

    Checked before any agent starts, so a path that is a regular file, cannot be created
    or cannot be written to is reported instead of failing halfway through a batch.
    """
    resolved = path.expanduser().resolve()
    if resolved.exists() and not resolved.is_dir():
        raise WorkspaceError(f"{path}: exists and is not a directory")
    try:
        resolved.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise WorkspaceError(
            f"{path}: cannot create the directory ({exc.strerror or exc})"
        ) from None
    if not os.access(resolved, os.W_OK | os.X_OK):
        raise WorkspaceError(f"{path}: the directory is not writable")
    return resolved


def prepare_home(home: Path) -> Path:
    """The agent home, created if missing, as an absolute path (``WorkspaceError`` if it
    cannot be a directory)."""
    return ensure_directory(home)


def granted_paths(skills: tuple[str, ...], home: Path) -> tuple[Path, ...]:
    """Skill paths as absolute paths; ``~/`` is the agent home, not the operator's."""
    paths = []
    for raw in skills:
        path = home / raw[2:] if raw.startswith("~/") else Path(raw)
        if path.is_absolute():
            paths.append(path)
    return tuple(paths)
