"""The serial engine: one record (or file) after another, in this process."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from benchguard.detection.detector import Detector
from benchguard.detection.models import CheatingReport, Rule
from benchguard.engines.work import FileScan, RecordKnowledge, scan_one_file, scan_one_record


def scan_records_serial(
    records: Sequence[Mapping[str, Any]],
    rules: Sequence[Rule],
    dynamic_rules: Sequence[Sequence[Rule]],
    time_budget_s: float,
) -> list[CheatingReport]:
    detector = Detector()  # this scan's plans, shared by its records
    return [
        scan_one_record(record, rules, dynamic, time_budget_s, detector)
        for record, dynamic in zip(records, dynamic_rules, strict=True)
    ]


def scan_files_serial(
    paths: Sequence[str],
    rules: Sequence[Rule],
    format_name: str | None,
    time_budget_s: float,
    knowledge: RecordKnowledge | None = None,
    detector: Detector | None = None,
) -> list[FileScan]:
    # One file in memory at a time: the corpus may be far larger than RAM.
    if detector is None:
        detector = Detector()  # this scan's plans, shared by its files
    return [
        scan_one_file(path, rules, format_name, time_budget_s, knowledge, detector)
        for path in paths
    ]
