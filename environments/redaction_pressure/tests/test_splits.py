"""Splits: disjoint public ranges, HMAC-derived private seeds, commitments that name
their split and cannot be swapped."""

from __future__ import annotations

import hashlib

import pytest
from pydantic import ValidationError

from redaction_pressure.corpus import generate_task
from redaction_pressure.prompt import render_prompt
from redaction_pressure.splits import (
    DEV_SEED_BASE,
    DEV_SIZE,
    PRIVATE_SEED_ENV,
    PRIVATE_SEED_MIN_CHARS,
    PUBLIC_COMMITMENTS,
    TRAIN_SEED_BASE,
    TRAIN_SIZE,
    SplitError,
    SplitIdentity,
    SplitSeeds,
    check_split,
    private_task_seed,
    public_task_seed,
    secret_commitment,
)

SECRET_A = hashlib.sha256(b"redaction-pressure split test A").hexdigest()
SECRET_B = hashlib.sha256(b"redaction-pressure split test B").hexdigest()


def test_dev_has_exactly_64_tasks_and_train_and_dev_ranges_are_disjoint() -> None:
    dev = SplitSeeds("dev")
    assert dev.size == DEV_SIZE == 64
    dev_seeds = {dev.seed(i) for i in range(dev.size)}
    train_range = range(TRAIN_SEED_BASE, TRAIN_SEED_BASE + TRAIN_SIZE)
    assert not any(seed in train_range for seed in dev_seeds)
    assert DEV_SEED_BASE >= TRAIN_SEED_BASE + TRAIN_SIZE
    assert public_task_seed("train", 0) == TRAIN_SEED_BASE
    assert public_task_seed("train", TRAIN_SIZE - 1) not in dev_seeds


@pytest.mark.parametrize(("split", "index"), [("dev", 64), ("dev", -1), ("train", TRAIN_SIZE)])
def test_out_of_range_index_is_refused(split: str, index: int) -> None:
    with pytest.raises(SplitError, match=f"index {index} is outside split"):
        SplitSeeds(split).seed(index)


def test_unknown_split_names_the_choices() -> None:
    with pytest.raises(SplitError, match="allowed: train, dev, private_eval"):
        check_split("test")


def test_missing_or_short_private_secret_fails_naming_variable_and_minimum() -> None:
    """Guards against a guessable private split: a short secret is refused, not padded."""
    with pytest.raises(SplitError, match=f"{PRIVATE_SEED_ENV} is not set.*at least 32"):
        SplitSeeds("private_eval", environ={})
    short = "x" * (PRIVATE_SEED_MIN_CHARS - 1)
    with pytest.raises(SplitError, match=f"{PRIVATE_SEED_ENV} holds 31 characters.*at least 32"):
        SplitSeeds("private_eval", environ={PRIVATE_SEED_ENV: short})
    with pytest.raises(SplitError, match=PRIVATE_SEED_ENV):
        private_task_seed(short, 0)


def test_private_seeds_depend_on_the_secret_and_never_hit_public_ranges() -> None:
    a = SplitSeeds("private_eval", environ={PRIVATE_SEED_ENV: SECRET_A})
    b = SplitSeeds("private_eval", environ={PRIVATE_SEED_ENV: SECRET_B})
    seeds_a = [a.seed(i) for i in range(8)]
    seeds_b = [b.seed(i) for i in range(8)]
    assert len(set(seeds_a)) == 8
    assert not set(seeds_a) & set(seeds_b)
    assert all(seed >= 2**63 for seed in seeds_a + seeds_b)
    assert generate_task(seeds_a[0]).digest() != generate_task(seeds_b[0]).digest()
    assert a.identity.commitment == secret_commitment(SECRET_A)
    assert a.identity.commitment != b.identity.commitment


def test_secret_and_derived_seed_appear_nowhere_in_task_or_prompt() -> None:
    """Guards the private split: neither the secret nor the derived seed may leak
    through the generated task text or the prompt."""
    seeds = SplitSeeds("private_eval", environ={PRIVATE_SEED_ENV: SECRET_A})
    for index in range(4):
        seed = seeds.seed(index)
        task = generate_task(seed)
        shown = render_prompt(task)
        records = "".join(r.text for r in task.examples + task.evaluation)
        for needle in (SECRET_A, str(seed), format(seed, "x")):
            assert needle not in shown
            assert needle not in records
    assert SECRET_A not in repr(seeds)
    assert SECRET_A not in seeds.identity.model_dump_json()


def test_dev_cannot_be_presented_as_private_eval() -> None:
    """Guards the reporting rule: a dev result relabelled private_eval is refused."""
    with pytest.raises(ValidationError, match="public split's commitment"):
        SplitIdentity(split="private_eval", commitment=PUBLIC_COMMITMENTS["dev"])
    with pytest.raises(ValidationError, match="must carry its public commitment"):
        SplitIdentity(split="dev", commitment=secret_commitment(SECRET_A))
    dev = SplitSeeds("dev").identity
    assert dev.label().startswith("dev ")
    assert not dev.is_private


@pytest.mark.parametrize(
    "weak",
    [
        "s" * 40,
        "password" * 5,
        "correct horse battery staple and more words",
        "0123456789abcdef" * 2,
    ],
)
def test_weak_secret_is_refused_where_it_is_read_but_derivations_accept_it(weak: str) -> None:
    """Guards the commitment: a guessable secret of the documented length is refused by
    the reader (taskset, environment and CLI all read through it), with how to make one;
    the derivation functions still accept it (tests use them with fixed strings)."""
    with pytest.raises(SplitError, match=r"estimated \d+ bits.*secrets\.token_hex\(32\)"):
        SplitSeeds("private_eval", environ={PRIVATE_SEED_ENV: weak})
    assert private_task_seed(weak, 0) >= 1 << 63


def test_strong_random_secrets_pass() -> None:
    import secrets

    for _ in range(20):
        SplitSeeds("private_eval", environ={PRIVATE_SEED_ENV: secrets.token_hex(32)})
        SplitSeeds("private_eval", environ={PRIVATE_SEED_ENV: secrets.token_urlsafe(32)})
