"""The ``benchguard/integrity`` scorer: one integrity score per sample.

``inspect score LOG --scorer benchguard/integrity --action append`` adds it beside the
sample's own scores. A flagged sample scores 0 (answer ``flagged``), a clean one 1, one
with only weak evidence 1 with answer ``review`` (benchguard's gate does not fire on
weak evidence), and a sample with nothing to scan is unscored (``Score.unscored``: kept in the log,
left out of metrics) with ``status: no_data``. The verdict's status, profile, rules,
findings, ruleset digest and detector version are the score's metadata.
"""

from __future__ import annotations

from inspect_ai.scorer import Score, Scorer, Target, mean, scorer
from inspect_ai.solver import TaskState

from benchguard.detection.detector import Detector
from benchguard.integrations.inspect._record import state_record
from benchguard.integrations.verdict import (
    IntegrityVerdict,
    not_checked,
    profile_rules,
    scan_run,
)

DEFAULT_PROFILE = "inspect"
FLAGGED_ANSWER = "flagged"
REVIEW_ANSWER = "review"
CLEAN_ANSWER = "clean"


def verdict_score(verdict: IntegrityVerdict) -> Score:
    """The Inspect score for a verdict (the mapping docs/inspect.md documents)."""
    metadata = verdict.metadata()
    explanation = verdict.explanation()
    if verdict.status == "no_data":
        return Score.unscored(explanation=explanation, metadata=metadata)
    if verdict.status == "not_checked":
        return Score.unscored(reason="scoring_failed", explanation=explanation, metadata=metadata)
    if verdict.flagged:
        return Score(value=0, answer=FLAGGED_ANSWER, explanation=explanation, metadata=metadata)
    # Weak evidence only (review) is shown, never scored down: the gate does not fire.
    answer = REVIEW_ANSWER if verdict.status == "review" else CLEAN_ANSWER
    return Score(value=1, answer=answer, explanation=explanation, metadata=metadata)


@scorer(metrics=[mean()])
def integrity(profile: str = DEFAULT_PROFILE) -> Scorer:
    """Scan each sample's tool calls and final answer with benchguard's detector.

    Args:
        profile: a built-in detection profile (``inspect``, ``terminal-bench``,
            ``swe-bench``, ...) or the path of a profile YAML.
    """
    # Loaded here, so a bad profile name fails before any sample is scored.
    profile_rules(profile)
    detector = Detector()  # this scorer's plans, reused for every sample

    async def score(state: TaskState, target: Target) -> Score:
        try:
            verdict = scan_run(
                state_record(state), profile, format_name="inspect", detector=detector
            )
        except Exception as exc:  # a sample the scan cannot read is unscored, never clean
            verdict = not_checked(profile, f"{type(exc).__name__}: {exc}")
        return verdict_score(verdict)

    return score
