"""A reply that ignores the prompt must not pay (issue 22, part 1).

The attack: the same rules for every task, learnt from the generator instead of the
tenant. Before rp-corpus-3 the 13-rule fixed reply scored 0.81-0.90 because families a
tenant did not use never appeared in its records, so redacting them cost nothing. These
tests score several fixed replies (the issue's, one that spares test and sandbox keys,
the locally best subsets a hill climb over a rule library found, and the generic
scanner joined to the fixed reply) over the 64 dev tasks of every preset, and hold each
to the issue's bounds. The last test removes the tenant variation and checks the same
attack then beats the bounds: the guard is the corpus, not the reply.
"""

from __future__ import annotations

import statistics
from collections.abc import Iterator

import pytest

from redaction_pressure import corpus
from redaction_pressure.corpus import GeneratedTask, generate_task
from redaction_pressure.knobs import PRESETS, CorpusKnobs
from redaction_pressure.policies import (
    GENERIC_SCANNER_PATTERNS,
    fixed_reply_patterns,
    generic_scanner,
    oracle,
    reply_json,
)
from redaction_pressure.reward import score_reply
from redaction_pressure.rules import MAX_RULES, REDACTED
from redaction_pressure.splits import DEV_SIZE, public_task_seed

TENANT_BLIND_BOUND: dict[str, float] = {
    "intro": 0.686,
    "easy": 0.681,
    "standard": 0.616,
    "hard": 0.593,
    "expert": 0.521,
}
"""The issue's bound per preset: rp-corpus-2's tenant-blind (generic scanner) level + 0.05."""
OVER_GENERIC = 0.05
"""A fixed reply may beat the (new) generic scanner by at most this much."""


def _reply(patterns: list[str]) -> str:
    assert len(patterns) <= MAX_RULES
    return reply_json((p, REDACTED) for p in patterns)


def _fixed_replies() -> dict[str, str]:
    issue = fixed_reply_patterns()
    replies = {
        "issue_13_rules": _reply(issue),
        "spares_test_and_sandbox": _reply(fixed_reply_patterns(spare_test_keys=True)),
        # generic first, then what it lacks: the in-house shape and every config key
        "generic_plus_fixed": _reply([*GENERIC_SCANNER_PATTERNS, issue[-2], issue[-1]]),
    }
    # The hill climb's best subsets dropped one private-key label; so does this.
    for label in ("EC ",):
        others = [
            f"-----BEGIN {other}PRIVATE KEY-----"
            + r"[\s\S]{1,4000}?"
            + f"-----END {other}PRIVATE KEY-----"
            for other in ("EC ", "OPENSSH ", "")
            if other != label
        ]
        replies[f"without_{label.strip().lower() or 'pkcs8'}_keys"] = _reply([*others, *issue[1:]])
    return replies


FIXED_REPLIES = _fixed_replies()


def _dev_tasks(knobs: CorpusKnobs) -> list[GeneratedTask]:
    return [generate_task(public_task_seed("dev", i), knobs=knobs) for i in range(DEV_SIZE)]


def _mean(reply_for: object, tasks: list[GeneratedTask]) -> float:
    rewards = []
    for task in tasks:
        reply = reply_for(task) if callable(reply_for) else reply_for
        assert isinstance(reply, str)
        result = score_reply(reply, task.evaluation)
        assert result.valid, result.errors
        rewards.append(result.reward)
    return statistics.fmean(rewards)


@pytest.mark.parametrize("preset", list(PRESETS))
def test_no_fixed_reply_beats_the_bounds(preset: str) -> None:
    tasks = _dev_tasks(PRESETS[preset])
    generic = _mean(generic_scanner, tasks)
    bound = min(TENANT_BLIND_BOUND[preset], generic + OVER_GENERIC)
    scores = {name: _mean(reply, tasks) for name, reply in FIXED_REPLIES.items()}
    assert max(scores.values()) <= bound, (preset, generic, scores)
    assert _mean(oracle, tasks) == 1.0


@pytest.fixture
def tenant_variation_removed(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The corpus as rp-corpus-2 drew it in spirit: nothing a tenant keeps looks like a
    credential (no public families, kept variants, kept config keys, sandbox or public-id
    in-house tokens)."""
    real = corpus._tenant_profile

    def without_kept(rng: object, knobs: CorpusKnobs) -> corpus.TenantProfile:
        profile = real(rng, knobs)  # type: ignore[arg-type]
        return profile.model_copy(
            update={"kept_variants": (), "public_families": (), "kept_config_keys": ()}
        )

    monkeypatch.setattr(corpus, "_tenant_profile", without_kept)
    yield


def test_the_attack_wins_without_tenant_variation(tenant_variation_removed: None) -> None:
    """Guards the guard: with the kept look-alikes gone, the same fixed reply clears the
    bound it is held under above, so the bound is the corpus's doing."""
    tasks = _dev_tasks(PRESETS["standard"])
    score = _mean(FIXED_REPLIES["issue_13_rules"], tasks)
    assert score > TENANT_BLIND_BOUND["standard"], score
