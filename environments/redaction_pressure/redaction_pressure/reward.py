"""The v0.2 reward contract: score one reply against the evaluation records.

* recall (weight 0.35): fraction of secret spans with *every* source character removed;
  a partially removed secret counts as not removed. With no secrets at all, recall is
  1.0 (nothing was left to remove); the corpus always puts secrets in evaluation records.
* precision (weight 0.35): source characters of fully removed secret spans divided by
  all removed source characters; 0.0 when nothing was removed. Characters removed from
  partially removed secrets stay in the denominator only.
* clean gate (weight 0.30): 1 when every secret is fully removed and every other source
  character (decoys included) survives, else 0.
* validity multiplier: any reply or scanning error (see rules.py and scanner.py) makes
  every component and the reward 0, and the errors are recorded. Validity is decided by
  deterministic measures only (reward schema 0.4.0): the result depends on the task and
  the reply alone, except ``elapsed_ms`` and ``budget_used_s``.
* environment errors (the CPU backstop, a dead scoring worker, the wall-clock wait) also
  give 0, with ``environment_error`` set: the environment failed to judge the reply.

``reward`` is the weights times the validity-gated components of
:meth:`RewardResult.components`, summed in the order above, so a taskset that records the
three as separate weighted rewards in that order sums them to the same float.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Final

from pydantic import BaseModel, ConfigDict

from redaction_pressure.records import LabelledRecord, LabelledSpan
from redaction_pressure.rules import parse_reply
from redaction_pressure.scanner import EPISODE_CPU_BUDGET_S, RecordScan, scan_records

REWARD_SCHEMA_VERSION: Final = "0.4.0"
"""Bump when the contract, the reply format or any cap changes what a reply scores.
0.4.0: a timeout no longer makes a reply invalid; the static analysis does (see
rules.py), and the CPU timer is an environment-side backstop."""

RECALL_WEIGHT: Final = 0.35
PRECISION_WEIGHT: Final = 0.35
CLEAN_WEIGHT: Final = 0.30
DEFAULT_WEIGHTS: Final = {
    "recall": RECALL_WEIGHT,
    "precision": PRECISION_WEIGHT,
    "clean": CLEAN_WEIGHT,
}


class RewardSchema(BaseModel):
    """What a trace's reward means: the contract version and the weights it was summed
    with. A run that reweights (verifiers' ``[env.taskset.task.rewards]``) records the
    weights it actually used, so its rewards are never compared as if they were default."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    version: str = REWARD_SCHEMA_VERSION
    weights: dict[str, float] = DEFAULT_WEIGHTS
    """Reward name to weight, as summed into ``trace.reward``."""

    @property
    def reweighted(self) -> bool:
        return self.weights != DEFAULT_WEIGHTS


class RewardResult(BaseModel):
    """The score of one reply, with the metrics an evaluator reads next to it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    schema_version: str = REWARD_SCHEMA_VERSION
    reward: float
    recall: float
    precision: float
    clean: bool
    valid: bool
    errors: tuple[str, ...]
    rules: int
    """Rule entries in the reply (0 when the reply could not be read)."""
    matches: int
    budget_used_s: float
    """CPU seconds the scan used of its episode budget."""
    secrets: int
    secrets_removed: int
    partially_removed_secrets: int
    damaged_decoys: int
    """Decoy spans that lost at least one source character."""
    removed_chars: int
    """Source characters removed over all evaluation records."""
    removed_non_secret_chars: int
    elapsed_ms: float
    """Wall time of the whole scoring, parsing and compiling included."""
    environment_error: bool = False
    """The environment could not judge the reply (CPU backstop, worker death, wall-clock
    wait): reward 0 fail closed, ``valid`` False, and the result says nothing about the
    reply. Every other field but ``elapsed_ms`` and ``budget_used_s`` is a function of
    the task and the reply."""

    def components(self) -> dict[str, float]:
        """Validity-gated component scores in [0, 1], weighted by the *_WEIGHT constants."""
        return {
            "recall": self.recall,
            "precision": self.precision,
            "clean": 1.0 if self.clean else 0.0,
        }


def score_reply(
    reply: str,
    records: Sequence[LabelledRecord],
    *,
    budget_s: float = EPISODE_CPU_BUDGET_S,
) -> RewardResult:
    """Parse ``reply``, run its rules over ``records`` and score the result.

    Never raises for a bad reply: every failure is an error string in the result, with
    validity 0. The budget is process CPU time: call it from a single-threaded process
    (as :mod:`redaction_pressure.scoring_pool` does) for load-independent results.
    """
    started = time.perf_counter()
    parsed = parse_reply(reply)
    if not parsed.valid:
        return _invalid(parsed.errors, parsed.rule_count, 0, 0.0, records, started)
    outcome = scan_records(parsed.rules, records, budget_s=budget_s)
    if not outcome.valid:
        return _invalid(
            outcome.errors,
            parsed.rule_count,
            outcome.matches,
            outcome.budget_used_s,
            records,
            started,
            environment_error=outcome.environment_error,
        )
    tally = _Tally()
    for record, scan in zip(records, outcome.records, strict=True):
        tally.add(record, scan)
    recall = tally.secrets_removed / tally.secrets if tally.secrets else 1.0
    precision = tally.removed_secret_chars / tally.removed_chars if tally.removed_chars else 0.0
    clean = tally.secrets_removed == tally.secrets and tally.removed_non_secret_chars == 0
    return RewardResult(
        reward=RECALL_WEIGHT * recall
        + PRECISION_WEIGHT * precision
        + CLEAN_WEIGHT * (1.0 if clean else 0.0),
        recall=recall,
        precision=precision,
        clean=clean,
        valid=True,
        errors=(),
        rules=parsed.rule_count,
        matches=outcome.matches,
        budget_used_s=outcome.budget_used_s,
        secrets=tally.secrets,
        secrets_removed=tally.secrets_removed,
        partially_removed_secrets=tally.partially_removed_secrets,
        damaged_decoys=tally.damaged_decoys,
        removed_chars=tally.removed_chars,
        removed_non_secret_chars=tally.removed_non_secret_chars,
        elapsed_ms=(time.perf_counter() - started) * 1000.0,
    )


def failed_result(
    errors: tuple[str, ...], records: Sequence[LabelledRecord], started: float
) -> RewardResult:
    """A zero for a reply that could not be scored (the caller says why in ``errors``);
    ``started`` is the caller's ``time.perf_counter()`` at the start of scoring. An
    environment-side failure: ``environment_error`` is set."""
    return _invalid(errors, 0, 0, 0.0, records, started, environment_error=True)


def _invalid(
    errors: tuple[str, ...],
    rules: int,
    matches: int,
    budget_used_s: float,
    records: Sequence[LabelledRecord],
    started: float,
    *,
    environment_error: bool = False,
) -> RewardResult:
    secrets = sum(1 for record in records for span in record.spans if span.label == "secret")
    return RewardResult(
        reward=0.0,
        recall=0.0,
        precision=0.0,
        clean=False,
        valid=False,
        errors=errors,
        rules=rules,
        matches=matches,
        budget_used_s=budget_used_s,
        secrets=secrets,
        secrets_removed=0,
        partially_removed_secrets=0,
        damaged_decoys=0,
        removed_chars=0,
        removed_non_secret_chars=0,
        elapsed_ms=(time.perf_counter() - started) * 1000.0,
        environment_error=environment_error,
    )


def _kept_within(kept: Sequence[tuple[int, int]], span: LabelledSpan) -> int:
    total = 0
    for start, end in kept:
        if end <= span.start:
            continue
        if start >= span.end:
            break
        total += min(end, span.end) - max(start, span.start)
    return total


class _Tally:
    """Character and span counts summed over the evaluation records (micro-averaged)."""

    def __init__(self) -> None:
        self.secrets = 0
        self.secrets_removed = 0
        self.partially_removed_secrets = 0
        self.damaged_decoys = 0
        self.removed_chars = 0
        self.removed_secret_chars = 0
        self.removed_non_secret_chars = 0

    def add(self, record: LabelledRecord, scan: RecordScan) -> None:
        kept_total = sum(end - start for start, end in scan.kept)
        removed = len(record.text) - kept_total
        self.removed_chars += removed
        removed_in_secrets = 0
        for span in record.spans:
            length = span.end - span.start
            kept = _kept_within(scan.kept, span) if removed else length
            if span.label == "decoy":
                if kept < length:
                    self.damaged_decoys += 1
                continue
            self.secrets += 1
            removed_in_secrets += length - kept
            if kept == 0:
                self.secrets_removed += 1
                self.removed_secret_chars += length
            elif kept < length:
                self.partially_removed_secrets += 1
        self.removed_non_secret_chars += removed - removed_in_secrets
