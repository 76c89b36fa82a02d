"""The verifiers v1 binding: the only module of the environment that imports verifiers.

One task is one tenant of one split. Its data carries the split, the task's index, the
prompt and the environment identity; never the private secret, and for ``private_eval``
not even the derived task seed, which scoring re-derives from the environment variable
and writes to ``trace.info["task_seed"]`` only once the score is known.

Scoring is a pure, memoised function of (reply, task seed, evaluation key), computed in
a worker process of :mod:`redaction_pressure.scoring_pool` so a hostile reply never holds
the event loop; ``trace.info`` is rewritten on every call and never read back, because
``vf-replay`` keeps old ``info``.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from collections import OrderedDict
from collections.abc import Iterator
from concurrent.futures import Future
from typing import Any, Final

import verifiers.v1 as vf
from pydantic import Field, field_validator, model_validator

from redaction_pressure.corpus import generate_task
from redaction_pressure.identity import EnvironmentIdentity, environment_identity
from redaction_pressure.knobs import CorpusKnobs, KnobOverrides, preset
from redaction_pressure.prompt import SYSTEM_PROMPT, render_prompt
from redaction_pressure.records import LabelledRecord
from redaction_pressure.reward import (
    CLEAN_WEIGHT,
    DEFAULT_WEIGHTS,
    PRECISION_WEIGHT,
    RECALL_WEIGHT,
    RewardResult,
    RewardSchema,
)
from redaction_pressure.scoring_pool import shared_pool
from redaction_pressure.splits import (
    PRIVATE_EVAL_DEFAULT_SIZE,
    PRIVATE_SEED_ENV,
    SplitIdentity,
    SplitSeeds,
    private_secret_exposed,
)

__all__ = [
    "RedactionPressureEnv",
    "RedactionPressureEnvConfig",
    "RedactionPressureTask",
    "RedactionPressureTaskData",
    "RedactionPressureTaskset",
    "RedactionPressureTasksetConfig",
]

DEFAULT_TRAIN_TASKS = 1000
"""How many train tasks ``load()`` yields when ``num_tasks`` is not set."""


class RedactionPressureTaskData(vf.TaskData):  # type: ignore[misc]
    """One task's wire data (serialised into every trace)."""

    split: str
    index: int
    """Position of the task in its split (not the loader's ``idx``)."""
    task_seed: int | None = None
    """The corpus seed for public splits; ``None`` for private_eval, whose seed is only
    revealed in ``trace.info`` after scoring."""
    environment: EnvironmentIdentity


@functools.lru_cache(maxsize=256)
def _evaluation_records(
    task_seed: int, evaluation_key: bytes, knobs: CorpusKnobs
) -> tuple[LabelledRecord, ...]:
    return generate_task(task_seed, evaluation_key, knobs).evaluation


_SCORE_CACHE_SIZE: Final = 1024
_ScoreKey = tuple[str, int, bytes, CorpusKnobs]
_scores: OrderedDict[_ScoreKey, Future[RewardResult]] = OrderedDict()
_scores_lock = threading.Lock()


def _score_future(key: _ScoreKey) -> Future[RewardResult]:
    """The (shared, memoised) score of a reply on a task: the three rewards and the
    metric of one trace ask for it concurrently and must not score it four times."""
    reply, task_seed, evaluation_key, knobs = key
    with _scores_lock:
        future = _scores.get(key)
        if future is not None:
            _scores.move_to_end(key)
            return future
        records = _evaluation_records(task_seed, evaluation_key, knobs)
        future = shared_pool().submit(reply, records)
        _scores[key] = future
        while len(_scores) > _SCORE_CACHE_SIZE:
            _scores.popitem(last=False)
        return future


def _forget_score(key: _ScoreKey) -> None:
    """Drop an environment-side failure (backstop, dead worker) so a rescore retries it."""
    with _scores_lock:
        _scores.pop(key, None)


def reward_weights(task_config: vf.TaskConfig | None) -> RewardSchema:
    """The reward schema a task config produces: the default weights, with any
    ``[env.taskset.task.rewards]`` reweighting or added reward applied."""
    weights = dict(DEFAULT_WEIGHTS)
    plugged = getattr(task_config, "rewards", None) or {}
    for name in sorted(plugged):
        weight = getattr(plugged[name], "weight", None)
        weights[name] = float(weight) if weight is not None else weights.get(name, 1.0)
    return RewardSchema(weights=weights)


