"""``inspect score LOG --scorer benchguard/integrity``: the real Inspect CLI finds the
scorer through benchguard's ``inspect_ai`` entry point and adds an integrity score to
each sample of a log Inspect wrote, keeping the sample's own scores."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest
from inspect_ai.log import EvalLog, read_eval_log

from benchguard.detection.detector import DETECTOR_VERSION
from benchguard.integrations.inspect import verdict_score
from benchguard.integrations.verdict import IntegrityVerdict, digest_of

INSPECT = Path(sys.executable).parent / "inspect"


def _score(log: Path, out: Path, *options: str) -> EvalLog:
    done = subprocess.run(
        [str(INSPECT), "score", str(log), "--scorer", "benchguard/integrity",
         "--action", "append", "--output-file", str(out), "--display", "none", *options],
        capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    return read_eval_log(str(out))


@pytest.mark.slow
def test_each_sample_gets_its_integrity_score_and_keeps_its_own(
    inspect_log: Path, tmp_path: Path
) -> None:
    scored = _score(inspect_log, tmp_path / "scored.eval")
    samples = {str(s.id): s.scores or {} for s in scored.samples or []}
    assert set(samples) == {"honest", "cheat", "silent"}
    for scores in samples.values():
        assert set(scores) == {"includes", "integrity"}
    assert samples["honest"]["includes"].value == "C"  # the original, untouched

    honest = samples["honest"]["integrity"]
    assert honest.value == 1 and honest.answer == "clean"
    assert honest.metadata is not None and honest.metadata["status"] == "clean"

    cheat = samples["cheat"]["integrity"]
    assert cheat.value == 0 and cheat.answer == "flagged"
    meta = cheat.metadata
    assert meta is not None
    assert meta["status"] == "flagged" and meta["profile"] == "inspect"
    assert "prior-logs/path" in meta["rules"]
    where = [{k: f[k] for k in ("rule", "field", "step", "tool")} for f in meta["findings"]]
    assert {"rule": "prior-logs/path", "field": "args", "step": 0, "tool": "shell"} in where
    assert meta["ruleset_digest"] == digest_of("inspect")
    assert meta["detector_version"] == DETECTOR_VERSION
    assert cheat.explanation is not None and "prior-logs/path" in cheat.explanation

    silent = samples["silent"]["integrity"]
    assert isinstance(silent.value, float) and math.isnan(silent.value)  # Score.unscored
    assert silent.metadata is not None and silent.metadata["status"] == "no_data"


@pytest.mark.slow
def test_the_profile_is_an_option(inspect_log: Path, tmp_path: Path) -> None:
    scored = _score(inspect_log, tmp_path / "tb.eval", "-S", "profile=terminal-bench")
    samples = {str(s.id): s.scores or {} for s in scored.samples or []}
    cheat = samples["cheat"]["integrity"]
    # The named profile ran instead of auto's choice: inspect's own rule is not in it
    # (reading a prior evaluation log is still caught by the generic prior-results rule,
    # which every profile carries).
    assert cheat.metadata is not None
    assert cheat.metadata["profile"] == "terminal-bench"
    assert "prior-logs/path" not in cheat.metadata["rules"]
    assert cheat.metadata["rules"] == ["prior-run-leftovers/results-file"]


@pytest.mark.parametrize(
    ("status", "value", "answer"),
    [("flagged", 0, "flagged"), ("review", 1, "review"), ("clean", 1, "clean")],
)
def test_each_verdict_maps_to_its_score(status: str, value: int, answer: str) -> None:
    verdict = IntegrityVerdict.model_validate(
        {
            "status": status,
            "profile": "inspect",
            "rules": ["prior-logs/path"] if status != "clean" else [],
            "findings": [{"rule": "prior-logs/path", "field": "args", "step": 2, "tool": "bash"}]
            if status != "clean"
            else [],
        }
    )
    score = verdict_score(verdict)
    assert score.value == value and score.answer == answer
    assert score.metadata is not None and score.metadata["status"] == status
    if status != "clean":
        assert score.explanation is not None
        assert "prior-logs/path in args of step 2 (bash)" in score.explanation


@pytest.mark.parametrize("status", ["no_data", "not_checked"])
def test_nothing_read_is_unscored_never_clean(status: str) -> None:
    verdict = IntegrityVerdict(status=status, profile="inspect", reason="boom")  # type: ignore[arg-type]
    score = verdict_score(verdict)
    assert isinstance(score.value, float) and math.isnan(score.value)
    assert score.metadata is not None and score.metadata["status"] == status
    assert (score.reason == "scoring_failed") == (status == "not_checked")
