"""Scan engines: run the detector over many records or files, serially or with dask.

Whichever engine runs, the reports are identical and in input order; only the speed
differs. ``benchguard scan`` and ``benchguard score`` both go through here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from benchguard.detection.detector import DEFAULT_RECORD_BUDGET_S, Detector
from benchguard.detection.models import CheatingReport, Rule
from benchguard.engines.dask_engine import (
    LOCAL_SCHEDULERS,
    EngineUnavailableError,
    scan_files_dask,
    scan_records_dask,
    scheduler_address_problem,
)
from benchguard.engines.serial import scan_files_serial, scan_records_serial
from benchguard.engines.work import (
    FileScan,
    RecordKnowledge,
    RecordScan,
    scan_one_file,
    scan_one_record,
)
from benchguard.record.rules import Ruleset, as_ruleset

EngineName = Literal["serial", "dask"]
ENGINE_NAMES: tuple[EngineName, ...] = ("serial", "dask")

__all__ = [
    "ENGINE_NAMES",
    "LOCAL_SCHEDULERS",
    "EngineName",
    "EngineUnavailableError",
    "FileScan",
    "RecordKnowledge",
    "RecordScan",
    "engine_choice_problem",
    "scan_files",
    "scan_one_file",
    "scan_one_record",
    "scan_records",
]


def scan_records(
    records: Sequence[Mapping[str, Any]],
    rules: Sequence[Rule],
    *,
    engine: EngineName = "serial",
    scheduler: str | None = None,
    workers: int | None = None,
    dynamic_rules: Sequence[Sequence[Rule]] | None = None,
    time_budget_s: float = DEFAULT_RECORD_BUDGET_S,
) -> list[CheatingReport]:
    """One report per record, in input order, whichever engine runs.

    ``dynamic_rules``, when given, is one rule list per record (home-inventory rules),
    appended after ``rules`` for that record only. ``scheduler`` (dask only) is a local
    scheduler name (``processes``, the default; ``threads``; ``synchronous``) or a
    ``distributed`` scheduler address.
    """
    per_record = _dynamic_per_record(len(records), dynamic_rules)
    # One digest for the batch's static rules (the detector keys its plans by it).
    rules = as_ruleset(rules)
    if _is_serial(engine, scheduler):
        return scan_records_serial(records, rules, per_record, time_budget_s)
    return scan_records_dask(records, rules, per_record, time_budget_s, scheduler, workers)


def scan_files(
    paths: Sequence[str],
    rules: Sequence[Rule],
    *,
    format_name: str | None = None,
    engine: EngineName = "serial",
    scheduler: str | None = None,
    workers: int | None = None,
    time_budget_s: float = DEFAULT_RECORD_BUDGET_S,
    knowledge: RecordKnowledge | None = None,
    detector: Detector | None = None,
) -> list[FileScan]:
    """Import and scan each file (one at a time per worker), results in ``paths`` order.

    ``knowledge``: what the user knows of a foreign log (material, history), applied
    to each record where it is read. ``detector`` (serial engine only; a fresh one when
    None): the caller's, so calls of one scan share its plans and shell readings."""
    rules = as_ruleset(rules)
    if _is_serial(engine, scheduler):
        return scan_files_serial(paths, rules, format_name, time_budget_s, knowledge, detector)
    return scan_files_dask(paths, rules, format_name, time_budget_s, scheduler, workers, knowledge)


def engine_choice_problem(engine: str, scheduler: str | None) -> str | None:
    """What is wrong with this engine/scheduler pair, or None.

    Worded with the CLI's flag names (the keyword arguments share them), so
    ``benchguard scan``/``score`` print it as is and the library raises it.
    """
    if engine not in ENGINE_NAMES:
        return f"--engine {engine!r}: choose one of: {', '.join(ENGINE_NAMES)}"
    if scheduler is not None and engine != "dask":
        return "--scheduler applies only to --engine dask"
    if scheduler is not None:
        return scheduler_address_problem(scheduler)
    return None


def _is_serial(engine: str, scheduler: str | None) -> bool:
    """Whether ``engine`` is the serial one (else dask); ValueError naming the problem
    for an unknown engine or a scheduler given to the serial engine."""
    problem = engine_choice_problem(engine, scheduler)
    if problem is not None:
        raise ValueError(problem)
    return engine == "serial"


def _dynamic_per_record(
    count: int, dynamic_rules: Sequence[Sequence[Rule]] | None
) -> list[Ruleset]:
    if dynamic_rules is None:
        return [as_ruleset(())] * count
    if len(dynamic_rules) != count:
        raise ValueError(
            f"dynamic_rules has {len(dynamic_rules)} entries for {count} records; "
            "give one rule list per record"
        )
    return [as_ruleset(rules) for rules in dynamic_rules]
