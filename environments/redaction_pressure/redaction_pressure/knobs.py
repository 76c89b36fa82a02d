"""Difficulty knobs for the corpus, and the curriculum presets built from them.

The defaults reproduce the standard corpus byte for byte (a test pins its digest), so a
run that sets nothing gets the tasks every earlier baseline was measured on. Whatever
the knobs say, the evaluation records come from the keyed evaluation stream (see
corpus.py), so no count of example records makes them predictable.

Every knob is recorded in the environment identity of each task and trace.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, model_validator

RecordKind = Literal[
    "env", "yaml", "json", "shell", "http_log", "app_log", "ci_log", "source", "markdown", "chat"
]
RECORD_KINDS: tuple[RecordKind, ...] = get_args(RecordKind)

DecoyCloseness = Literal["any", "far", "close"]

SECRET_FAMILY_COUNT: Final = 11
"""Credential families a tenant can choose from (config passwords and in-house tokens
are always present on top)."""
MAX_EXAMPLE_RECORDS: Final = 80
"""Past the point (60-75) where the example stream's Mersenne Twister becomes fully
recoverable, on purpose: the tests check unpredictability at this setting."""
MAX_EVALUATION_RECORDS: Final = 64

GENERIC_DECOYS: tuple[str, ...] = (
    "aws_example_key",
    "jwt_example",
    "stripe_publishable_key",
    "sha256",
    "git_sha",
    "uuid",
    "base64_blob",
    "ssh_public_key",
    "pem_public_key",
    "bcrypt_hash",
    "placeholder",
    "masked",
    "key_name",
    "near_miss",
)
"""Every look-alike kind; the order is part of the corpus (it is sampled from)."""

CLOSE_DECOYS: tuple[str, ...] = (
    "aws_example_key",
    "jwt_example",
    "key_name",
    "masked",
    "near_miss",
    "placeholder",
    "stripe_publishable_key",
)
"""Look-alikes that share a secret's prefix, key name or shape."""
FAR_DECOYS: tuple[str, ...] = (
    "base64_blob",
    "bcrypt_hash",
    "git_sha",
    "pem_public_key",
    "sha256",
    "ssh_public_key",
    "uuid",
)
"""Look-alikes that are high-entropy but unlike any secret format."""


class Range(BaseModel):
    """An inclusive integer range drawn from uniformly per task (or per record)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    low: int = Field(ge=0)
    high: int = Field(ge=0)

    @model_validator(mode="after")
    def _ordered(self) -> Range:
        if self.high < self.low:
            raise ValueError(f"high ({self.high}) is below low ({self.low})")
        return self


class CorpusKnobs(BaseModel):
    """What a task looks like. Defaults: the standard corpus."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    secret_families: Range = Range(low=4, high=5)
    """Credential families per tenant treated as secret, out of 11 (plus config passwords
    and in-house tokens, always present)."""
    public_families: Range = Range(low=4, high=5)
    """Further families the tenant treats as public: their values appear, kept, in its
    examples and evaluation records. Drawn from the families left over by
    ``secret_families``, so fewer when those run out (at 11 secret families, none)."""
    decoy_kinds: Range = Range(low=8, high=11)
    """Look-alike kinds per tenant, drawn from the pool ``decoy_closeness`` selects (kept
    test keys and sandbox tokens the tenant's notes mention come on top)."""
    decoy_closeness: DecoyCloseness = "any"
    """Pool of look-alike kinds: all 14, only ``close`` ones (prefixes, key names, masked
    and near-miss values) or only ``far`` ones (hashes, UUIDs, public keys)."""
    decoys_per_record: Range = Range(low=1, high=3)
    """Look-alikes placed in each record."""
    example_records: int = Field(6, ge=1, le=MAX_EXAMPLE_RECORDS)
    """Labelled records shown in the prompt (every secret variant appears in them)."""
    evaluation_records: int = Field(14, ge=1, le=MAX_EVALUATION_RECORDS)
    """Records the rules are scored on; never shown."""
    record_kinds: tuple[RecordKind, ...] = RECORD_KINDS
    """Kinds of record to draw from (in this order)."""

    @model_validator(mode="after")
    def _feasible(self) -> CorpusKnobs:
        if not 1 <= self.secret_families.low <= self.secret_families.high <= SECRET_FAMILY_COUNT:
            raise ValueError(f"secret_families must lie within 1..{SECRET_FAMILY_COUNT}")
        if self.public_families.high > SECRET_FAMILY_COUNT - 1:
            raise ValueError(f"public_families must lie within 0..{SECRET_FAMILY_COUNT - 1}")
        pool = len(self.decoy_pool())
        if not 1 <= self.decoy_kinds.low <= self.decoy_kinds.high <= pool:
            raise ValueError(
                f"decoy_kinds must lie within 1..{pool} (the {self.decoy_closeness!r} pool)"
            )
        if self.decoys_per_record.low < 1:
            raise ValueError("decoys_per_record.low must be at least 1")
        if not self.record_kinds:
            raise ValueError("record_kinds must name at least one kind")
        if len(set(self.record_kinds)) != len(self.record_kinds):
            raise ValueError("record_kinds must not repeat a kind")
        return self

    def decoy_pool(self) -> tuple[str, ...]:
        if self.decoy_closeness == "close":
            return CLOSE_DECOYS
        if self.decoy_closeness == "far":
            return FAR_DECOYS
        return GENERIC_DECOYS


