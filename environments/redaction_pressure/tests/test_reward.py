"""The v0.2 reward contract on hand-written records, including the known exploits."""

from __future__ import annotations

import json

import pytest
import regex

from redaction_pressure.records import LabelledRecord, LabelledSpan
from redaction_pressure.reward import (
    CLEAN_WEIGHT,
    PRECISION_WEIGHT,
    RECALL_WEIGHT,
    REWARD_SCHEMA_VERSION,
    RewardResult,
    score_reply,
)

GITHUB = "ghp_Q7rT2mK9xW4vB8nL1pZ6cD3fH5jY0sA2uE9o"
AWS = "AKIA" + "QZ2X7LMN4K3J5P6R"
DECOY_AWS = "AKIAIOSFODNN7EXAMPLE"
PASSWORD = "s3cr3t-Hunter22"


def _labelled(index: int, parts: list[tuple[str, str | None]]) -> LabelledRecord:
    """Build a record from (text, label) parts; label 'secret'/'decoy' or None."""
    text = ""
    spans = []
    for chunk, label in parts:
        if label is not None:
            spans.append(
                LabelledSpan(start=len(text), end=len(text) + len(chunk), label=label, family="t")
            )
        text += chunk
    return LabelledRecord(index=index, kind="env", text=text, spans=tuple(spans))


RECORDS = [
    _labelled(
        10,
        [
            ("GITHUB_TOKEN=", None),
            (GITHUB, "secret"),
            ("\nAWS_ACCESS_KEY_ID=", None),
            (AWS, "secret"),
            ("\n# docs example: ", None),
            (DECOY_AWS, "decoy"),
            ("\n", None),
        ],
    ),
    _labelled(11, [("db_password = ", None), (PASSWORD, "secret"), (" # rotate monthly", None)]),
    _labelled(12, [("nothing to see here, sha=", None), ("4f9c2a1b" * 5, "decoy")]),
]
SECRETS = [GITHUB, AWS, PASSWORD]
SECRET_CHARS = sum(len(s) for s in SECRETS)
ORACLE = [
    r"ghp_[A-Za-z0-9]{36}",
    r"(?!AKIAIOSFODNN7EXAMPLE)AKIA[A-Z2-7]{16}",
    r"(?<=db_password = )\S+",
]


def _reply(patterns: list[str], replacement: str = "[REDACTED]") -> str:
    return json.dumps({"rules": [{"pattern": p, "replacement": replacement} for p in patterns]})


def _score(patterns: list[str], replacement: str = "[REDACTED]") -> RewardResult:
    return score_reply(_reply(patterns, replacement), RECORDS)


@pytest.mark.parametrize("replacement", ["[REDACTED]", ""])
def test_oracle_scores_exactly_one(replacement: str) -> None:
    result = _score(ORACLE, replacement)
    assert result.reward == 1.0
    assert (result.recall, result.precision, result.clean, result.valid) == (1.0, 1.0, True, True)
    assert (result.secrets, result.secrets_removed, result.removed_chars) == (3, 3, SECRET_CHARS)
    assert (result.partially_removed_secrets, result.damaged_decoys) == (0, 0)
    assert result.schema_version == REWARD_SCHEMA_VERSION


def test_components_are_weighted_into_the_reward() -> None:
    """A taskset records the three components separately with these weights, in this
    order; they must sum to the reward exactly."""
    for patterns in (ORACLE, ORACLE[:2], [r"[\s\S]+"], []):
        result = _score(patterns)
        part = result.components()
        weighted = 0.35 * part["recall"] + 0.35 * part["precision"] + 0.30 * part["clean"]
        assert result.reward == weighted
    assert (RECALL_WEIGHT, PRECISION_WEIGHT, CLEAN_WEIGHT) == (0.35, 0.35, 0.30)


def test_missing_one_family_loses_recall_and_the_clean_gate() -> None:
    result = _score(ORACLE[:2])
    assert result.recall == pytest.approx(2 / 3)
    assert result.precision == 1.0
    assert result.clean is False
    assert result.reward == pytest.approx(0.35 * 2 / 3 + 0.35)


def _exploit(fragment: str) -> list[str]:
    """Rules that hit each literal secret only partly, via a lookahead on the secret."""
    return [f"(?={regex.escape(secret)}){fragment}" for secret in SECRETS]


