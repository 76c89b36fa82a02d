"""``benchguard run`` as one call: its options as given in, the finished batch out.

:func:`run_command` reads the command back from a run directory for ``--resume RUN_DIR``
alone, checks every option (a :class:`BadInputError` naming the flag and what is
allowed, before any agent starts), probes the audit, prepares and runs the batch
(:mod:`benchguard.workflows.run`) and records the command for a later ``--resume``.
What happens meanwhile goes to a :class:`RunWatcher` (the CLI's progress bar); nothing
here prints.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from benchguard.errors import BadInputError, BenchguardError
from benchguard.harness.audit import AUDIT_MODES, AuditSettings, AuditUnavailable, probe_strace
from benchguard.harness.batch import BatchResult
from benchguard.harness.disk_budget import DEFAULT_DISK_BUDGET, parse_budget
from benchguard.harness.fanotify import require_fanotify
from benchguard.harness.job import Job
from benchguard.harness.memory_limit import parse_memory_budget
from benchguard.records import RunRecord
from benchguard.workflows.profiles import one_profile_for_run
from benchguard.workflows.resume import load_command, runs_done, save_command
from benchguard.workflows.run import NoticeKind, RunRequest, prepare_run, run_prepared


class RunWatcher(Protocol):
    """Told what happens as the batch is prepared and run."""

    def notice(self, kind: NoticeKind, message: str) -> None:
        """Something a person must know before the batch starts (a skipped task, a
        missing sandbox or audit), in the order found."""

    def started(self, agent: str, total: int, done: int) -> None:
        """The batch starts: ``total`` planned runs, ``done`` of them already in a
        resumed batch's journal."""

    def finished(self, job: Job, record: RunRecord) -> None:
        """One run is done."""


@dataclass(frozen=True)
class RunOptions:
    """The command's options as given; each field is the flag of the same name (a
    stored command, for ``--resume RUN_DIR`` alone, holds the same names)."""

    tasks_dir: Path | None = None
    agent: str | None = None
    iterations: int = 1
    jobs: int = 1
    sandbox: str = "none"
    out: Path = Path("results")
    home: Path | None = None
    # Several are refused: a batch uses one profile (the union is scan's and score's).
    profile: Sequence[str] | None = None
    rules: Path | None = None
    detect: bool | None = None
    inventory: bool | None = None
    inventory_roots: Sequence[Path] | None = None
    judge: str | None = None
    audit: str = "auto"
    protect: Sequence[Path] | None = None
    engine: str | None = None
    scheduler: str | None = None
    workers: int | None = None
    shared_inputs: bool = False
    unconfined: bool = False
    home_mode: str = "fresh"
    discard_home_writes: bool = False
    allow_host_network: bool = False
    disk_budget: str = "2GiB"
    # None: the default, a fraction of the machine's memory over -j (harness.memory_limit).
    memory_budget: str | None = None
    resume: Path | None = None


@dataclass
class RunCommandResult:
    """The finished batch, and warnings about it (what went wrong outside any one run,
    a command that could not be recorded for ``--resume``)."""

    batch: BatchResult
    warnings: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        return self.batch.exit_code


def run_command(options: RunOptions, watcher: RunWatcher) -> RunCommandResult:
    """Check, run and record the batch; a :class:`BenchguardError` before any agent
    starts (bad input), or for a ``--resume`` journal that does not fit."""
    given = asdict(options)
    resume = given.pop("resume")
    fields = command_fields(given, resume)
    request, profile = run_request(fields)
    prepared = prepare_run(request, watcher.notice)
    total = len(prepared.tasks) * request.iterations
    # A resumed batch starts at the runs its journal already holds.
    already = runs_done(resume) if resume is not None else 0
    watcher.started(prepared.settings.agent.name, total, min(already, total))
    batch = run_prepared(prepared, on_done=watcher.finished, resume=resume)
    result = RunCommandResult(batch, list(batch.errors))
    try:
        save_command(batch.run_dir, {**fields, "profile": profile})
    except (OSError, BenchguardError) as exc:
        result.warnings.append(f"{batch.run_dir}: cannot record the command for --resume: {exc}")
    return result


