"""The corpus: deterministic, realistic, and every task solvable from its examples."""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import zlib

import regex

from redaction_pressure.corpus import (
    AWS_EXAMPLE_KEY_ID,
    AWS_EXAMPLE_SECRET,
    CORPUS_VERSION,
    EVALUATION_RECORDS,
    EXAMPLE_RECORDS,
    RECORD_KINDS,
    GeneratedTask,
    generate_task,
)
from redaction_pressure.splits import DEV_SIZE, public_task_seed

DEV_TASKS = [generate_task(public_task_seed("dev", i)) for i in range(DEV_SIZE)]


def _spans(task: GeneratedTask, label: str) -> list[tuple[str, str]]:
    records = task.examples + task.evaluation
    return [(s.family, r.span_text(s)) for r in records for s in r.spans if s.label == label]


def test_same_seed_gives_the_same_bytes_twice_and_in_another_process() -> None:
    """Guards reproducibility: a recorded episode must regenerate byte for byte."""
    seed = public_task_seed("dev", 7)
    first, second = generate_task(seed), generate_task(seed)
    assert first.digest() == second.digest()
    code = (
        f"from redaction_pressure.corpus import generate_task;print(generate_task({seed}).digest())"
    )
    other = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONHASHSEED": "12345"},
    )
    assert other.stdout.strip() == first.digest()


def test_different_seeds_give_different_tenants() -> None:
    digests = {task.digest() for task in DEV_TASKS}
    assert len(digests) == DEV_SIZE
    profiles = {task.profile.model_dump_json() for task in DEV_TASKS}
    assert len(profiles) == DEV_SIZE


def test_task_shape_and_version() -> None:
    for task in DEV_TASKS:
        assert task.corpus_version == CORPUS_VERSION
        assert len(task.examples) == EXAMPLE_RECORDS
        assert len(task.evaluation) == EVALUATION_RECORDS
        assert [r.index for r in task.examples + task.evaluation] == list(
            range(EXAMPLE_RECORDS + EVALUATION_RECORDS)
        )
        assert any(s.label == "secret" for r in task.evaluation for s in r.spans)


def test_every_secret_unit_and_kept_lookalike_is_shown_in_the_examples() -> None:
    """Guards solvability: an evaluation secret of a kind the examples never show
    (or a policy decoy the examples never show) could not be inferred."""
    for task in DEV_TASKS:
        shown = {s.family for r in task.examples for s in r.spans}
        for unit in task.profile.secret_variants:
            assert unit.split(":")[0] in shown
        for key in task.profile.config_keys:
            assert any(
                regex.search(rf"(?i){key.replace('_', '_?')}", r.text[: s.start][-40:])
                for r in task.examples
                for s in r.spans
                if s.family == "config_password"
            ), key
        for unit in task.profile.kept_variants:
            assert f"kept:{unit}" in shown, (task.seed, unit)


def test_all_record_kinds_appear() -> None:
    kinds = {r.kind for task in DEV_TASKS for r in task.examples + task.evaluation}
    assert kinds == set(RECORD_KINDS)


