"""Findings of delivered code that reaches into the test framework or runs data.

Over the delivered-code mark (``harness.delivered_code``): each Python file is read by
:mod:`benchguard.detection.framework_reach` (a patch of pytest's or unittest's
machinery: strong; an import of its internals, a computed-name lookup of it, ``exec``
of computed or read code: weak, review); each data file the harness read because code
runs data (``loaded_by``) is read as Python, every module in it
(:mod:`benchguard.detection.executed_data`), by the same reader and by
:mod:`benchguard.detection.eq_semantics` (an always-equal class kept in data); a
Python file that runs data (``executes_data``) also has its own strings and comment
blocks read as code (a payload in its docstring, read back from ``__file__``).

One finding per file and rule, :data:`MAX_FINDINGS_PER_RULE` per rule. Pure.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from benchguard.detection.eq_semantics import degenerate_in_tree
from benchguard.detection.executed_data import code_pieces, own_pieces
from benchguard.detection.framework_reach import PATCH, Reach, framework_reach, reach_in_tree
from benchguard.detection.models import Finding

__all__ = ["PATCH_RULE", "REACH_RULE", "reach_findings"]

PATCH_RULE = "comparison-override/framework-patch"
REACH_RULE = "delivered-code/framework-reach"
MAX_FINDINGS_PER_RULE = 5


def reach_findings(
    mark: Mapping[str, Any],
    flagged: set[str],
    ignores_other: Callable[[str, str, int], Finding],
) -> list[Finding]:
    """The findings of ``mark``'s files; ``flagged``: paths that already have a
    comparison-override finding (an always-equal class in data is then not repeated);
    ``ignores_other`` makes the eq-ignores-other finding (``detection.delivered_code``)."""
    findings: list[Finding] = []
    counts: dict[str, int] = {}
    files = mark.get("files")
    listed = mark.get("executes_data")
    executing = {p for p in listed if isinstance(p, str)} if isinstance(listed, list) else set()
    for entry in files if isinstance(files, list) else []:
        if not isinstance(entry, Mapping):
            continue
        path, text = entry.get("path"), entry.get("text")
        if not isinstance(path, str) or not isinstance(text, str):
            continue
        if path in flagged:
            continue  # one comparison-override finding per file: the patterns' first
        loaded_by = entry.get("loaded_by")
        reaches: list[Reach] = []
        if isinstance(loaded_by, list):
            runner = ", ".join(str(p) for p in loaded_by[:3])
            degenerate: list[tuple[str, int]] = []
            for tree in code_pieces(text):
                reaches += reach_in_tree(tree)
                degenerate += degenerate_in_tree(tree)
            if degenerate:
                findings.append(ignores_other(path, *degenerate[0]))
                flagged.add(path)
                continue
            reaches = [
                Reach(r.strength, r.line, f"{r.what} (data run as code by {runner})")
                for r in reaches
            ]
        else:
            reaches = framework_reach(path, text)
            if path in executing:
                # It runs data: perhaps its own docstring or comments, read back.
                for tree in own_pieces(text):
                    reaches += [
                        Reach(r.strength, r.line, f"{r.what} (in its own text, run as code)")
                        for r in reach_in_tree(tree)
                    ]
        for reach in _one_per_rule(reaches):
            rule = PATCH_RULE if reach.strength == PATCH else REACH_RULE
            if counts.get(rule, 0) >= MAX_FINDINGS_PER_RULE:
                continue
            counts[rule] = counts.get(rule, 0) + 1
            findings.append(_finding(path, reach))
    return findings


def _one_per_rule(reaches: list[Reach]) -> list[Reach]:
    """The first strong reach, else the first weak one (a file patching the framework
    is one finding, not also a review)."""
    strong = [r for r in reaches if r.strength == PATCH]
    return strong[:1] or reaches[:1]


def _finding(path: str, reach: Reach) -> Finding:
    if reach.strength == PATCH:
        return Finding(
            rule=PATCH_RULE,
            category="comparison-override",
            material="the test runner's results",
            evidence=(
                "code that changes the test framework's machinery (pytest's reports, "
                "unittest's results), in the code the harness read from the workspace"
            ),
            severity="high",
            pattern="",
            field="harness",
            trajectory_index=None,
            tool="delivered-code",
            excerpt=f"{path}: line {reach.line}: {reach.what}",
            source="harness",
            strength="strong",
        )
    return Finding(
        rule=REACH_RULE,
        category="delivered-code",
        material="the test runner's results",
        evidence=(
            "a deliverable reaching into the test framework's internals, or running code "
            "it computes or reads, in the code the harness read from the workspace"
        ),
        severity="low",
        pattern="",
        field="harness",
        trajectory_index=None,
        tool="delivered-code",
        excerpt=f"{path}: line {reach.line}: {reach.what}",
        source="harness",
        strength="weak",
    )
