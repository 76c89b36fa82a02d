"""Task definitions: ``TASKS_DIR/<folder>/task.yaml``, validated before anything runs.

A task names what the agent is asked (``prompt``), how long it may take (``timeout``)
and how the result is checked afterwards (``verification``). Checks are data, never
code: a command given as an argv list with its expected exit code, or an assertion on
one file (exists / contains / matches). Each check has a role; a safeguard also has a
severity, which decides whether its failure zeroes the run (catastrophic) or only
lowers it (recoverable).

A bad task file produces an error naming the file, the field and what is allowed, and
the other tasks still load: ``load_tasks`` never raises for one bad file.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Annotated, Any, Literal

import re2
from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    Tag,
    ValidationInfo,
    field_validator,
    model_validator,
)

from benchguard.errors import BadInputError
from benchguard.harness.check_programs import (
    GradingPaths,
    WorkspaceCode,
    check_command,
    normalise,
    pytest_run,
)
from benchguard.harness.model_file import load_model_file

TASK_FILE = "task.yaml"
# Seed files copied into each run's fresh workspace; the task file itself never is.
WORKSPACE_SEED_DIR = "workspace"

Role = Literal["correctness", "safeguard"]
SafeguardSeverity = Literal["catastrophic", "recoverable"]

# Bounds on what a check may cost: a task file is operator-authored, but a regex that
# backtracks or a multi-GB deliverable must not stall the harness.
MAX_TIMEOUT_S = 24 * 3600.0
MAX_PATTERN_CHARS = 2_000


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


def quiet_re2_options() -> re2.Options:
    """RE2 options that report a bad pattern by exception only, not also on stderr."""
    options = re2.Options()
    options.log_errors = False
    return options


class _CheckBase(_Frozen):
    name: str = Field(min_length=1)
    role: Role
    severity: SafeguardSeverity | None = None

    @model_validator(mode="after")
    def _severity_matches_role(self) -> _CheckBase:
        if self.role == "safeguard" and self.severity is None:
            raise ValueError("a safeguard needs severity: catastrophic or recoverable")
        if self.role == "correctness" and self.severity is not None:
            raise ValueError("severity applies only to role: safeguard")
        return self


class CommandCheck(_CheckBase):
    """Run ``command`` (argv, never a shell string) in the workspace; pass on ``exit_code``."""

    command: tuple[str, ...] = Field(min_length=1)
    exit_code: int = 0
    timeout: float = Field(default=30.0, gt=0, le=3600)

    @field_validator("command", mode="before")
    @classmethod
    def _argv_not_shell(cls, value: Any) -> Any:
        if isinstance(value, str):
            raise ValueError(
                "must be a list of arguments (argv), not a shell string; "
                'write ["sh", "-c", "..."] if a shell is really meant'
            )
        return value


class FileCheck(_CheckBase):
    """An assertion on one file, relative to the workspace (or ``~/`` for the agent home).

    Exactly one of ``exists``, ``contains`` (a substring) or ``matches`` (an RE2 regex,
    searched; linear time, so a task cannot stall the harness) is given.
    """

    file: str = Field(min_length=1)
    exists: bool | None = None
    contains: str | None = None
    matches: str | None = Field(default=None, max_length=MAX_PATTERN_CHARS)

    @field_validator("file")
    @classmethod
    def _inside_workspace_or_home(cls, value: str) -> str:
        path = PurePosixPath(value.removeprefix("~/"))
        if path.is_absolute() or ".." in path.parts:
            raise ValueError(
                "must be relative to the workspace (or start with ~/ for the agent home) "
                "and must not contain '..'"
            )
        return value

    @field_validator("matches")
    @classmethod
    def _re2_compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re2.compile(value, options=quiet_re2_options())
            except re2.error as exc:
                detail = (
                    exc.args[0].decode() if exc.args and isinstance(exc.args[0], bytes) else exc
                )
                raise ValueError(
                    f"is not a valid RE2 regex ({detail}); lookarounds and backreferences "
                    "are not supported"
                ) from None
        return value

    @model_validator(mode="after")
    def _one_assertion(self) -> FileCheck:
        given = [k for k in ("exists", "contains", "matches") if getattr(self, k) is not None]
        if len(given) != 1:
            raise ValueError(
                f"a file check needs exactly one of exists, contains, matches (got {given or 'none'})"
            )
        return self


def _check_kind(value: Any) -> str | None:
    if isinstance(value, dict):
        if "command" in value:
            return "command"
        if "file" in value:
            return "file"
    return None


# A check is told apart by the key it carries, so an error names the right fields.
Check = Annotated[
    Annotated[CommandCheck, Tag("command")] | Annotated[FileCheck, Tag("file")],
    Discriminator(
        _check_kind,
        custom_error_type="check_kind",
        custom_error_message="a check needs either command: [argv...] or file: PATH",
    ),
]


class Acknowledgement(_Frozen):
    """A finding of ``benchguard audit-tasks`` the task's author accepts, and why (e.g.
    a prompt that dictates the line its check reads, on purpose)."""

    id: str = Field(min_length=1)
    reason: str = Field(min_length=1)


# Validation context key: load a task whose command checks run workspace files (for
# ``audit-tasks``, which reports them as hackable instead of refusing them).
ALLOW_WORKSPACE_CODE = "allow_workspace_code"


class Task(_Frozen):
    """One task as written in its task.yaml (``folder`` and ``path`` are filled by the loader)."""

    name: str = Field(min_length=1)
    prompt: str = Field(min_length=1)
    timeout: float = Field(default=300.0, gt=0, le=MAX_TIMEOUT_S)
    network: bool = False
    # Files and folders of the task folder that grade the run (tests, verifier scripts,
    # expected outputs): copied into the grading box from the task folder, never from
    # the workspace, over whatever the agent left at the same path (harness/grading.py).
    # A command check may run them; a change to them during the run is tampering.
    grading_files: tuple[str, ...] = ()
    # Files the grader itself writes (a reward or verdict file), relative to the box's
    # working directory: removed from the copy before grading; an agent that writes one
    # in its workspace is tampering.
    grader_outputs: tuple[str, ...] = ()
    verification: tuple[Check, ...] = ()
    # The task's reference solution: a shell script of the task folder, run with `sh`
    # in a fresh workspace by ``audit-tasks`` (it must earn full correctness). Never
    # shown to an agent; it is benchmark material like the rest of the task folder.
    solution: str | None = None
    # audit-tasks findings (exploit or lint ids) the author accepts, each with a reason.
    findings_acknowledged: tuple[Acknowledgement, ...] = ()
    expected_output: str | None = None
    rubric: str | None = None
    folder: str = ""
    path: str = ""

    @field_validator("solution")
    @classmethod
    def _relative_solution(cls, value: str | None) -> str | None:
        if value is not None and normalise(value) is None:
            raise ValueError(f"{value!r} must be a path relative to the task folder, without '..'")
        return value

    @field_validator("grading_files", "grader_outputs")
    @classmethod
    def _relative_paths(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for entry in value:
            if normalise(entry) is None:
                raise ValueError(
                    f"{entry!r} must be a path relative to the task folder, without '..'"
                )
        return value

    @field_validator("verification")
    @classmethod
    def _no_workspace_code(
        cls, value: tuple[Check, ...], info: ValidationInfo
    ) -> tuple[Check, ...]:
        if info.context and info.context.get(ALLOW_WORKSPACE_CODE):
            return value
        # grading_files is declared before verification, so it is validated first.
        grading = GradingPaths(tuple(info.data.get("grading_files", ())))
        for index, check in enumerate(value):
            if not isinstance(check, CommandCheck):
                continue
            try:
                check_command(check.command, grading)
            except WorkspaceCode as exc:
                raise ValueError(
                    f"check {check.name!r} (verification.{index}.command): {exc}"
                ) from None
            if pytest_run(check.command) is not None and check.exit_code != 0:
                raise ValueError(
                    f"check {check.name!r} (verification.{index}.exit_code): a pytest check "
                    "passes on exit code 0 and its report; exit_code must be 0"
                )
        return value

    @model_validator(mode="after")
    def _unique_check_names(self) -> Task:
        names = [c.name for c in self.verification]
        repeated = sorted({n for n in names if names.count(n) > 1})
        if repeated:
            raise ValueError(f"verification check names must be unique; repeated: {repeated}")
        return self

    def task_dir(self) -> Path:
        """The task's own folder (where its grading files live)."""
        return Path(self.path).parent

    def seed_dir(self) -> Path | None:
        """The task's workspace seed directory, when it has one."""
        seed = Path(self.path).parent / WORKSPACE_SEED_DIR
        return seed if seed.is_dir() else None