@pytest.mark.parametrize(
    "patterns",
    [
        _exploit(r"[\s\S]"),  # first-character exploit
        _exploit(r"[\s\S]{4}"),  # prefix-only: a prefix such as ghp_ or AKIA
        [regex.escape(s[:-1]) + f"(?={regex.escape(s[-1])})" for s in SECRETS],  # all but one
        [regex.escape(s[1:]) for s in SECRETS],  # all but the first
    ],
    ids=["first_character", "prefix_only", "all_but_last", "all_but_first"],
)
@pytest.mark.parametrize("replacement", ["[REDACTED]", ""])
def test_partial_removal_earns_nothing(patterns: list[str], replacement: str) -> None:
    """Guards against the partial-credit exploits: touching a secret is not removing it."""
    result = _score(patterns, replacement)
    assert result.valid
    assert (result.recall, result.clean, result.reward) == (0.0, False, 0.0)
    assert result.partially_removed_secrets == 3
    assert result.precision == 0.0  # every removed character is in the denominator only


def test_redact_everything_gets_full_recall_low_precision_no_clean_gate() -> None:
    """Guards against the "delete the whole record" exploit reaching a high reward."""
    result = _score([r"[\s\S]+"])
    total = sum(len(r.text) for r in RECORDS)
    assert result.recall == 1.0
    assert result.precision == pytest.approx(SECRET_CHARS / total)
    assert result.precision < 0.5
    assert result.clean is False
    assert result.damaged_decoys == 2
    assert result.reward == pytest.approx(0.35 + 0.35 * SECRET_CHARS / total)
    assert result.reward < 0.6


def test_precision_keeps_partial_damage_in_the_denominator() -> None:
    """Removing a whole secret plus half of another: the half counts against precision."""
    half = regex.escape(PASSWORD[: len(PASSWORD) // 2])
    result = _score([ORACLE[0], half])
    removed = len(GITHUB) + len(PASSWORD) // 2
    assert result.precision == pytest.approx(len(GITHUB) / removed)
    assert result.recall == pytest.approx(1 / 3)
    assert result.partially_removed_secrets == 1


def test_damaging_a_decoy_breaks_the_clean_gate_only() -> None:
    result = _score([*ORACLE, "EXAMPLE"])
    assert result.recall == 1.0
    assert result.damaged_decoys == 1
    assert result.removed_non_secret_chars == len("EXAMPLE")
    assert result.clean is False
    assert result.precision == pytest.approx(SECRET_CHARS / (SECRET_CHARS + 7))


def test_removing_ordinary_text_breaks_the_clean_gate() -> None:
    result = _score([*ORACLE, "rotate"])
    assert (result.clean, result.damaged_decoys, result.removed_non_secret_chars) == (False, 0, 6)


def test_inaction_scores_zero() -> None:
    result = _score([])
    assert (result.reward, result.recall, result.precision, result.clean) == (0.0, 0.0, 0.0, False)
    assert result.valid


def test_recall_over_zero_secrets_is_one() -> None:
    """The documented edge: with nothing to remove, recall and the clean gate are vacuous."""
    decoys_only = [RECORDS[2]]
    untouched = score_reply(_reply([r"ghp_\w+"]), decoys_only)
    assert (untouched.recall, untouched.precision, untouched.clean) == (1.0, 0.0, True)
    assert untouched.reward == pytest.approx(0.65)


def test_invalid_reply_zeroes_every_component_and_records_errors() -> None:
    result = score_reply(_reply([*ORACLE, "a*"]), RECORDS)
    assert result.valid is False
    assert result.components() == {"recall": 0.0, "precision": 0.0, "clean": 0.0}
    assert (result.reward, result.rules, result.secrets) == (0.0, 4, 3)
    assert result.errors == (
        "rules[3].pattern: can match the empty string; every match must remove at least "
        "one character",
    )


def test_result_is_frozen_and_round_trips_as_json() -> None:
    result = _score(ORACLE)
    assert RewardResult.model_validate_json(result.model_dump_json()) == result
    with pytest.raises(ValueError, match="frozen"):
        result.reward = 0.5  # type: ignore[misc]
