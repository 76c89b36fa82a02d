"""Rows read a typed record by attribute: the same row as its stored object gives.

The harness's batch hands its ``RunRecord`` objects to ``build_rows`` (no dump to a
dict first); a results file's records are read as stored. Both readings must publish
the same row for the same record, or rows.json would depend on which path wrote it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from benchguard.record.edge import parse_record
from benchguard.record.run import RunRecord
from benchguard.results.rows import RowInput, build_rows, row_from_record
from benchguard.scoring import keys
from benchguard.scoring.pipeline import score_records

from .builders import finding, manifest, record, report

GOLDEN_INPUTS = Path(__file__).resolve().parents[1] / "golden" / "inputs"

_REPORTS = st.sampled_from(
    [
        {},
        report("clean"),
        report("flagged", finding("x/y", "answer-key")),
        report("review", finding("x/y", "history")),
        report("no_data"),
        {"status": "clean", "findings": [{"rule": "junk"}]},
        {**report("flagged", finding("a/b", "task-definition")), "dismissed": [{"rule": "a/b"}]},
    ]
)
_SCORES = st.sampled_from(
    [
        {},
        {keys.VERIFICATION_CORRECTNESS: 0.5},
        {keys.VERIFICATION_CORRECTNESS: 1.0, keys.VERIFICATION_RECOVERABLE: 0.25},
        {keys.VERIFICATION_CORRECTNESS: 1.0},
    ]
)


@st.composite
def _records(draw: st.DrawFn) -> dict[str, Any]:
    extra: dict[str, Any] = {}
    for key, values in (
        ("status", ["success", "error", "timeout", "interrupted", None]),
        ("error", [None, "agent crashed", ""]),
        ("confined", [True, False, None]),
        ("home_mode", ["fresh", "persistent", None, "odd"]),
        ("prompt_delivery", [None, {"status": "intact"}, {"status": "altered"}, {"x": 1}]),
        (
            "containment",
            [
                {"agent_capabilities": "none"},
                {"agent_capabilities": "all"},
                {"separated": True, "separation_unavailable": None},
                {"separated": False, "separation_unavailable": "no mount namespace"},
                {"separated": False, "separation_unavailable": None},
                None,
            ],
        ),
        ("sandboxed", [True, False]),
        ("validated", [True, False]),
        ("integrity_checked", [True, False]),
    ):
        if draw(st.booleans()):
            extra[key] = draw(st.sampled_from(values))
    folder = draw(st.sampled_from(["t-one", "", "task-2"]))
    made = record(
        folder,
        draw(st.integers(0, 3)),
        scores=dict(draw(_SCORES)),
        cheating_report=draw(_REPORTS),
        **extra,
    )
    if not folder:
        made["name"] = draw(st.sampled_from(["", "Named"]))
    return made


@settings(max_examples=150, deadline=None)
@given(_records())
def test_a_typed_record_gives_the_row_of_its_dump(raw: dict[str, Any]) -> None:
    """Guards the attribute reading (RowInput.of_record) against drifting from the
    stored reading: every field of the row, for scored records of every status, gate,
    report shape and confinement mark (fails when a field is read differently)."""
    score_records([raw])
    typed = RunRecord.model_validate(raw)
    assert row_from_record(typed, manifest()) == row_from_record(typed.to_json(), manifest())
    assert RowInput.of_record(typed) == RowInput.of_mapping(typed.to_json())


def test_golden_results_records_read_alike_typed_and_stored() -> None:
    """Every record of the golden results files, parsed at the edge, gives the same row
    typed as its dump gives; build_rows takes either and skips anything else."""
    records = []
    for path in sorted(GOLDEN_INPUTS.glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        items = data["records"] if isinstance(data, dict) else data
        records += [parse_record(item) for item in items]
    assert len(records) >= 3
    typed_rows = build_rows([*records, "not a record"], manifest())
    stored_rows = build_rows([r.to_json() for r in records], manifest())
    assert typed_rows == stored_rows and len(typed_rows) == len(records)
