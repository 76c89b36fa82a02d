"""Difficulty knobs and curriculum presets (issue 12, part 5).

Guards: the defaults are the standard corpus byte for byte (the digest test lives in
test_evaluation_stream.py); every preset keeps every task solvable from its examples;
knobs are honoured; impossible knob values are refused with a message naming the knob.
"""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from redaction_pressure.corpus import generate_task
from redaction_pressure.knobs import (
    CLOSE_DECOYS,
    CURRICULUM,
    FAR_DECOYS,
    GENERIC_DECOYS,
    PRESETS,
    CorpusKnobs,
    Range,
    preset,
)
from redaction_pressure.policies import oracle
from redaction_pressure.reward import score_reply
from redaction_pressure.splits import public_task_seed


def test_defaults_are_the_standard_preset_and_curriculum_is_ordered() -> None:
    assert CorpusKnobs() == PRESETS["standard"]
    assert list(PRESETS) == list(CURRICULUM)
    assert set(CLOSE_DECOYS) | set(FAR_DECOYS) == set(GENERIC_DECOYS)
    assert not set(CLOSE_DECOYS) & set(FAR_DECOYS)
    assert generate_task(7) == generate_task(7, knobs=CorpusKnobs())


@pytest.mark.parametrize("name", list(PRESETS))
def test_every_preset_task_is_solvable_and_honours_its_knobs(name: str) -> None:
    knobs = PRESETS[name]
    pool = set(knobs.decoy_pool())
    for index in range(12):
        task = generate_task(public_task_seed("dev", index), knobs=knobs)
        assert len(task.examples) == knobs.example_records
        assert len(task.evaluation) == knobs.evaluation_records
        families = {unit.split(":")[0] for unit in task.profile.secret_variants}
        chosen = families - {"config_password", "inhouse_token"}
        assert knobs.secret_families.low <= len(chosen) <= knobs.secret_families.high
        assert set(task.profile.decoy_kinds) <= pool
        for record in task.examples + task.evaluation:
            assert record.kind in knobs.record_kinds
        shown = {span.family for record in task.examples for span in record.spans}
        assert families <= shown, name
        public = set(task.profile.public_families)
        assert not public & families
        assert len(public) <= knobs.public_families.high
        for kept in task.profile.kept_variants:
            assert f"kept:{kept}" in shown, (name, kept)
        assert score_reply(oracle(task), task.evaluation).reward == 1.0, (name, index)


@pytest.mark.parametrize(
    ("knobs", "message"),
    [
        ({"secret_families": {"low": 0, "high": 3}}, "secret_families"),
        ({"secret_families": {"low": 3, "high": 12}}, "secret_families"),
        ({"secret_families": {"low": 5, "high": 2}}, "below low"),
        ({"public_families": {"low": 0, "high": 11}}, "public_families"),
        ({"decoy_kinds": {"low": 8, "high": 9}, "decoy_closeness": "far"}, "decoy_kinds"),
        ({"decoys_per_record": {"low": 0, "high": 2}}, "decoys_per_record"),
        ({"example_records": 0}, "example_records"),
        ({"example_records": 81}, "example_records"),
        ({"evaluation_records": 65}, "evaluation_records"),
        ({"record_kinds": []}, "record_kinds"),
        ({"record_kinds": ["env", "env"]}, "record_kinds"),
        ({"record_kinds": ["pdf"]}, "record_kinds"),
        ({"decoy_closeness": "medium"}, "decoy_closeness"),
        ({"surprise": 1}, "surprise"),
    ],
)
def test_impossible_knobs_are_refused_by_name(knobs: dict[str, object], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        CorpusKnobs.model_validate(knobs)


def test_unknown_preset_names_the_choices() -> None:
    with pytest.raises(ValueError, match="allowed: intro, easy, standard, hard, expert"):
        preset("nightmare")
    assert preset("hard") is PRESETS["hard"]
    assert Range(low=2, high=2).high == 2


def test_knob_flags_change_the_preset_they_are_given_with() -> None:
    """Guards issue 22 part 5: ``--env.taskset.preset hard --env.taskset.knobs.example-records
    3`` is the hard corpus with three examples, not the standard one."""
    from redaction_pressure.taskset import RedactionPressureTasksetConfig

    config = RedactionPressureTasksetConfig(
        id="redaction-pressure", preset="hard", knobs={"example_records": 3}
    )
    assert config.corpus_knobs() == PRESETS["hard"].model_copy(update={"example_records": 3})
    config = RedactionPressureTasksetConfig(
        id="redaction-pressure", preset="expert", knobs={"decoy_kinds": {"low": 6}}
    )
    assert config.corpus_knobs().decoy_kinds == Range(low=6, high=7)
    assert RedactionPressureTasksetConfig(id="redaction-pressure").corpus_knobs() == CorpusKnobs()


def test_a_knob_that_cannot_hold_on_its_preset_is_refused_naming_both() -> None:
    from redaction_pressure.taskset import RedactionPressureTasksetConfig

    with pytest.raises(
        ValidationError, match=r"preset 'expert'.*decoy_kinds must lie within 1\.\.7"
    ):
        RedactionPressureTasksetConfig(
            id="redaction-pressure", preset="expert", knobs={"decoy_kinds": {"high": 12}}
        )
