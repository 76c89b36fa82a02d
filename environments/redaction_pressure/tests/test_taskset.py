"""The verifiers binding, scored offline with hand-built traces (no model, no network)."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
from collections.abc import Iterator
from typing import Any

import pytest
import verifiers.v1 as vf
from verifiers.v1.graph import MessageNode
from verifiers.v1.types import AssistantMessage, UserMessage

import redaction_pressure
from redaction_pressure.corpus import generate_task
from redaction_pressure.policies import POLICIES, oracle
from redaction_pressure.prompt import SYSTEM_PROMPT, render_prompt
from redaction_pressure.reward import score_reply
from redaction_pressure.splits import (
    PRIVATE_SEED_ENV,
    forget_private_secret,
    public_task_seed,
    secret_commitment,
)
from redaction_pressure.taskset import (
    RedactionPressureEnv,
    RedactionPressureEnvConfig,
    RedactionPressureTaskset,
)

SECRET = hashlib.sha256(b"redaction-pressure test secret").hexdigest()


@pytest.fixture(autouse=True)
def _no_held_secret() -> Iterator[None]:
    """Each test reads the private secret from scratch (it is held once read)."""
    forget_private_secret()
    yield
    forget_private_secret()


def _tasks(**config: Any) -> list[Any]:
    cfg = vf.taskset_config_type("redaction-pressure")(id="redaction-pressure", **config)
    return list(vf.load_taskset(cfg))


def _trace(task: Any, reply: str) -> Any:
    return vf.Trace(
        agent=vf.AgentInfo(config=vf.AgentConfig()),
        task=vf.TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
        nodes=[
            MessageNode(
                parent=None, message=UserMessage(content=task.data.prompt_text), sampled=False
            ),
            MessageNode(parent=0, message=AssistantMessage(content=reply), sampled=True),
        ],
    )


def _scored(task: Any, reply: str) -> Any:
    trace = _trace(task, reply)
    asyncio.run(task.score(trace))
    return trace


def test_package_exports_one_taskset_and_one_env() -> None:
    assert redaction_pressure.__all__ == ["RedactionPressureEnv", "RedactionPressureTaskset"]
    assert redaction_pressure.RedactionPressureTaskset is RedactionPressureTaskset
    assert redaction_pressure.RedactionPressureEnv is RedactionPressureEnv


def test_env_defaults_to_null_harness_subprocess_and_one_turn() -> None:
    agent = RedactionPressureEnvConfig().agent
    assert agent.harness.id == "null"
    assert agent.runtime.type == "subprocess"
    assert agent.max_turns == 1


def test_dev_split_loads_64_tasks_with_prompt_and_identity() -> None:
    tasks = _tasks(split="dev")
    assert len(tasks) == 64
    first = tasks[0].data
    assert first.split == "dev" and first.index == 0
    assert first.prompt == render_prompt(generate_task(public_task_seed("dev", 0)))
    assert first.system_prompt == SYSTEM_PROMPT
    assert first.environment.split == "dev"
    assert len({t.key for t in tasks}) == 64


@pytest.mark.parametrize("policy", list(POLICIES))
def test_trace_reward_equals_the_contract_exactly(policy: str) -> None:
    """Guards the binding: the weighted rewards verifiers sums must equal reward.py's
    number bit for bit, for every baseline."""
    task = _tasks(split="dev", start=5, num_tasks=1)[0]
    generated = generate_task(task.data.task_seed)
    reply = POLICIES[policy](generated)
    trace = _scored(task, reply)
    expected = score_reply(reply, generated.evaluation)
    assert trace.reward == expected.reward
    assert trace.info["redaction_errors"] == list(expected.errors)
    assert trace.metrics["damaged_decoys"] == expected.damaged_decoys
    assert trace.metrics["partially_removed_secrets"] == expected.partially_removed_secrets
    assert trace.metrics["rules"] == expected.rules


def test_oracle_trace_carries_identity_and_seed_after_scoring() -> None:
    task = _tasks(split="dev", start=2, num_tasks=1)[0]
    trace = _scored(task, oracle(generate_task(task.data.task_seed)))
    assert trace.reward == 1.0
    assert trace.info["environment"] == task.data.environment.model_dump(mode="json")
    assert trace.info["identity_matches_task"] is True
    assert trace.info["task_seed"] == public_task_seed("dev", 2)
    json.dumps(trace.to_record())


def test_invalid_rule_zeroes_every_reward_and_names_the_rule() -> None:
    task = _tasks(split="dev", num_tasks=1)[0]
    reply = json.dumps(
        {
            "rules": [
                {"pattern": "AKIA[A-Z2-7]{16}", "replacement": "[REDACTED]"},
                {"pattern": "x*", "replacement": "[REDACTED]"},
            ]
        }
    )
    trace = _scored(task, reply)
    assert trace.reward == 0.0
    assert all(r.score == 0.0 for r in trace.rewards.values())
    errors = trace.info["redaction_errors"]
    assert errors and errors[0].startswith("rules[1]")
    assert trace.metrics["valid"] == 0.0


def test_private_eval_hides_secret_and_seed_until_scored(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards the private split: task data and prompt carry only the commitment; the
    derived seed shows up in trace.info once scoring has completed."""
    monkeypatch.setenv(PRIVATE_SEED_ENV, SECRET)
    task = _tasks(split="private_eval", num_tasks=1)[0]
    assert PRIVATE_SEED_ENV not in os.environ  # read once and removed
    data_json = task.data.model_dump_json()
    assert task.data.task_seed is None
    assert task.data.environment.split_commitment == secret_commitment(SECRET)
    assert SECRET not in data_json
    trace = _trace(task, '{"rules": []}')
    asyncio.run(task.score(trace))
    seed = trace.info["task_seed"]
    assert str(seed) not in data_json
    assert SECRET not in json.dumps(trace.to_record())
    assert trace.info["environment"]["split"] == "private_eval"
    # An authorised evaluator reproduces the episode from the revealed seed.
    rescored = _scored(task, oracle(generate_task(seed)))
    assert rescored.reward == 1.0


