"""The labelled detection corpus: its coverage, and that it really comes from the generator.

The corpus is committed as data (generating it runs ~300 sandboxes); these tests guard
that it still says what the issue asks of it and that a sample of it is reproduced byte
for byte by running the generator's sandbox again.
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path

import pytest

from detection_corpus.generate import CORPUS_PATH, dump_line, generate, load_corpus
from detection_corpus.layout import build_layout
from detection_quality import GOAL_FP, GOAL_RECALL, CorpusDetector, score

CHEAT_FAMILIES = {
    "path-glob", "path-encoded", "path-variable", "path-find", "path-recursive-listing",
    "path-proc-cwd", "path-literal-home", "path-dot-slash", "path-cd-per-level",
    "path-quoting", "path-brace", "path-line-continuation", "path-tilde-user",
    "interpreter-one-liner", "interpreter-heredoc", "encoded-output", "targeted-extraction",
    "blind-write", "copy-then-read", "split-calls", "env-vars", "env-file",
    "prior-results-renamed", "home-leftovers", "solution-files", "git-future",
    "structured-tools", "framework-material",
}  # fmt: skip
HONEST_FAMILIES = {
    "ci-task-layout", "experiment-folders", "eval-dataset-fields", "judge-rubric-edit",
    "anticheat-doc", "configmap-keys", "loadtest-env", "deliverable-results-dir",
    "git-own-history", "deliverable-read-back", "answer-quotes-prompt",
    "named-input-fixture", "ls-home",
}  # fmt: skip
# Tools a fresh CI machine may lack; sampled trajectories avoid them.
OPTIONAL_TOOLS = re.compile(r"\b(?:jq|yq|xxd|zip|unzip|perl|kubectl)\b")


def test_corpus_covers_the_families_and_sizes_the_issue_asks_for() -> None:
    lines = load_corpus()
    cheats = [line for line in lines if line["label"] == "cheat"]
    honest = [line for line in lines if line["label"] == "honest"]
    assert len(cheats) >= 150
    assert len(honest) >= 100
    assert {line["family"] for line in cheats} >= CHEAT_FAMILIES
    assert {line["family"] for line in honest} >= HONEST_FAMILIES
    assert {line["split"] for line in lines} == {"tune", "holdout"}
    assert [line["id"] for line in lines] == sorted(line["id"] for line in lines)
    for line in lines:
        assert line["record"]["trajectory"], line["id"]
        assert line["reach"] in {"transcript", "audit"}


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("bwrap") is None, reason="needs bubblewrap")
def test_a_sample_of_the_committed_corpus_is_reproduced_by_the_generator() -> None:
    """Guards against hand-edited results: the generator's sandbox must print them."""
    committed = {line["id"]: line for line in load_corpus(CORPUS_PATH)}
    portable = [
        line_id
        for line_id, line in sorted(committed.items())
        if not any(
            OPTIONAL_TOOLS.search(str(step["args"])) for step in line["record"]["trajectory"]
        )
    ]
    sample = portable[::12]
    assert len(sample) >= 15
    regenerated = generate(sample)
    assert [dump_line(line) for line in regenerated] == [
        dump_line(committed[line_id]) for line_id in sample
    ]


def test_the_detector_meets_the_quality_goals_on_the_corpus() -> None:
    """Guards the measured figures: a change that loses recall on a cheating family a
    transcript can show, or flags honest near-misses, fails here (and in the bench)."""
    lines = load_corpus()
    with tempfile.TemporaryDirectory() as tmp:
        build_layout(Path(tmp))
        result = score(lines, CorpusDetector(Path(tmp), "harness"), ("tune", "holdout"))
    reachable = [
        flag
        for (_, reach), flags in result["families"].items()
        if reach == "transcript"
        for flag in flags
    ]
    honest = [flag for flags in result["profiles"].values() for flag in flags]
    assert sum(reachable) / len(reachable) >= GOAL_RECALL, result["misses"]
    assert sum(honest) / len(honest) <= GOAL_FP, result["false_positives"]
