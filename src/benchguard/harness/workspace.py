"""Per-run scratch space and the persistent agent home.

Each run gets a fresh scratch directory (outside the tasks and results trees) holding
its workspace, seeded from the task's ``workspace/`` folder, and its transcript and
output files. The agent home, by contrast, persists across runs and batches on
purpose: what one run leaves there is really there for the next, which is the
situation the per-task inventory exists to catch.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

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

    def remove(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


def make_scratch(task: Task) -> Scratch:
    """A fresh scratch directory with the task's seed files copied into its workspace."""
    root = Path(tempfile.mkdtemp(prefix=SCRATCH_PREFIX)).resolve()
    workspace = root / "workspace"
    seed = task.seed_dir()
    if seed is not None:
        # symlinks=True: a seed link is copied as a link, never followed out of the task.
        shutil.copytree(seed, workspace, symlinks=True)
    else:
        workspace.mkdir()
    scratch = Scratch(
        root=root,
        workspace=workspace,
        trajectory_file=root / "trajectory.jsonl",
        stdout_file=root / "stdout.txt",
        stderr_file=root / "stderr.txt",
    )
    scratch.trajectory_file.touch()
    return scratch


class WorkspaceError(Exception):
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
