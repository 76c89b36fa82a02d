"""The evaluation records are unpredictable from the prompt (issue 15).

The examples come from a Mersenne Twister whose state (and seed) an attacker can recover
from enough visible output. These tests guard the structural fix: the evaluation records
come from a keyed SHAKE-256 stream that shares no state with the example stream, and for
private_eval the key comes from the private secret, not from the task seed.
"""

from __future__ import annotations

import hashlib
import pickle
import random

import pytest

from redaction_pressure import corpus
from redaction_pressure.corpus import (
    CORPUS_VERSION,
    GeneratedTask,
    generate_task,
    public_evaluation_key,
)
from redaction_pressure.keyed_stream import KeyedStream
from redaction_pressure.knobs import (
    MAX_EVALUATION_RECORDS,
    MAX_EXAMPLE_RECORDS,
    PRESETS,
    CorpusKnobs,
    Range,
)
from redaction_pressure.prompt import contract_text, render_prompt
from redaction_pressure.records import LabelledRecord
from redaction_pressure.splits import (
    DEV_SIZE,
    SplitSeeds,
    private_evaluation_key,
    private_task_seed,
    public_task_seed,
)

SECRET = hashlib.sha256(b"evaluation stream test secret").hexdigest()
OTHER_SECRET = hashlib.sha256(b"evaluation stream other secret").hexdigest()
LARGEST = CorpusKnobs(
    secret_families=Range(low=11, high=11),
    decoy_kinds=Range(low=14, high=14),
    decoys_per_record=Range(low=5, high=5),
    example_records=MAX_EXAMPLE_RECORDS,
    evaluation_records=MAX_EVALUATION_RECORDS,
)
"""The largest settings the knobs allow: 80 example records is past the 60-75 at which
the example stream's Mersenne Twister state becomes recoverable from the prompt."""
KNOB_SETTINGS = [CorpusKnobs(), LARGEST, *PRESETS.values()]
RP_CORPUS_1_DEV_PROMPTS = "5ec1515155128e24e64d4f211cfd3544d0d465a3867f0bf4bf49d736774cceb0"
"""SHA-256 over every dev prompt (without the contract text, whose budget line changed
with reward schema 0.3.0), profile and example records as rp-corpus-1 generated them."""
RP_CORPUS_1_DEV_EVALUATION = "726892a1af91b639b59d074fc9f4d610afdccf58c4dcb478379d16c0ec71aee2"
RP_CORPUS_3_DEV_PROMPTS = "d58bb7327992af390933019843b307628875e50fc215dada92720b95524990a6"
RP_CORPUS_3_DEV_EVALUATION = "c731f89216875bce80fc134a57ddb4cdce7774f003ef16ad66001c9362cff651"


def _prompts_digest(tasks: list[GeneratedTask]) -> str:
    hasher = hashlib.sha256()
    for task in tasks:
        hasher.update(render_prompt(task).replace(contract_text(), "").encode())
        hasher.update(task.profile.model_dump_json().encode())
        hasher.update(task.model_dump_json(include={"examples"}).encode())
        hasher.update(b"\0")
    return hasher.hexdigest()


def _evaluation_digest(tasks: list[GeneratedTask]) -> str:
    hasher = hashlib.sha256()
    for task in tasks:
        hasher.update(task.model_dump_json(include={"evaluation"}).encode())
    return hasher.hexdigest()


def test_rp_corpus_3_changed_prompts_and_evaluation_and_says_so() -> None:
    """rp-corpus-3 (tenant-varying kept look-alikes) changed both the prompts and the
    evaluation records, so the corpus version moved on; the pinned digests catch any
    further change that does not."""
    tasks = [generate_task(public_task_seed("dev", i)) for i in range(DEV_SIZE)]
    assert _prompts_digest(tasks) != RP_CORPUS_1_DEV_PROMPTS
    assert _evaluation_digest(tasks) != RP_CORPUS_1_DEV_EVALUATION
    assert _prompts_digest(tasks) == RP_CORPUS_3_DEV_PROMPTS
    assert _evaluation_digest(tasks) == RP_CORPUS_3_DEV_EVALUATION
    assert CORPUS_VERSION == "rp-corpus-3"
    assert {task.corpus_version for task in tasks} == {"rp-corpus-3"}


