"""Imported records pass the same edge as the harness's own (``benchguard.records``)."""

from __future__ import annotations

import json
from pathlib import Path

from benchguard.importers.registry import import_path
from benchguard.records import MAX_STEPS


def test_an_imported_record_is_bounded_and_sanitised(tmp_path: Path) -> None:
    """Guards against a hostile log (lone surrogates, NaN, deep nesting, a flood of
    steps) reaching the detector and the writers unbounded."""
    deep = "1"
    for _ in range(200):
        deep = '{"x": ' + deep + "}"
    steps = ['{"name": "noop", "args": {}, "result": ""}'] * (MAX_STEPS + 10)
    steps.append('{"name": "bash", "args": {"command": "cat /bench/answers.json"}}')
    text = (
        '[{"name": "t", "input": "p", "output": "done \\ud800", "trajectory": ['
        '{"name": "bash", "args": {"n": NaN, "deep": '
        + deep
        + '}, "result": "\\udc00"},'
        + ",".join(steps)
        + "]}]"
    )
    path = tmp_path / "results.json"
    path.write_text(text, "utf-8")
    [record] = import_path(path).records
    json.dumps(record, allow_nan=False).encode("utf-8")  # strict and encodable
    assert record["output"] == "done \ufffd"
    assert record["trajectory"][0]["args"]["n"] is None
    assert record["trajectory"][-1]["args"] == {"command": "cat /bench/answers.json"}
    assert len(record["trajectory"]) == MAX_STEPS
    assert record["transcript_truncated"] is True
    assert any("nested deeper" in note for note in record["record_errors"])