def _resolve_seed(data: RedactionPressureTaskData) -> tuple[int, bytes, SplitIdentity]:
    """The task seed, its evaluation key and the split identity as this process sees them."""
    # Task data does not carry the configured private_size; the task's own index is in
    # range by construction, so it bounds the split just enough to derive its seed.
    seeds = SplitSeeds(data.split, private_size=data.index + 1)
    commitment = seeds.identity.commitment
    if seeds.identity.is_private and commitment != data.environment.split_commitment:
        raise ValueError(
            "REDACTION_PRESSURE_PRIVATE_SEED does not match the commitment recorded "
            f"with the task ({data.environment.split_commitment[:19]}...)"
        )
    return seeds.seed(data.index), seeds.evaluation_key(data.index), seeds.identity


class PrivateSecretExposedError(RuntimeError):
    """private_eval refuses to run an agent while the secret is in ``os.environ``."""


def refuse_exposed_private_secret(split: str) -> None:
    """Raise when a private_eval agent would inherit the secret: verifiers' subprocess
    runtime (and any program started from this process) copies ``os.environ``, dropping
    only names that contain ``API_KEY``."""
    if split == "private_eval" and private_secret_exposed():
        raise PrivateSecretExposedError(
            f"refusing private_eval: {PRIVATE_SEED_ENV} is in this process's environment, "
            "and an agent runtime that inherits the host environment would see it; build "
            "the taskset (which reads and removes it) before starting any agent, and do not "
            "set it again"
        )


class RedactionPressureTask(vf.Task[RedactionPressureTaskData]):  # type: ignore[misc]
    """Scores the one reply against the task's unseen evaluation records."""

    async def setup(self, trace: vf.Trace, runtime: Any) -> None:
        """Runs before the agent: a private task refuses a runtime that would inherit the
        secret from this process's environment."""
        refuse_exposed_private_secret(self.data.split)
        await super().setup(trace, runtime)

    async def _outcome(self, trace: vf.Trace) -> RewardResult | None:
        """The reply's score, or ``None`` with the environment-side reason in ``trace.info``."""
        data: RedactionPressureTaskData = self.data
        info: dict[str, Any] = trace.info
        info["split"] = data.split
        info["task_index"] = data.index
        try:
            seed, evaluation_key, split_identity = _resolve_seed(data)
            schema = RewardSchema(
                weights={fn.__name__: float(fn._vf_weight) for fn in self.hooks("reward")}
            )
            knobs = data.environment.corpus_knobs
            identity = environment_identity(split_identity, knobs, schema, data.environment.preset)
            info["environment"] = identity.model_dump(mode="json")
            info["reward_schema"] = schema.model_dump(mode="json") | {
                "reweighted": schema.reweighted
            }
            key: _ScoreKey = (trace.last_reply or "", seed, evaluation_key, knobs)
            result = await asyncio.wrap_future(_score_future(key))
        except Exception as error:  # fail closed: a zero with the reason recorded
            info["redaction_errors"] = [f"environment: {type(error).__name__}: {error}"]
            info.setdefault("environment", data.environment.model_dump(mode="json"))
            return None
        if result.environment_error:
            _forget_score(key)
        info["redaction_errors"] = list(result.errors)
        info["identity_matches_task"] = identity == data.environment
        # Revealed only now that the score exists: with the private secret, an authorised
        # evaluator regenerates this exact episode (the evaluation key is not revealed).
        info["task_seed"] = seed
        return result

    async def _guarded_outcome(self, trace: vf.Trace) -> RewardResult | None:
        """:meth:`_outcome` for the rewards and the metric, which must never raise: in
        verifiers 0.4 one raising reward zeroes all of them."""
        try:
            return await self._outcome(trace)
        except Exception:
            return None

    async def _component(self, trace: vf.Trace, name: str) -> float:
        result = await self._guarded_outcome(trace)
        return result.components()[name] if result is not None else 0.0

    @vf.stop  # type: ignore[misc,untyped-decorator]
    async def single_turn(self, trace: vf.Trace) -> bool:
        return bool(trace.num_turns >= 1)

    # Priorities fix the order rewards land in trace.rewards (recall, precision, clean),
    # so trace.reward sums in the same order as reward.py and equals it bit for bit.
    @vf.reward(weight=RECALL_WEIGHT, priority=3)  # type: ignore[misc,untyped-decorator]
    async def recall(self, trace: vf.Trace) -> float:
        return await self._component(trace, "recall")

    @vf.reward(weight=PRECISION_WEIGHT, priority=2)  # type: ignore[misc,untyped-decorator]
    async def precision(self, trace: vf.Trace) -> float:
        return await self._component(trace, "precision")

    @vf.reward(weight=CLEAN_WEIGHT, priority=1)  # type: ignore[misc,untyped-decorator]
    async def clean(self, trace: vf.Trace) -> float:
        return await self._component(trace, "clean")

    @vf.metric  # type: ignore[misc,untyped-decorator]
    async def redaction(self, trace: vf.Trace) -> dict[str, float]:
        result = await self._guarded_outcome(trace)
        if result is None:
            return {"valid": 0.0}
        return {
            "valid": 1.0 if result.valid else 0.0,
            "rules": float(result.rules),
            "matches": float(result.matches),
            "budget_used_s": result.budget_used_s,
            "partially_removed_secrets": float(result.partially_removed_secrets),
            "damaged_decoys": float(result.damaged_decoys),
            "secrets_removed": float(result.secrets_removed),
            "scoring_ms": result.elapsed_ms,
        }


