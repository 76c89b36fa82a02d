"""The reward is a function of the task and the reply alone (issue 22, part 2).

Until reward schema 0.3.0 a 0.25 s CPU budget decided validity, so a reply at the
budget's edge (the oracle's rules plus rules that never match but cost time) scored 1.0
in one process and 0.0 in another. Validity is now decided by the static analysis; the
CPU timer is a far-off backstop. These tests score the same replies in other processes,
under other hash seeds, in scoring workers (one and two) and while CPU hogs load the
machine, and require every field but ``elapsed_ms`` and ``budget_used_s`` to be equal.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import redaction_pressure
from redaction_pressure.corpus import GeneratedTask, generate_task
from redaction_pressure.policies import (
    fixed_reply,
    generic_scanner,
    oracle_patterns,
    reply_json,
)
from redaction_pressure.reward import RewardResult, score_reply
from redaction_pressure.rules import MAX_RULES, REDACTED
from redaction_pressure.scoring_pool import ScoringPool
from redaction_pressure.splits import public_task_seed

TIMING_FIELDS = ("elapsed_ms", "budget_used_s")
PACKAGE_PARENT = str(Path(redaction_pressure.__file__).resolve().parent.parent)
SLOW_NEVER_MATCHING = (
    r"\-\-\-[\s\S]+[\x00\x01]",
    r"(?<=\-\-\-)[\s\S]+[\x00\x01]",
    r"\-\-\-[\s\S]{1,4000}?[\x00\x01]",
    r"[\s\S]{0,3}[\s\S]{0,3}[\x00\x01]",
)
"""Rules the analysis accepts that never match the corpus and cost the most it allows
(the kind that put the old budget's edge within reach)."""


def _task() -> GeneratedTask:
    return generate_task(public_task_seed("dev", 5))


def _budget_edge_reply(task: GeneratedTask) -> str:
    patterns = oracle_patterns(task.profile)
    filler = [SLOW_NEVER_MATCHING[i % len(SLOW_NEVER_MATCHING)] for i in range(MAX_RULES)]
    return reply_json((p, REDACTED) for p in (patterns + filler)[:MAX_RULES])


def _replies(task: GeneratedTask) -> dict[str, str]:
    return {
        "budget_edge": _budget_edge_reply(task),
        "fixed_reply": fixed_reply(task),
        "generic_scanner": generic_scanner(task),
        "hostile": reply_json([(r"(.|.)+[\t\v]{2}", REDACTED)]),
    }


def _stable(result: RewardResult) -> dict[str, Any]:
    return result.model_dump(mode="json", exclude=set(TIMING_FIELDS))


def test_budget_edge_reply_is_valid_and_scores_one() -> None:
    task = _task()
    result = score_reply(_budget_edge_reply(task), task.evaluation)
    assert result.valid and not result.environment_error, result.errors
    assert result.reward == 1.0


_PROBE = """
import json, sys
from redaction_pressure.corpus import generate_task
from redaction_pressure.reward import score_reply
from redaction_pressure.splits import public_task_seed
replies = json.loads(sys.stdin.read())
task = generate_task(public_task_seed("dev", 5))
out = {}
for name, reply in replies.items():
    dumped = score_reply(reply, task.evaluation).model_dump(mode="json")
    for field in ("elapsed_ms", "budget_used_s"):
        dumped.pop(field)
    out[name] = dumped
print(json.dumps(out, sort_keys=True))
"""


@pytest.mark.parametrize("hash_seed", ["0", "1", "4242"])
def test_identical_in_other_processes_and_hash_seeds(hash_seed: str) -> None:
    task = _task()
    replies = _replies(task)
    here = {name: _stable(score_reply(reply, task.evaluation)) for name, reply in replies.items()}
    env = {"PYTHONHASHSEED": hash_seed, "PYTHONPATH": PACKAGE_PARENT, "PATH": os.environ["PATH"]}
    completed = subprocess.run(
        [sys.executable, "-c", _PROBE],
        input=json.dumps(replies),
        capture_output=True,
        text=True,
        check=True,
        env=env,
        timeout=300,
    )
    assert json.loads(completed.stdout) == json.loads(json.dumps(here, sort_keys=True))


@pytest.fixture
def cpu_hogs() -> Iterator[list[subprocess.Popen[bytes]]]:
    """Two busy-looping processes: the machine is loaded while the block runs."""
    hogs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
            hog.wait(timeout=10)


def _pool_results(workers: int, task: GeneratedTask, replies: dict[str, str]) -> list[Any]:
    pool = ScoringPool(workers)
    try:
        futures = [
            (name, pool.submit(reply, task.evaluation))
            for _ in range(2)
            for name, reply in sorted(replies.items())
        ]
        return [(name, _stable(future.result(timeout=600))) for name, future in futures]
    finally:
        pool.close()


def test_identical_across_workers_and_on_a_busy_machine(
    cpu_hogs: list[subprocess.Popen[bytes]],
) -> None:
    task = _task()
    replies = _replies(task)
    expected = [
        (name, _stable(score_reply(reply, task.evaluation)))
        for _ in range(2)
        for name, reply in sorted(replies.items())
    ]
    assert all(hog.poll() is None for hog in cpu_hogs)  # the load is on
    assert _pool_results(1, task, replies) == expected
    assert _pool_results(2, task, replies) == expected
    busy_here = [
        (name, _stable(score_reply(reply, task.evaluation)))
        for _ in range(2)
        for name, reply in sorted(replies.items())
    ]
    assert busy_here == expected
    assert all(hog.poll() is None for hog in cpu_hogs)
