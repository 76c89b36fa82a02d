"""The batch journal: every finished run on disk the moment it finishes.

A run directory holds, besides the published files::

    batch.json          the plan, written before any agent starts
    runs/000007.json    one file per finished run (its position in the plan), written
                        to a temporary file, fsynced and renamed, then the directory
                        fsynced: a run that finished survives a crash, a SIGKILL or a
                        power cut a moment later
    rulesets/sha256-…   each distinct dynamic (home inventory) ruleset, written once
                        before the first run file naming it; a run file's report names
                        it by digest (``dynamic_rules_ref``), and the journal's table
                        (``Journal.rulesets``, ``record.rulesets``) holds them all

``results.json``, ``rows.json`` and ``manifest.json`` are built from the journal, at
the end of a batch and on interruption, so they are always a view of what is on disk.
``benchguard run --resume RUN_DIR`` reads the plan and the runs, and runs only the
positions with no file (or whose file says ``interrupted``).

A run file that cannot be read (a disk error, hand editing) counts as not run: the
resumed batch runs it again rather than publishing a guess.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from benchguard.errors import BadInputError
from benchguard.record.codec import BATCH_FILE
from benchguard.record.rulesets import DYNAMIC_RULES_REF_KEY, RulesetTable, reference_of
from benchguard.records import RunRecord, dumps_strict, parse_record
from benchguard.results.io import write_text_atomic

JOURNAL_SCHEMA_VERSION = 1
RUNS_DIR = "runs"
RULESETS_DIR = "rulesets"
_REPORT_KEY = "cheating_report"
_DIGEST = re.compile(r"sha256:[0-9a-f]{64}")
# Zero-padded so a directory listing is in plan order.
_RUN_FILE = "{position:06d}.json"


class JournalError(BadInputError):
    """A run directory that cannot be resumed; the message names the file and why."""


class PlannedRun(BaseModel):
    """One run of the plan: its position, its task folder and its iteration."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    position: int = Field(ge=0)
    folder: str
    iteration: int = Field(ge=1)


