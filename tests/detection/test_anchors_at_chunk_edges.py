"""Anchored patterns give the same findings through the prefilter's chunks as the exact
loop does with no prefilter at all.

The prefilter joins a record's surfaces into chunks (``_PREFILTER_CHUNK_CHARS``) and
asks RE2 Sets of relaxed patterns which may match; only those reach the exact
``regex`` check. An anchor (``^``, ``$``, ``\\A``, ``\\Z``, ``\\b``) means something
else in a joined chunk than in one surface, so a surface that starts or ends a chunk,
or sits between two joins, is where a relaxation could lose a match. Each record here
is scanned twice by the real detector: once as it runs, and once with every pattern a
candidate on every surface (the exact check alone deciding); the reports must be equal.
"""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from benchguard.detection import detector
from benchguard.detection._prefilter import Prefilter
from benchguard.detection.detector import Detector
from benchguard.detection.models import CheatingReport, Rule
from benchguard.detection.surfaces import Surface
from benchguard.record.rules import ScanRulesets, as_ruleset

_RULES = as_ruleset(
    (
        Rule(id="anchor/caret", category="anchor", material="m", patterns=(r"^cat secret",)),
        Rule(id="anchor/dollar", category="anchor", material="m", patterns=(r"secret\.txt$",)),
        Rule(id="anchor/start", category="anchor", material="m", patterns=(r"\Aroot:",)),
        Rule(id="anchor/end", category="anchor", material="m", patterns=(r"done\Z",)),
        Rule(id="anchor/word", category="anchor", material="m", patterns=(r"\bgit\b",)),
        Rule(
            id="anchor/multiline",
            category="anchor",
            material="m",
            patterns=(r"(?m)^answer:\s*\d+$",),
            fields=("result", "output"),
        ),
        Rule(id="anchor/both", category="anchor", material="m", patterns=(r"^x$",)),
    )
)

# Pieces put at a surface's start or end, where a chunk's join sits.
_PIECES = st.sampled_from(
    ["cat secret", "secret.txt", "root:", "done", "git", "digit", "gitx", "answer: 4",
     "answer:", "x", "\n", " ", "plain", "ROOT:", "Secret.TXT", "", "\u0131git"]
)  # fmt: skip
_TEXT = st.lists(_PIECES, max_size=4).map("".join)
_STEP = st.tuples(_TEXT, _TEXT)


def _record(steps: list[tuple[str, str]], output: str) -> dict[str, object]:
    return {
        "input": "",
        "output": output,
        "trajectory": [
            {"name": "note", "args": {"note": args}, "result": result, "status": "completed"}
            for args, result in steps
        ],
    }


def _scan(record: dict[str, object], *, prefilter: bool) -> CheatingReport:
    rulesets = ScanRulesets(_RULES, as_ruleset(()))
    if prefilter:
        return Detector().scan(record, rulesets)

    def everywhere(
        prefilter_: Prefilter, surfaces: list[Surface], *_: object
    ) -> list[frozenset[int]]:
        return [frozenset(range(len(prefilter_.patterns)))] * len(surfaces)

    with mock.patch.object(detector, "_candidates", everywhere):
        return Detector().scan(record, rulesets)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(_STEP, min_size=1, max_size=8),
    _TEXT,
    st.sampled_from([1, 6, 12, 24, 1 << 20]),
)
def test_anchored_patterns_find_the_same_through_the_prefilters_chunks(
    steps: list[tuple[str, str]], output: str, chunk_chars: int
) -> None:
    """Guards every prefilter path (one surface alone, a joined chunk, its narrowed Set)
    against losing an anchored match at a chunk's edge: chunk sizes from one character
    (every surface alone) to a whole record (one chunk)."""
    record = _record(steps, output)
    with mock.patch.object(detector, "_PREFILTER_CHUNK_CHARS", chunk_chars):
        fast = _scan(record, prefilter=True)
    assert fast == _scan(record, prefilter=False)


def test_the_exact_loop_alone_finds_each_anchor() -> None:
    """The reference scan above is not vacuous: each rule finds its own surface."""
    record = _record(
        [("cat secret", "root: x"), ("a secret.txt", "answer: 4\nmore"), ("git", "done")],
        "x",
    )
    found = {finding.rule for finding in _scan(record, prefilter=False).findings}
    assert found == {rule.id for rule in _RULES}
    assert _scan(record, prefilter=True) == _scan(record, prefilter=False)