@pytest.mark.parametrize("knobs", KNOB_SETTINGS)
def test_evaluation_draws_nothing_from_the_example_stream(
    knobs: CorpusKnobs, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards against evaluation records drawn from (or after) the example stream, at
    every preset and at the largest settings: the example generator ends in the same
    state whether or not evaluation records are made, and the evaluation generator is a
    KeyedStream whose Mersenne Twister is never read."""
    seed = public_task_seed("dev", 3)
    alone = corpus._example_rng(seed)
    corpus._draw_examples(alone, knobs)
    state_after_examples = alone.getstate()

    used: list[random.Random] = []
    seen_streams: list[tuple[KeyedStream, object]] = []
    real_example_rng = corpus._example_rng
    real_draw_evaluation = corpus._draw_evaluation

    def recording_example_rng(task_seed: int) -> random.Random:
        rng = real_example_rng(task_seed)
        used.append(rng)
        return rng

    def recording_draw_evaluation(
        rng: KeyedStream,
        profile: corpus.TenantProfile,
        knobs: CorpusKnobs,
        *,
        first_index: int,
    ) -> tuple[LabelledRecord, ...]:
        mt_state = random.Random.getstate(rng)
        seen_streams.append((rng, mt_state))
        return real_draw_evaluation(rng, profile, knobs, first_index=first_index)

    monkeypatch.setattr(corpus, "_example_rng", recording_example_rng)
    monkeypatch.setattr(corpus, "_draw_evaluation", recording_draw_evaluation)
    task = generate_task(seed, knobs=knobs)
    assert len(used) == 1 and used[0].getstate() == state_after_examples
    assert len(seen_streams) == 1
    stream, mt_before = seen_streams[0]
    assert type(stream) is KeyedStream and stream is not used[0]
    # The base type's Mersenne Twister inside the stream was never advanced or seeded.
    assert random.Random.getstate(stream) == mt_before
    assert len(task.examples) == knobs.example_records
    assert len(task.evaluation) == knobs.evaluation_records


@pytest.mark.parametrize("knobs", KNOB_SETTINGS)
@pytest.mark.parametrize("index", [0, 17, 63])
def test_changing_only_the_evaluation_key_changes_every_record_and_no_prompt_byte(
    index: int, knobs: CorpusKnobs
) -> None:
    seed = public_task_seed("dev", index)
    first = generate_task(seed, b"\x01" * 32, knobs)
    second = generate_task(seed, b"\x02" * 32, knobs)
    assert render_prompt(first) == render_prompt(second)
    assert first.profile == second.profile and first.examples == second.examples
    assert len(first.evaluation) == len(second.evaluation) == knobs.evaluation_records
    for a, b in zip(first.evaluation, second.evaluation, strict=True):
        assert a.text != b.text


def test_private_evaluation_key_is_not_derivable_from_the_task_seed() -> None:
    """A private task seed recovered from the example stream (by inverting CPython's
    seeding) must not give the evaluation records: the key comes from the secret."""
    seeds = SplitSeeds("private_eval", environ={"REDACTION_PRESSURE_PRIVATE_SEED": SECRET})
    for index in range(4):
        seed = seeds.seed(index)
        assert seed == private_task_seed(SECRET, index)
        key = seeds.evaluation_key(index)
        assert key == private_evaluation_key(SECRET, index)
        assert key != public_evaluation_key(seed)
        private = generate_task(seed, key)
        guessed = generate_task(seed)  # what the seed alone determines
        assert render_prompt(private) == render_prompt(guessed)
        assert all(
            a.text != b.text for a, b in zip(private.evaluation, guessed.evaluation, strict=True)
        )
    other = SplitSeeds("private_eval", environ={"REDACTION_PRESSURE_PRIVATE_SEED": OTHER_SECRET})
    assert other.evaluation_key(0) != seeds.evaluation_key(0)


def test_keyed_stream_is_deterministic_and_keyed() -> None:
    a, b, c = KeyedStream(b"k" * 32), KeyedStream(b"k" * 32), KeyedStream(b"K" * 32)
    draws_a = [a.getrandbits(61) for _ in range(300)] + [a.random() for _ in range(10)]
    draws_b = [b.getrandbits(61) for _ in range(300)] + [b.random() for _ in range(10)]
    draws_c = [c.getrandbits(61) for _ in range(300)] + [c.random() for _ in range(10)]
    assert draws_a == draws_b != draws_c
    assert all(0.0 <= x < 1.0 for x in draws_a[300:])
    # Bounded integers go through getrandbits, i.e. through the keyed stream.
    picks = [KeyedStream(b"k" * 32).randrange(1000) for _ in range(3)]
    assert len(set(picks)) == 1


def test_keyed_stream_exposes_no_state_and_refuses_reseeding() -> None:
    stream = KeyedStream(b"k" * 32)
    with pytest.raises(TypeError):
        stream.getstate()
    with pytest.raises(TypeError):
        stream.seed(1)
    with pytest.raises(TypeError):
        pickle.dumps(stream)
    assert "k" * 8 not in repr(stream)
    with pytest.raises(ValueError, match="32-byte key"):
        KeyedStream(b"short")


def test_keyed_stream_choices_draws_as_random_random_does() -> None:
    """The batched ``choices`` is an optimisation only: same picks as the base method."""
    population = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"
    fast, slow = KeyedStream(b"c" * 32), KeyedStream(b"c" * 32)
    for k in (1, 7, 40, 200):
        expected = random.Random.choices(slow, population, k=k)
        assert fast.choices(population, k=k) == expected
    assert fast.choices(population, weights=[1] * 32, k=5) == random.Random.choices(
        slow, population, weights=[1] * 32, k=5
    )