class BatchPlan(BaseModel):
    """What a batch set out to do; a resumed batch must plan exactly the same runs."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: int = JOURNAL_SCHEMA_VERSION
    run_id: str
    # ISO-8601 UTC time the batch first started (kept by a resumed batch).
    t: str
    agent: str
    sandbox: str
    runs: tuple[PlannedRun, ...]


class Journal:
    """The run directory's journal (see the module doc)."""

    def __init__(self, run_dir: Path, plan: BatchPlan) -> None:
        self.run_dir = run_dir
        self.plan = plan
        self._runs = run_dir / RUNS_DIR
        self._rulesets = run_dir / RULESETS_DIR
        # Every ruleset on disk (written or read back), by digest: the journal's table.
        self.rulesets = RulesetTable()

    @classmethod
    def create(cls, run_dir: Path, plan: BatchPlan) -> Journal:
        (run_dir / RUNS_DIR).mkdir(parents=True, exist_ok=True)
        (run_dir / RULESETS_DIR).mkdir(exist_ok=True)
        write_text_atomic(run_dir / BATCH_FILE, plan.model_dump_json(indent=2) + "\n")
        _fsync_dir(run_dir)
        return cls(run_dir, plan)

    @classmethod
    def open(cls, run_dir: Path) -> Journal:
        """The journal of an earlier batch; ``JournalError`` when it cannot be resumed."""
        path = run_dir / BATCH_FILE
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise JournalError(
                f"{path}: not found; --resume needs a run directory written by "
                "`benchguard run` (one holding batch.json)"
            ) from None
        except (OSError, UnicodeDecodeError) as exc:
            raise JournalError(f"{path}: cannot read ({exc})") from None
        try:
            plan = BatchPlan.model_validate_json(text)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "(top level)"
            raise JournalError(f"{path}: not a batch plan: {where}: {first['msg']}") from None
        if plan.schema_version > JOURNAL_SCHEMA_VERSION:
            raise JournalError(
                f"{path}: schema_version {plan.schema_version} is newer than this "
                f"benchguard reads (up to {JOURNAL_SCHEMA_VERSION})"
            )
        (run_dir / RUNS_DIR).mkdir(exist_ok=True)
        (run_dir / RULESETS_DIR).mkdir(exist_ok=True)
        return cls(run_dir, plan)

    def run_file(self, position: int) -> Path:
        return self._runs / _RUN_FILE.format(position=position)

    def write(self, position: int, record: RunRecord) -> None:
        """Write one finished run durably (raises ``OSError``/``ValueError`` if it cannot).

        The ruleset the report names goes to ``rulesets/`` once per digest (a home of a
        thousand leftovers gives every record ~1,900 rules, the same from run to run),
        from the record's own table; a report naming a ruleset that neither holds is
        refused (``ValueError``): the run file would name rules nobody kept.
        """
        data = record.to_json()
        digest = reference_of(data)
        if digest is not None:
            self._store_ruleset(digest, record.rulesets)
        text = dumps_strict(
            {"schema_version": JOURNAL_SCHEMA_VERSION, "position": position, "record": data}
        )
        write_text_atomic(self.run_file(position), text + "\n")
        _fsync_dir(self._runs)

    def _store_ruleset(self, digest: str, held: RulesetTable) -> None:
        if digest in self.rulesets:
            return
        if not _DIGEST.fullmatch(digest) or digest not in held:
            raise ValueError(f"the report names ruleset {digest!r}, which the record does not hold")
        rules = held.stored(digest)
        path = self._ruleset_file(digest)
        if not path.exists():
            write_text_atomic(path, dumps_strict(rules) + "\n")
            _fsync_dir(self._rulesets)
        self.rulesets.take(digest, held)

    def _ruleset_file(self, digest: str) -> Path:
        return self._rulesets / (digest.replace(":", "-") + ".json")

    def finished(self) -> tuple[dict[int, RunRecord], list[str]]:
        """The runs on disk by position, and a problem for each file that is unusable."""
        records: dict[int, RunRecord] = {}
        problems: list[str] = []
        planned = {run.position for run in self.plan.runs}
        for position in sorted(planned):
            path = self.run_file(position)
            if not path.exists():
                continue
            try:
                records[position] = self._read_run(path, position)
            except (OSError, ValueError, RecursionError) as exc:
                problems.append(f"{path}: unusable, the run counts as not run ({exc})")
        return records, problems

    def _read_run(self, path: Path, position: int) -> RunRecord:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
        if not isinstance(data, dict) or data.get("position") != position:
            raise ValueError(f"not the journal entry of position {position}")
        record = data.get("record")
        if not isinstance(record, dict):
            raise ValueError("its 'record' is not an object")
        report = record.get(_REPORT_KEY)
        if isinstance(report, dict) and DYNAMIC_RULES_REF_KEY in report:
            digest = report[DYNAMIC_RULES_REF_KEY]
            if not isinstance(digest, str) or not _DIGEST.fullmatch(digest):
                raise ValueError(f"bad {DYNAMIC_RULES_REF_KEY} {digest!r}")
            if digest not in self.rulesets:
                rules = json.loads(self._ruleset_file(digest).read_text(encoding="utf-8"))
                if not isinstance(rules, list):
                    raise ValueError(f"ruleset {digest} is not a list")
                self.rulesets.add_stored(rules, digest)
        # Written by this harness from a parsed record; parsing again is the same bounds.
        parsed = parse_record(record)
        if isinstance(report, dict) and DYNAMIC_RULES_REF_KEY in report:
            parsed.rulesets.take(digest, self.rulesets)
        return parsed


def _fsync_dir(path: Path) -> None:
    """Make a rename in ``path`` durable (the file's own fsync does not cover it)."""
    fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
