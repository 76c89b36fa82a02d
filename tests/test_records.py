"""The run record's edge parser: every bound holds whatever a record carries."""

from __future__ import annotations

import json
import math
from typing import Any

from benchguard.records import (
    MAX_DEPTH,
    MAX_HEAD_STEPS,
    MAX_STEPS,
    MAX_TAIL_STEPS,
    RunRecord,
    bounded_record_dict,
    parse_record,
)


def _nested(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"leaf": "cat /secret/task.yaml"}
    for _ in range(depth):
        value = {"x": value}
    return value


def test_lone_surrogates_are_replaced_everywhere_and_the_record_encodes() -> None:
    """Guards against a "\\ud800" in a transcript line crashing the results writer."""
    record = parse_record(
        {
            "output": "done \ud800",
            "trajectory": [
                {"name": "sh\udc00", "args": {"k\ud801": "v\udfff"}, "result": "\ud800"}
            ],
            "extra\ud800": ["\udc00"],
        }
    )
    text = json.dumps(record.to_json(), ensure_ascii=False, allow_nan=False)
    text.encode("utf-8")  # would raise on a lone surrogate
    assert record.output == "done \ufffd"
    assert record.trajectory[0].name == "sh\ufffd"
    assert record.trajectory[0].args == {"k\ufffd": "v\ufffd"}


def test_non_finite_numbers_are_refused_and_noted() -> None:
    """Guards against NaN/Infinity reaching results.json as bare tokens."""
    record = parse_record(
        {
            "scores": {"VerificationCorrectness": {"score": math.nan}},
            "trajectory": [{"name": "x", "args": {"n": math.inf}}],
            "duration_s": -math.inf,
        }
    )
    dumped = json.dumps(record.to_json(), allow_nan=False)
    assert "NaN" not in dumped and "Infinity" not in dumped
    assert record.scores["VerificationCorrectness"]["score"] is None
    assert any("non-finite" in note for note in record.record_errors)


def test_deep_nesting_is_flattened_and_still_says_what_it_held() -> None:
    """Guards against a ~1,000-deep value crashing every later recursive reader, and
    against the flattening hiding the text a scan must see."""
    record = parse_record({"trajectory": [{"name": "x", "args": _nested(990)}]})
    args = record.trajectory[0].args
    text = json.dumps(args, indent=2)  # the indenting encoder recurses: must not fail
    assert "cat /secret/task.yaml" in text
    depth = 0
    value: Any = args
    while isinstance(value, dict):
        value = value.get("x", value.get("leaf"))
        depth += 1
    assert depth <= MAX_DEPTH + 2
    assert any("nested deeper" in note for note in record.record_errors)


def test_many_steps_keep_head_and_tail_with_a_truncation_mark() -> None:
    """Guards against padding: the last step (the read) survives and the cut is marked."""
    steps = [{"name": "noop", "args": {}, "result": ""}] * (MAX_STEPS + 1000)
    steps = [*steps, {"name": "bash", "args": {"command": "cat /bench/answers.json"}}]
    record = parse_record({"trajectory": steps})
    assert len(record.trajectory) == MAX_HEAD_STEPS + MAX_TAIL_STEPS
    assert record.trajectory[-1].args == {"command": "cat /bench/answers.json"}
    assert record.transcript_truncated is True
    assert record.transcript_errors and "trajectory cut" in record.transcript_errors[-1]


def test_wrong_field_types_fall_back_to_defaults_with_a_note() -> None:
    record = parse_record({"iteration": "two", "status": "exploded", "scores": [1]})
    assert record.iteration == 0 and record.status is None and record.scores == {}
    assert len(record.record_errors) == 3


def test_a_foreign_record_keeps_only_its_own_keys_and_unknown_ones() -> None:
    raw = {"name": "t", "input": "p", "source": {"file": "x"}, "trajectory": []}
    assert bounded_record_dict(raw) == raw


def test_not_an_object_is_an_errored_record_not_a_crash() -> None:
    record = parse_record(["a", "list"])
    assert isinstance(record, RunRecord) and record.status == "error"
    assert record.error == "record is list, not an object"


def test_an_oversized_field_is_kept_as_cut_text_and_a_typed_one_falls_back() -> None:
    """Guards against one huge field (a foreign record's metadata, a forged check list)
    making a record unbounded; the report alone is never cut (losing its rules could
    clear a cheat on rescan)."""
    huge = {"blob": ["x" * 1024] * 5000}  # ~5 MiB of text
    record = parse_record(
        {"name": "t", "metadata": huge, "verification_report": [huge], "cheating_report": huge}
    )
    data = record.to_json(complete=False)
    assert isinstance(data["metadata"], str) and len(data["metadata"]) <= 5 << 20
    assert data["metadata"].endswith("[... cut by the harness ...]")
    assert record.verification_report == []
    assert record.cheating_report == huge
    assert sum("kept as cut text" in note for note in record.record_errors) == 2
