"""Scoring off the event loop, in single-threaded worker processes (issue 12, parts 3-4).

The attacks: a scoring that runs long (the analysis refuses catastrophic rules, so these
tests force one with a rule it accepts on a record built to be its worst case, and a
small CPU backstop), sent to stall the trainer's event loop and every other rollout;
and a machine so loaded (or a worker so stuck) that a wait would never end. Assertions
are about order and outcome, never about durations.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator

import pytest

from redaction_pressure.corpus import GeneratedTask, generate_task
from redaction_pressure.policies import oracle
from redaction_pressure.records import LabelledRecord
from redaction_pressure.reward import score_reply
from redaction_pressure.scoring_pool import BACKSTOP_ERROR, WORKER_DIED_ERROR, ScoringPool
from redaction_pressure.splits import public_task_seed

# Fails to match after exponentially many tries on ordinary text: refused statically.
HOSTILE_RULE = {"pattern": r"(?:\S|\S\S)+\s{2}Q", "replacement": ""}
# Accepted (guarded by its literal), but quadratic on a record of nothing but dashes.
SLOW_RULE = {"pattern": r"\-\-\-[\s\S]+[\x00\x01]", "replacement": ""}
SLOW_RECORDS = (LabelledRecord(index=0, kind="log", text="-" * 200_000),)
SMALL_BACKSTOP_S = 1.0


@pytest.fixture(scope="module")
def task() -> GeneratedTask:
    return generate_task(public_task_seed("dev", 5))


@pytest.fixture
def pool() -> Iterator[ScoringPool]:
    created = ScoringPool(2, budget_s=SMALL_BACKSTOP_S)
    created.warm()  # both workers up, so the race below is between scorings only
    yield created
    created.close()


def _hostile(task: GeneratedTask) -> str:
    rules = json.loads(oracle(task))["rules"]
    return json.dumps({"rules": [*rules, HOSTILE_RULE]})


def _slow() -> str:
    return json.dumps({"rules": [SLOW_RULE]})


def test_pool_scores_exactly_as_in_process(pool: ScoringPool, task: GeneratedTask) -> None:
    for reply in (oracle(task), '{"rules": []}', "not json", _hostile(task)):
        here = score_reply(reply, task.evaluation)
        there = pool.score(reply, task.evaluation)
        assert (there.reward, there.valid, there.errors[:1] and there.errors[0][:8]) == (
            here.reward,
            here.valid,
            here.errors[:1] and here.errors[0][:8],
        )
    refused = pool.score(_hostile(task), task.evaluation)
    assert refused.errors[0].startswith("rules[") and not refused.environment_error
    slow = pool.score(_slow(), SLOW_RECORDS)
    assert slow.environment_error and slow.errors[0].startswith("environment: the CPU backstop")


def test_hostile_reply_does_not_hold_the_event_loop(pool: ScoringPool, task: GeneratedTask) -> None:
    """Guards against a reply that stalls every other rollout: while it burns its budget,
    the loop keeps running and a benign reply submitted after it finishes first."""
    finished: list[str] = []

    async def run() -> None:
        async def hostile() -> None:
            result = await pool.score_async(_slow(), SLOW_RECORDS)
            assert not result.valid and result.environment_error
            finished.append("hostile")

        async def benign() -> None:
            await asyncio.sleep(0)  # submitted after the hostile one
            result = await pool.score_async(oracle(task), task.evaluation)
            assert result.reward == 1.0
            finished.append("benign")

        async def loop_alive() -> None:
            for _ in range(3):
                await asyncio.sleep(0)
            finished.append("loop")

        await asyncio.gather(hostile(), benign(), loop_alive())

    asyncio.run(run())
    assert finished.index("loop") < finished.index("hostile")
    assert finished.index("benign") < finished.index("hostile")


def test_wall_clock_backstop_fails_closed_and_replaces_the_worker(task: GeneratedTask) -> None:
    """A worker that does not answer within the backstop is killed; the reply scores 0
    with the reason, and the pool keeps scoring."""
    pool = ScoringPool(1, budget_s=60.0, backstop_s=0.3)
    try:
        result = pool.score(_slow(), SLOW_RECORDS)
        assert result.reward == 0.0 and not result.valid and result.environment_error
        assert result.errors[0].startswith(BACKSTOP_ERROR)
        pool.backstop_s = 60.0  # the replacement's answer must not race a tiny backstop
        assert pool.score(oracle(task), task.evaluation).reward == 1.0
    finally:
        pool.close()


def test_dead_worker_fails_closed_and_is_replaced(pool: ScoringPool, task: GeneratedTask) -> None:
    assert pool.score(oracle(task), task.evaluation).reward == 1.0
    worker = pool._idle.get_nowait()
    worker.process.kill()
    worker.process.wait()
    pool._idle.put(worker)
    result = pool.score(oracle(task), task.evaluation)
    assert not result.valid and result.errors[0].startswith(WORKER_DIED_ERROR)
    assert result.environment_error
    assert pool.score(oracle(task), task.evaluation).reward == 1.0


def test_warm_starts_every_worker_once(pool: ScoringPool) -> None:
    assert pool._idle.qsize() == 2
    pool.warm()
    assert pool._idle.qsize() == 2


def test_closed_pool_refuses(task: GeneratedTask) -> None:
    pool = ScoringPool(1)
    pool.close()
    with pytest.raises(RuntimeError, match="closed"):
        pool.score(oracle(task), task.evaluation)