def command_fields(given: dict[str, Any], resume: Path | None) -> dict[str, Any]:
    """The flags as given; with ``--resume RUN_DIR`` and neither TASKS_DIR nor --agent,
    the command RUN_DIR recorded. One of the two without the other is bad input."""
    if given["tasks_dir"] is not None and given["agent"] is not None:
        return given
    if resume is None:
        missing = "TASKS_DIR" if given["tasks_dir"] is None else "--agent"
        raise BadInputError(f"missing {missing} (or give --resume RUN_DIR alone)")
    if given["tasks_dir"] is not None or given["agent"] is not None:
        raise BadInputError(
            "with --resume, give both TASKS_DIR and --agent as the first time, or neither "
            "(the run directory holds the command)"
        )
    return load_command(resume).model_dump()


def run_request(fields: Mapping[str, Any]) -> tuple[RunRequest, str | None]:
    """The request ``fields`` describe (the flags, or a stored command), checked in the
    order a person fixes them; and the one profile asked for (``None``: configured)."""
    sandbox = fields["sandbox"]
    if sandbox not in ("none", "bwrap"):
        raise BadInputError(f"--sandbox {sandbox!r}: allowed values are none, bwrap")
    audit = audit_settings(fields["audit"], fields["protect"] or [])
    home_mode = fields.get("home_mode", "fresh")
    if home_mode not in ("fresh", "persistent"):
        raise BadInputError(f"--home-mode {home_mode!r}: allowed values are fresh, persistent")
    # A stored command holds the one profile the batch used; the flag, a list of them.
    flags = fields["profile"]
    profile = one_profile_for_run([flags] if isinstance(flags, str) else flags)
    request = RunRequest(
        tasks_dir=Path(fields["tasks_dir"]),
        agent=str(fields["agent"]),
        iterations=fields["iterations"],
        jobs=fields["jobs"],
        sandbox="bwrap" if sandbox == "bwrap" else "none",
        out=Path(fields["out"]),
        home=_path(fields["home"]),
        profile=profile,
        rules=_path(fields["rules"]),
        detect=fields["detect"],
        inventory=fields["inventory"],
        inventory_roots=_paths(fields["inventory_roots"]),
        judge=fields["judge"],
        audit=audit,
        engine=fields["engine"],
        scheduler=fields["scheduler"],
        workers=fields["workers"],
        shared_inputs=fields["shared_inputs"],
        unconfined=bool(fields.get("unconfined", False)),
        home_mode="fresh" if home_mode == "fresh" else "persistent",
        keep_home_writes=not fields.get("discard_home_writes", False),
        allow_host_network=bool(fields.get("allow_host_network", False)),
        # A command stored before the option had none: the default budget.
        disk_budget=parse_budget(fields.get("disk_budget") or DEFAULT_DISK_BUDGET),
        # Likewise none: the default limit of the machine that runs it.
        memory_budget=parse_memory_budget(fields.get("memory_budget")),
    )
    return request, profile


def audit_settings(mode: str, protect: Sequence[Path | str]) -> AuditSettings:
    """``--audit MODE`` probed on this machine: ``auto`` is fanotify as root, else strace
    where it can trace, else none; a mode named outright that cannot run is bad input."""
    if mode not in ("auto", *AUDIT_MODES):
        raise BadInputError(f"--audit {mode!r}: allowed values are auto, fanotify, strace, none")
    paths = tuple(Path(os.path.abspath(os.path.expanduser(p))) for p in protect)
    if mode == "none":
        return AuditSettings("none", protect=paths)
    if mode in ("auto", "fanotify"):
        try:
            require_fanotify()
            return AuditSettings("fanotify", protect=paths)
        except AuditUnavailable as exc:
            if mode == "fanotify":
                raise BadInputError(str(exc)) from None
    try:
        strace = probe_strace()
    except AuditUnavailable as exc:
        if mode == "strace":
            raise BadInputError(str(exc)) from None
        return AuditSettings("none", protect=paths)
    return AuditSettings("strace", strace=strace, protect=paths)


def _path(value: str | Path | None) -> Path | None:
    return None if value is None else Path(value)


def _paths(values: Sequence[Any] | None) -> list[Path] | None:
    return None if values is None else [Path(v) for v in values]


__all__ = [
    "RunCommandResult",
    "RunOptions",
    "RunWatcher",
    "audit_settings",
    "command_fields",
    "run_command",
    "run_request",
]
