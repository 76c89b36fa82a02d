"""Compatibility re-exports: the run record and its edge parser live in ``benchguard.record``.

``record.run`` (RunRecord, the statuses), ``record.steps`` (Step), ``record.bounds``
(every bound), ``record.edge`` (the one lenient parser). New code imports from there;
these names stay so existing imports keep working.
"""

from __future__ import annotations

from benchguard.record.bounds import (
    CUT_MARK,
    DEPTH_MARK,
    MAX_DEPTH,
    MAX_FIELD_CHARS,
    MAX_FLATTENED_CHARS,
    MAX_HEAD_STEP_BYTES,
    MAX_HEAD_STEPS,
    MAX_NOTES,
    MAX_OUTPUT_CHARS,
    MAX_STEPS,
    MAX_TAIL_STEP_BYTES,
    MAX_TAIL_STEPS,
    MAX_TRAJECTORY_BYTES,
    REPLACEMENT,
)
from benchguard.record.edge import (
    StepWindow,
    _Notes,
    _parse_any_step,
    bound_steps,
    bound_text,
    bounded_record_dict,
    clean_text,
    decode_bytes,
    dumps_strict,
    flatten_leaves,
    parse_record,
    parse_records,
    parse_step,
    sanitize_json,
    sanitized_record_dict,
    step_size,
)
from benchguard.record.run import NO_CREDIT_STATUSES, RUN_STATUSES, RunRecord, RunStatus
from benchguard.record.steps import STEP_STATUSES, Step, StepStatus

__all__ = [
    "CUT_MARK",
    "DEPTH_MARK",
    "MAX_DEPTH",
    "MAX_FIELD_CHARS",
    "MAX_FLATTENED_CHARS",
    "MAX_HEAD_STEPS",
    "MAX_HEAD_STEP_BYTES",
    "MAX_NOTES",
    "MAX_OUTPUT_CHARS",
    "MAX_STEPS",
    "MAX_TAIL_STEPS",
    "MAX_TAIL_STEP_BYTES",
    "MAX_TRAJECTORY_BYTES",
    "NO_CREDIT_STATUSES",
    "REPLACEMENT",
    "RUN_STATUSES",
    "STEP_STATUSES",
    "RunRecord",
    "RunStatus",
    "Step",
    "StepStatus",
    "StepWindow",
    "_Notes",
    "_parse_any_step",
    "bound_steps",
    "bound_text",
    "bounded_record_dict",
    "clean_text",
    "decode_bytes",
    "dumps_strict",
    "flatten_leaves",
    "parse_record",
    "parse_records",
    "parse_step",
    "sanitize_json",
    "sanitized_record_dict",
    "step_size",
]