@dataclass(frozen=True)
class LoadedTasks:
    """Every valid task in folder order, and one readable error per bad task file."""

    tasks: tuple[Task, ...]
    errors: tuple[str, ...]


class TaskDirError(BadInputError, ValueError):
    """The tasks directory itself is unusable (missing, not a directory, no tasks)."""


def load_task(path: Path, *, allow_workspace_code: bool = False) -> Task:
    """Load one task file; raise ``ValueError`` with a message naming file, field and rule.

    ``allow_workspace_code``: accept command checks that run workspace files (only
    ``audit-tasks`` asks: it reports them instead of refusing them)."""
    task = load_model_file(
        path,
        Task,
        error=ValueError,
        top_level="name, prompt",
        loader_fields={"folder": path.parent.name, "path": str(path)},
        allowed_fields=_allowed_fields,
        shown_location=_without_tags,
        context={ALLOW_WORKSPACE_CODE: allow_workspace_code},
    )
    _grading_files_exist(task, path)
    return task


def _grading_files_exist(task: Task, path: Path) -> None:
    """Each declared grading file is a file or folder inside the task folder (a link
    out of it, or a missing entry, is refused)."""
    folder = path.parent.resolve()
    if task.solution is not None:
        solution = folder / task.solution
        if not solution.is_file() or not solution.resolve().is_relative_to(folder):
            raise ValueError(f"{path}: field solution: {task.solution!r} is not a file in {folder}")
    for index, entry in enumerate(task.grading_files):
        target = folder / entry
        if not target.exists():
            raise ValueError(
                f"{path}: field grading_files.{index}: {entry!r} does not exist in {folder}"
            )
        if not target.resolve().is_relative_to(folder):
            raise ValueError(
                f"{path}: field grading_files.{index}: {entry!r} leads out of the task folder"
            )
        if Path(entry).parts[0] == "task.yaml" or normalise(entry) == TASK_FILE:
            raise ValueError(
                f"{path}: field grading_files.{index}: the task file itself is not a grading file"
            )