def test_secrets_use_real_alphabets_and_structure() -> None:
    """Guards realism: rules written for real credentials must fit the corpus."""
    checked: set[str] = set()
    for task in DEV_TASKS:
        for family, value in _spans(task, "secret"):
            checked.add(family)
            if family == "aws_access_key_id":
                assert regex.fullmatch(r"(?:AKIA|ASIA)[A-Z2-7]{16}", value)
            elif family == "github_token" and not value.startswith("github_pat_"):
                assert regex.fullmatch(r"gh[pos]_[A-Za-z0-9]{36}", value)
                body, check = value[4:-6], value[-6:]
                number = 0
                for char in check:
                    number = number * 62 + (
                        "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz".index(char)
                    )
                assert number == zlib.crc32(body.encode())
            elif family == "github_token":
                assert regex.fullmatch(r"github_pat_[A-Za-z0-9]{22}_[A-Za-z0-9]{59}", value)
            elif family == "google_api_key":
                assert regex.fullmatch(r"AIza[A-Za-z0-9_-]{35}", value)
            elif family == "jwt":
                header, payload, signature = value.split(".")
                for part in (header, payload):
                    decoded = json.loads(base64.urlsafe_b64decode(part + "=" * (-len(part) % 4)))
                    assert isinstance(decoded, dict)
                assert len(base64.urlsafe_b64decode(signature + "=")) == 32
            elif family == "private_key":
                assert "PRIVATE KEY-----" in value and value.startswith("-----BEGIN ")
            elif family == "npm_token":
                assert regex.fullmatch(r"npm_[A-Za-z0-9]{36}", value)
            elif family == "slack_token":
                assert regex.fullmatch(r"xox[bp]-[0-9]+-[0-9]+(?:-[0-9]+)?-[A-Za-z0-9]+", value)
    assert checked >= {
        "aws_access_key_id",
        "github_token",
        "google_api_key",
        "jwt",
        "private_key",
        "npm_token",
        "slack_token",
        "inhouse_token",
        "config_password",
        "dsn_password",
        "bearer_token",
        "aws_secret_access_key",
        "stripe_secret_key",
    }


def test_decoys_include_documented_examples_and_lookalikes() -> None:
    decoys = [d for task in DEV_TASKS for d in _spans(task, "decoy")]
    values = {v for _, v in decoys}
    families = {f for f, _ in decoys}
    assert AWS_EXAMPLE_KEY_ID in values
    assert AWS_EXAMPLE_SECRET in values
    assert families >= {
        "aws_example_key",
        "jwt_example",
        "kept:stripe_secret_key:sk_test",
        "hash",
        "uuid",
        "git_sha",
        "base64_blob",
        "public_key",
        "placeholder",
        "masked",
        "key_name",
        "near_miss",
        "kept:inhouse_token:test",
        "kept:inhouse_token:public",
    }


def test_decoys_sit_where_naive_rules_strike() -> None:
    """Guards the task's difficulty: look-alikes share key names with real secrets."""
    found_example_under_real_key = False
    found_test_key_under_secret_key = False
    for task in DEV_TASKS:
        for record in task.examples + task.evaluation:
            for span in record.spans:
                before = record.text[max(0, span.start - 40) : span.start].lower()
                if span.family == "aws_example_key" and "secret_access_key" in before.replace(
                    "secretaccesskey", "secret_access_key"
                ):
                    found_example_under_real_key = True
                if span.family == "kept:stripe_secret_key:sk_test" and "stripe" in before:
                    found_test_key_under_secret_key = True
    assert found_example_under_real_key
    assert found_test_key_under_secret_key


def test_what_a_tenant_keeps_varies_and_shows_up_in_evaluation_like_secrets() -> None:
    """Guards the corpus against prompt-ignoring replies (issue 22): every credential
    shape is secret for some tenants and kept by others, and kept look-alikes appear in
    the scored records about as often as secrets."""
    secret_for: dict[str, int] = {}
    kept_by: dict[str, int] = {}
    secret_spans = kept_spans = 0
    words: set[str] = set()
    for task in DEV_TASKS:
        profile = task.profile
        for unit in profile.secret_variants:
            secret_for[unit.split(":")[0]] = secret_for.get(unit.split(":")[0], 0) + 1
        for unit in profile.kept_variants:
            kept_by[unit.split(":")[0]] = kept_by.get(unit.split(":")[0], 0) + 1
        assert not set(profile.secret_variants) & set(profile.kept_variants)
        assert not set(profile.config_keys) & set(profile.kept_config_keys)
        words.add(profile.inhouse.live_word)
        for record in task.evaluation:
            for span in record.spans:
                secret_spans += span.label == "secret"
                kept_spans += span.family.startswith("kept:")
    families = set(secret_for) | set(kept_by)
    assert families == set(secret_for) == set(kept_by), (secret_for, kept_by)
    assert kept_spans >= secret_spans
    assert len(words) >= 10  # the credential word is drawn per tenant
    prefixes = {task.profile.inhouse.prefix for task in DEV_TASKS}
    assert len(prefixes) == DEV_SIZE
