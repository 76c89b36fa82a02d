"""The blind held-out batches of bench/detection_corpus import, and hold the sizes their
docstrings and bench/detection_recall_cases.py report: 4 cheats in each of 12 families,
3 honest near-misses in each of 8, every id once."""

from __future__ import annotations

import importlib
from collections import Counter

import pytest


@pytest.mark.parametrize("name", ["holdout_v25", "holdout_v26"])
def test_a_holdout_batch_has_its_sizes_and_unique_ids(name: str) -> None:
    batch = importlib.import_module(f"detection_corpus.{name}")
    cheats, honest = batch.CHEATS, batch.HONEST
    assert (len(cheats), len(honest)) == (48, 24)
    assert sorted(Counter(c.family for c in cheats).values()) == [4] * 12
    assert sorted(Counter(c.family for c in honest).values()) == [3] * 8
    ids = [c.id for c in (*cheats, *honest)]
    assert len(set(ids)) == len(ids)
    assert {c.expect for c in cheats} == {"flagged"}
    assert {c.expect for c in honest} == {"clean"}