def load_tasks(tasks_dir: Path, *, allow_workspace_code: bool = False) -> LoadedTasks:
    """Load ``tasks_dir/*/task.yaml`` in sorted folder order; bad files become errors."""
    if not tasks_dir.is_dir():
        raise TaskDirError(f"{tasks_dir}: not a directory of tasks (expected <folder>/{TASK_FILE})")
    tasks: list[Task] = []
    errors: list[str] = []
    for folder in sorted(p for p in tasks_dir.iterdir() if p.is_dir()):
        task_file = folder / TASK_FILE
        if not task_file.is_file():
            continue
        try:
            tasks.append(load_task(task_file, allow_workspace_code=allow_workspace_code))
        except ValueError as exc:
            errors.append(str(exc))
    if not tasks and not errors:
        raise TaskDirError(f"{tasks_dir}: no <folder>/{TASK_FILE} found")
    return LoadedTasks(tasks=tuple(tasks), errors=tuple(errors))


def _without_tags(loc: tuple[int | str, ...]) -> tuple[int | str, ...]:
    # The union tag pydantic inserts (verification.0.file.role) is not a field the
    # author wrote; drop it so the path reads as in the YAML.
    if len(loc) >= 3 and loc[0] == "verification" and loc[2] in ("command", "file"):
        return (*loc[:2], *loc[3:])
    return loc


def _allowed_fields(loc: tuple[int | str, ...]) -> str:
    if len(loc) >= 3 and loc[0] == "verification":
        model = CommandCheck if loc[2] == "command" else FileCheck
        fields = sorted(model.model_fields)
    else:
        fields = sorted(set(Task.model_fields) - {"folder", "path"})
    return ", ".join(fields)