PresetName = Literal["intro", "easy", "standard", "hard", "expert"]

PRESETS: dict[str, CorpusKnobs] = {
    "intro": CorpusKnobs(
        secret_families=Range(low=2, high=3),
        public_families=Range(low=2, high=3),
        decoy_kinds=Range(low=2, high=4),
        decoy_closeness="far",
        decoys_per_record=Range(low=1, high=1),
        example_records=8,
        evaluation_records=8,
        record_kinds=("env", "yaml", "json"),
    ),
    "easy": CorpusKnobs(
        secret_families=Range(low=3, high=4),
        public_families=Range(low=3, high=4),
        decoy_kinds=Range(low=4, high=7),
        decoy_closeness="far",
        example_records=8,
        evaluation_records=12,
    ),
    "standard": CorpusKnobs(),
    "hard": CorpusKnobs(
        secret_families=Range(low=5, high=6),
        public_families=Range(low=5, high=5),
        decoy_kinds=Range(low=11, high=14),
        decoys_per_record=Range(low=2, high=4),
        example_records=4,
        evaluation_records=20,
    ),
    "expert": CorpusKnobs(
        secret_families=Range(low=5, high=6),
        public_families=Range(low=5, high=5),
        decoy_kinds=Range(low=6, high=7),
        decoy_closeness="close",
        decoys_per_record=Range(low=3, high=5),
        example_records=3,
        evaluation_records=24,
    ),
}
"""A curriculum, easiest first. ``standard`` is the default corpus."""
CURRICULUM: tuple[PresetName, ...] = get_args(PresetName)


def preset(name: str) -> CorpusKnobs:
    """The knobs of preset ``name``, or a ValueError listing the presets."""
    try:
        return PRESETS[name]
    except KeyError:
        raise ValueError(f"unknown preset {name!r}; allowed: {', '.join(CURRICULUM)}") from None


class RangeOverride(BaseModel):
    """Either end of a :class:`Range` to change (``None``: keep the preset's)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    low: int | None = Field(None, ge=0)
    high: int | None = Field(None, ge=0)


class KnobOverrides(BaseModel):
    """Knobs to change on top of a preset; every field ``None`` keeps the preset's value.

    This is what ``--env.taskset.knobs.*`` sets: ``preset hard`` plus
    ``knobs.example-records 3`` is the hard corpus with three example records.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    secret_families: RangeOverride | None = None
    public_families: RangeOverride | None = None
    decoy_kinds: RangeOverride | None = None
    decoy_closeness: DecoyCloseness | None = None
    decoys_per_record: RangeOverride | None = None
    example_records: int | None = None
    evaluation_records: int | None = None
    record_kinds: tuple[RecordKind, ...] | None = None

    def changed(self) -> dict[str, object]:
        """The knobs this sets, as plain values (ranges partly)."""
        return self.model_dump(exclude_none=True)

    def apply(self, base: CorpusKnobs, preset_name: str | None = None) -> CorpusKnobs:
        """``base`` with these knobs changed; a ValueError naming the preset, the
        changed knobs and what cannot hold when the result is not a valid corpus."""
        merged: dict[str, object] = base.model_dump()
        for name, value in self.changed().items():
            if isinstance(value, dict) and isinstance(merged.get(name), dict):
                merged[name] = {**merged[name], **value}  # type: ignore[dict-item]
            else:
                merged[name] = value
        try:
            return CorpusKnobs.model_validate(merged)
        except ValueError as error:
            where = f"preset {preset_name!r}" if preset_name else "the default corpus"
            reasons = "; ".join(
                f"{'.'.join(str(p) for p in e['loc']) or 'knobs'}: {e['msg']}"
                for e in getattr(error, "errors", lambda: [])()
            ) or str(error)
            raise ValueError(
                f"knobs {self.changed()} cannot be applied to {where}: {reasons}"
            ) from None