class RedactionPressureTasksetConfig(vf.TasksetConfig):  # type: ignore[misc]
    """``--env.taskset.*`` knobs."""

    split: str = "dev"
    """train | dev | private_eval (needs REDACTION_PRESSURE_PRIVATE_SEED)."""
    start: int = Field(0, ge=0)
    """First task index of the split to load."""
    num_tasks: int | None = Field(None, ge=1)
    """Tasks to load; default all of dev/private_eval, 1000 of train."""
    private_size: int = Field(PRIVATE_EVAL_DEFAULT_SIZE, ge=1)
    """Size of the private_eval split."""
    preset: str = "standard"
    """Difficulty preset: intro | easy | standard | hard | expert (see knobs.py)."""
    knobs: KnobOverrides | None = None
    """Knobs changed on top of the preset (each unset one keeps the preset's value); a
    combination that cannot hold is refused when the config is built."""

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, value: str) -> str:
        preset(value)  # raises with the list of presets
        return value

    @field_validator("knobs", mode="before")
    @classmethod
    def _full_knobs_override_everything(cls, value: Any) -> Any:
        # A complete CorpusKnobs (the earlier API) overrides every knob of the preset.
        return value.model_dump() if isinstance(value, CorpusKnobs) else value

    @model_validator(mode="after")
    def _knobs_hold(self) -> RedactionPressureTasksetConfig:
        self.corpus_knobs()  # raises naming the preset and the knobs that cannot hold
        return self

    def corpus_knobs(self) -> CorpusKnobs:
        base = preset(self.preset)
        return base if self.knobs is None else self.knobs.apply(base, self.preset)


class RedactionPressureTaskset(vf.Taskset[RedactionPressureTask, RedactionPressureTasksetConfig]):  # type: ignore[misc]
    """Tenants of one split, in index order."""

    def load(self) -> Iterator[RedactionPressureTask]:
        config: RedactionPressureTasksetConfig = self.config
        seeds = SplitSeeds(config.split, private_size=config.private_size)
        refuse_exposed_private_secret(seeds.split)  # SplitSeeds removed it; still gone?
        identity = environment_identity(
            seeds.identity, config.corpus_knobs(), reward_weights(config.task), config.preset
        )
        default = DEFAULT_TRAIN_TASKS if seeds.split == "train" else seeds.size
        count = config.num_tasks if config.num_tasks is not None else default
        stop = min(seeds.size, config.start + count)
        for index in range(config.start, stop):
            yield RedactionPressureTask(build_task_data(seeds, index, identity), config.task)


def build_task_data(
    seeds: SplitSeeds, index: int, identity: EnvironmentIdentity
) -> RedactionPressureTaskData:
    """The wire data of task ``index`` of ``seeds``' split."""
    seed = seeds.seed(index)
    task = generate_task(seed, seeds.evaluation_key(index), identity.corpus_knobs)
    return RedactionPressureTaskData(
        id=f"{seeds.split}-{index}",
        name=f"redaction-pressure {seeds.split} #{index} ({task.profile.tenant})",
        prompt=render_prompt(task),
        system_prompt=SYSTEM_PROMPT,
        split=seeds.split,
        index=index,
        task_seed=None if seeds.identity.is_private else seed,
        environment=identity,
    )


class RedactionPressureEnvConfig(vf.EnvConfig):  # type: ignore[misc]
    """Defaults for a laptop run: the tool-less null harness, a local subprocess, one turn."""

    agent: vf.AgentConfig = vf.AgentConfig(
        harness=vf.HarnessConfig(id="null"),
        runtime=vf.SubprocessConfig(),
        max_turns=1,
    )


class RedactionPressureEnv(vf.Env[RedactionPressureEnvConfig]):  # type: ignore[misc]
    """One agent answers one prompt; the task scores it."""

    async def run(self, task: Any, agents: Any) -> None:
        refuse_exposed_private_secret(getattr(getattr(task, "data", None), "split", ""))
        await agents.agent.run(task)
