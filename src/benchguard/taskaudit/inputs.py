"""What ``audit-tasks`` reads from TASKS_DIR: benchguard tasks, and Terminal-Bench or
Harbor task folders converted to benchguard tasks (``taskaudit/foreign.py``).

Every folder is looked at in sorted order. A benchguard ``task.yaml`` is loaded as
``run`` loads it, except that checks running workspace programs are kept (the lint
reports them). A foreign folder is written as a benchguard task under ``scratch`` and
loaded from there; the operator's own file stays the task's ``path`` in the report.
Any file that cannot be read or parsed is bad input (all of them named at once); a
foreign task that cannot be run here is kept aside as unaudited, with the reason.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from benchguard.errors import BadInputError
from benchguard.harness.tasks import TASK_FILE, LoadedTasks, TaskDirError, load_task
from benchguard.taskaudit.foreign import HARBOR_FILE, convert, foreign_format

NATIVE = "benchguard"


@dataclass(frozen=True)
class Unaudited:
    folder: str
    path: str
    format: str
    reason: str


@dataclass(frozen=True)
class AuditInput:
    loaded: LoadedTasks
    # Per task folder: the task file the operator wrote, and its format.
    sources: dict[str, str]
    formats: dict[str, str]
    unaudited: tuple[Unaudited, ...]


def load_audit_input(tasks_dir: Path, scratch: Path) -> AuditInput:
    """Every task of ``tasks_dir`` (module doc); BadInputError naming each bad file."""
    if not tasks_dir.is_dir():
        raise TaskDirError(f"{tasks_dir}: not a directory of tasks (expected <folder>/{TASK_FILE})")
    tasks = []
    errors: list[str] = []
    sources: dict[str, str] = {}
    formats: dict[str, str] = {}
    unaudited: list[Unaudited] = []
    for folder in sorted(p for p in tasks_dir.iterdir() if p.is_dir()):
        kind = foreign_format(folder)
        try:
            if kind is None:
                if (folder / TASK_FILE).is_file():
                    task = load_task(folder / TASK_FILE, allow_workspace_code=True)
                    tasks.append(task)
                    sources[task.folder], formats[task.folder] = task.path, NATIVE
                continue
            converted = convert(folder, kind, scratch)
            sources[folder.name], formats[folder.name] = str(converted.source), kind
            if converted.unrunnable is not None:
                unaudited.append(
                    Unaudited(folder.name, str(converted.source), kind, converted.unrunnable)
                )
                continue
            try:
                tasks.append(load_task(converted.task_file, allow_workspace_code=True))
            except ValueError as exc:
                # Name the operator's file, not the converted copy.
                raise ValueError(
                    str(exc).replace(str(converted.task_file), str(converted.source))
                ) from None
        except (BadInputError, ValueError) as exc:
            errors.append(str(exc))
    if errors:
        raise BadInputError("; ".join(errors))
    if not tasks and not unaudited:
        raise TaskDirError(
            f"{tasks_dir}: no <folder>/{TASK_FILE} (or Harbor <folder>/{HARBOR_FILE}) found"
        )
    return AuditInput(LoadedTasks(tuple(tasks), ()), sources, formats, tuple(unaudited))