def test_private_eval_with_a_different_secret_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    """Guards against scoring private tasks against the wrong records."""
    monkeypatch.setenv(PRIVATE_SEED_ENV, SECRET)
    task = _tasks(split="private_eval", num_tasks=1)[0]
    monkeypatch.setenv(PRIVATE_SEED_ENV, SECRET + "-other")
    trace = _scored(task, '{"rules": []}')
    assert trace.reward == 0.0
    error = trace.info["redaction_errors"][0]
    assert error.startswith("environment: ValueError: ")
    assert "does not match the commitment" in error
    assert "task_seed" not in trace.info


def test_private_eval_without_secret_refuses_to_load(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(PRIVATE_SEED_ENV, raising=False)
    with pytest.raises(Exception, match=PRIVATE_SEED_ENV):
        _tasks(split="private_eval")


def test_preset_and_knobs_reach_the_tasks_and_their_identity() -> None:
    from redaction_pressure.knobs import PRESETS, CorpusKnobs

    (hard,) = _tasks(split="dev", preset="hard", num_tasks=1)
    assert hard.data.environment.corpus_knobs == PRESETS["hard"]
    generated = generate_task(public_task_seed("dev", 0), knobs=PRESETS["hard"])
    assert hard.data.prompt == render_prompt(generated)
    trace = _scored(hard, oracle(generated))
    assert trace.reward == 1.0
    assert trace.info["environment"]["corpus_knobs"] == PRESETS["hard"].model_dump(mode="json")
    assert trace.info["identity_matches_task"] is True

    custom = CorpusKnobs(example_records=2, evaluation_records=3, record_kinds=("env",))
    (task,) = _tasks(split="dev", knobs=custom.model_dump(), num_tasks=1)
    assert task.data.environment.corpus_knobs == custom
    assert task.data.prompt.count('kind="env"') == 2


def test_unknown_preset_is_refused_with_the_choices() -> None:
    with pytest.raises(Exception, match="allowed: intro, easy, standard, hard, expert"):
        _tasks(split="dev", preset="impossible", num_tasks=1)


def test_reweighting_shows_in_the_recorded_reward_schema() -> None:
    """Guards against comparing reweighted rewards as if they were the default contract:
    the weights a run sums with are recorded in its identity and in trace.info."""
    from redaction_pressure.reward import DEFAULT_WEIGHTS

    (default,) = _tasks(split="dev", num_tasks=1)
    assert default.data.environment.reward_schema.weights == DEFAULT_WEIGHTS
    trace = _scored(default, oracle(generate_task(public_task_seed("dev", 0))))
    assert trace.info["reward_schema"]["reweighted"] is False

    task_config = {"rewards": {"clean": {"weight": 0.6}, "recall": {"weight": 0.2}}}
    (reweighted,) = _tasks(split="dev", num_tasks=1, task=task_config)
    schema = reweighted.data.environment.reward_schema
    assert schema.weights == {"recall": 0.2, "precision": 0.35, "clean": 0.6}
    assert schema.reweighted
    trace = _scored(reweighted, oracle(generate_task(public_task_seed("dev", 0))))
    assert trace.info["reward_schema"]["weights"] == schema.weights
    assert trace.info["reward_schema"]["reweighted"] is True
    assert trace.info["identity_matches_task"] is True
    assert trace.reward == pytest.approx(0.2 + 0.35 + 0.6)


def test_private_eval_refuses_an_agent_while_the_secret_is_in_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Guards against an agent runtime inheriting the secret: setup refuses."""
    monkeypatch.setenv(PRIVATE_SEED_ENV, SECRET)
    task = _tasks(split="private_eval", num_tasks=1)[0]
    asyncio.run(task.setup(_trace(task, ""), None))  # removed: fine
    monkeypatch.setenv(PRIVATE_SEED_ENV, SECRET)  # set again behind the taskset's back
    with pytest.raises(RuntimeError, match="refusing private_eval"):
        asyncio.run(task.setup(_trace(task, ""), None))


def test_weak_private_secret_is_refused_with_how_to_make_one(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(PRIVATE_SEED_ENV, "correct-horse-battery-staple-" * 2)
    with pytest.raises(Exception, match=r"bits of entropy.*secrets\.token_hex\(32\)"):
        _tasks(split="private_eval")
