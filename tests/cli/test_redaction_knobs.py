"""`benchguard redaction` names the effective preset and knobs, in text and in JSON
(an added key: every key printed before is still there, unchanged)."""

from __future__ import annotations

import json

import pytest

from cli.helpers import exited, invoke
from redaction_pressure.knobs import preset

EVAL_KEYS = {"split", "split_commitment", "preset", "tasks", "policies"}
SCORE_KEYS = {
    "split", "split_commitment", "preset", "index", "policy", "reward", "recall",
    "precision", "clean", "valid", "errors", "rules", "matches",
    "partially_removed_secrets", "damaged_decoys", "elapsed_ms",
}  # fmt: skip


@pytest.mark.parametrize("name", ["standard", "hard"])
def test_eval_json_and_text_carry_the_effective_knobs(name: str) -> None:
    as_json = invoke("redaction", "eval", "--limit", "1", "--policy", "oracle",
                     "--preset", name, "--json")  # fmt: skip
    exited(as_json, 0)
    document = json.loads(as_json.stdout)
    assert set(document) == EVAL_KEYS | {"knobs"}
    assert document["preset"] == name
    assert document["knobs"] == preset(name).model_dump(mode="json")
    text = invoke("redaction", "eval", "--limit", "1", "--policy", "oracle", "--preset", name)
    knobs = preset(name)
    line = f"preset {name}; knobs: secret_families={knobs.secret_families.low}-"
    assert any(row.startswith(line) for row in text.stdout.splitlines()), text.stdout
    assert f"example_records={knobs.example_records}," in text.stdout


def test_score_json_and_text_carry_the_effective_knobs() -> None:
    args = ("redaction", "score", "--index", "0", "--policy", "oracle", "--preset", "hard")
    document = json.loads(invoke(*args, "--json").stdout)
    assert set(document) == SCORE_KEYS | {"knobs"}
    assert document["knobs"]["example_records"] == preset("hard").example_records
    assert "preset hard; knobs: " in invoke(*args).stdout


def test_the_knobs_line_folds_within_its_width_and_loses_nothing() -> None:
    """Guards the demo's and a CI log's 200 columns as corpora grow knobs: folded after
    a knob's comma, every line fits and unfolding gives the one-line form back."""
    from benchguard.cli.redaction_cmds import KNOBS_WIDTH, knobs_line, knobs_lines

    for name in ("intro", "standard", "expert"):
        knobs = preset(name).model_dump(mode="json")
        folded = knobs_lines(name, knobs, indent="  ")
        assert all(len(row) <= KNOBS_WIDTH for row in folded.splitlines()), folded
        assert folded.strip().replace(",\n    ", ", ") == knobs_line(name, knobs)
