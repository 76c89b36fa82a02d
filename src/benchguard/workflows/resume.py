"""``benchguard run --resume RUN_DIR`` on its own: the run directory holds the command.

When a batch ends (finished, or stopped by SIGINT/SIGTERM), ``command.json`` in its run
directory records the request as given: the tasks directory, the agent, iterations,
jobs, sandbox, home, profile, rules, audit and engine, paths made absolute. ``--resume
RUN_DIR`` alone reads it back, as ``inspect eval-retry LOG`` does; the full original
command plus ``--resume`` keeps working (the journal checks that the plans agree). A
batch killed outright (SIGKILL, out of memory) never wrote the file: then the error
says to give the original command. Also here: how many of the plan's runs are already
done, so a resumed batch's progress starts there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError

from benchguard.errors import BadInputError
from benchguard.harness.batch import needs_rerun
from benchguard.harness.journal import Journal, JournalError
from benchguard.results.io import write_text_atomic

COMMAND_FILE = "command.json"


class StoredCommand(BaseModel):
    """What ``run`` was asked to do, as ``command.json`` holds it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = 1
    tasks_dir: str
    agent: str
    iterations: int = 1
    jobs: int = 1
    sandbox: str = "none"
    out: str = "results"
    home: str | None = None
    profile: str | None = None
    rules: str | None = None
    detect: bool | None = None
    inventory: bool | None = None
    inventory_roots: list[str] | None = None
    judge: str | None = None
    audit: str = "auto"
    protect: list[str] = []
    engine: str | None = None
    scheduler: str | None = None
    workers: int | None = None
    shared_inputs: bool = False
    # Landlock off (--unconfined), the home mode, and whether home writes are discarded.
    unconfined: bool = False
    home_mode: str = "fresh"
    discard_home_writes: bool = False
    # The operator's grant of network: true (harness.host_network).
    allow_host_network: bool = False
    # --disk-budget as given (harness.disk_budget); None in commands stored before it.
    disk_budget: str | None = None
    # --memory-budget as given (harness.memory_limit); None: the default (or a command
    # stored before it).
    memory_budget: str | None = None


def _absolute(path: Path | str | None) -> str | None:
    return None if path is None else os.path.abspath(os.path.expanduser(str(path)))


def agent_reference(agent: str) -> str:
    """An agent named by a file path, made absolute; a name (benchguard-agent) as is."""
    return _absolute(agent) or agent if Path(agent).is_file() else agent


def save_command(run_dir: Path, fields: dict[str, Any]) -> None:
    """Write ``command.json``; paths in ``fields`` are made absolute."""
    for key in ("tasks_dir", "out", "home", "rules"):
        fields[key] = _absolute(fields.get(key))
    for key in ("inventory_roots", "protect"):
        value = fields.get(key)
        fields[key] = None if value is None else [_absolute(p) for p in value]
    if fields.get("protect") is None:
        fields["protect"] = []
    fields["agent"] = agent_reference(str(fields["agent"]))
    command = StoredCommand.model_validate(fields)
    write_text_atomic(run_dir / COMMAND_FILE, command.model_dump_json(indent=2) + "\n")


def load_command(run_dir: Path) -> StoredCommand:
    """The stored command of a run directory; bad input when there is none."""
    path = run_dir / COMMAND_FILE
    if not path.is_file():
        raise BadInputError(
            f"--resume {run_dir}: {COMMAND_FILE} is missing (the batch did not end "
            "normally, or was started by an older benchguard): give the original command "
            "(TASKS_DIR --agent ... as the first time) with --resume"
        )
    try:
        return StoredCommand.model_validate(json.loads(path.read_text(encoding="utf-8")))
    except (OSError, ValueError, ValidationError) as exc:
        raise BadInputError(f"{path}: not a command benchguard wrote ({exc})") from None


def runs_done(run_dir: Path) -> int:
    """How many planned runs the journal already holds finished (not to run again)."""
    try:
        finished, _ = Journal.open(run_dir).finished()
    except JournalError:
        return 0  # the resume itself reports the journal's problem
    return sum(1 for record in finished.values() if not needs_rerun(record))


__all__ = [
    "COMMAND_FILE",
    "StoredCommand",
    "load_command",
    "runs_done",
    "save_command",
]
