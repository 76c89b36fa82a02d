"""Baselines over the splits: the oracle proves every task solvable at exactly 1.0; the
known exploits earn nothing under the contract."""

from __future__ import annotations

import pytest

from redaction_pressure.corpus import GeneratedTask, generate_task
from redaction_pressure.policies import (
    POLICIES,
    all_but_one,
    first_character,
    generic_scanner,
    inaction,
    oracle,
    policy_reply,
    prefix_only,
    redact_everything,
)
from redaction_pressure.reward import score_reply
from redaction_pressure.rules import ALLOWED_REPLACEMENTS, MAX_RULES, parse_reply
from redaction_pressure.splits import DEV_SIZE, TRAIN_SIZE, public_task_seed

DEV_TASKS = [generate_task(public_task_seed("dev", i)) for i in range(DEV_SIZE)]
TRAIN_SAMPLE = [
    generate_task(public_task_seed("train", i)) for i in range(0, TRAIN_SIZE, TRAIN_SIZE // 24)
]


def test_oracle_scores_exactly_one_on_every_dev_task() -> None:
    for task in DEV_TASKS:
        result = score_reply(oracle(task), task.evaluation)
        assert result.reward == 1.0, (task.seed, result.errors, result.damaged_decoys)
        assert result.clean and result.valid


def test_oracle_scores_exactly_one_on_a_train_sample() -> None:
    assert len(TRAIN_SAMPLE) >= 24
    for task in TRAIN_SAMPLE:
        result = score_reply(oracle(task), task.evaluation)
        assert result.reward == 1.0, (task.seed, result.errors, result.damaged_decoys)


def test_inaction_scores_zero() -> None:
    for task in DEV_TASKS:
        result = score_reply(inaction(task), task.evaluation)
        assert result.valid
        assert result.reward == 0.0


@pytest.mark.parametrize("exploit", [first_character, prefix_only, all_but_one])
def test_partial_removal_exploits_earn_no_recall_and_no_clean_gate(exploit: object) -> None:
    """Guards against the historical exploits: deleting the first character, a prefix,
    or all but one character of every secret must not count as removing it, on every
    one of the 64 dev tasks."""
    assert callable(exploit)
    for task in DEV_TASKS:
        result = score_reply(exploit(task), task.evaluation)
        assert result.valid, result.errors
        assert result.recall == 0.0, task.seed
        assert not result.clean
        assert result.reward == 0.0
        assert result.partially_removed_secrets == result.secrets


def test_redact_everything_and_generic_scanner_fall_short_of_the_oracle() -> None:
    """Guards against cheap wins: wholesale deletion and tenant-blind scanners must not
    reach the clean gate."""
    for task in DEV_TASKS[:16]:
        everything = score_reply(redact_everything(task), task.evaluation)
        assert everything.recall == 1.0 and not everything.clean
        assert everything.reward < 0.6
        scanner = score_reply(generic_scanner(task), task.evaluation)
        assert scanner.valid and not scanner.clean
        assert scanner.damaged_decoys > 0 or scanner.recall < 1.0


def _all_tasks() -> list[GeneratedTask]:
    return DEV_TASKS[:8] + TRAIN_SAMPLE[:4]


@pytest.mark.parametrize("name", list(POLICIES))
def test_every_policy_reply_respects_the_contract(name: str) -> None:
    for task in _all_tasks():
        parsed = parse_reply(policy_reply(name, task))
        assert parsed.valid, parsed.errors
        assert len(parsed.rules) <= MAX_RULES
        assert all(rule.replacement in ALLOWED_REPLACEMENTS for rule in parsed.rules)


def test_unknown_policy_lists_the_known_ones() -> None:
    with pytest.raises(ValueError, match="known: oracle, inaction"):
        policy_reply("nope", DEV_TASKS[0])
