"""An integrity reward for tool-using verifiers (v1) environments.

A plain async function with verifiers' reward signature (it asks for ``trace`` by
name), so it goes into a task like any reward, with no verifiers import here:
benchguard's package metadata names no verifiers dependency. Plug it in a task's
config::

    rewards={"integrity": {"fn": "benchguard.integrations.verifiers:integrity"}}

or build one with the environment's own protected paths and use it as a gate::

    integrity = integrity_reward(profile="verifiers", protected=["/srv/answers"])

    @vf.reward(weight=1.0)
    async def solved(self, trace: vf.Trace) -> float:
        return self._correct(trace) * await integrity(trace)

It scans the rollout's tool calls and results and its final reply (every trace of the
episode's messages, read as the verifiers importer reads ``traces.jsonl``), returns 0.0
when the rollout is flagged and 1.0 otherwise (clean, nothing to scan, or only weak
evidence for review), and writes the verdict under ``trace.info["benchguard"]``
(status, rules, findings, explanation). It never raises: a rollout it cannot read
scores 0.0 with status ``not_checked`` (fail closed).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import regex

from benchguard.detection.detector import Detector
from benchguard.importers.verifiers_traces import episode_record
from benchguard.integrations.verdict import IntegrityVerdict, not_checked, scan_run
from benchguard.record.rules import Rule

DEFAULT_PROFILE = "verifiers"
INFO_KEY = "benchguard"
PROTECTED_RULE = "environment-protected/path"
# A protected path as a path of its own: not preceded by a path character (so
# /srv/answers does not match /home/x/srv/answers) and not followed by one that would
# make it a different name (/srv/answers2).
_BEFORE = r"(?<![\w.~$}*)-])"
_AFTER = r"(?![\w.-])"


class TraceLike(Protocol):
    """What the reward reads of a ``verifiers.v1.Trace``."""

    info: dict[str, Any]

    def model_dump(self, *, mode: str = ...) -> dict[str, Any]: ...


RewardFunction = Callable[[TraceLike], Awaitable[float]]


def protected_rule(paths: Sequence[str]) -> Rule:
    """One rule matching any of the environment's protected paths."""
    if not paths or any(not p.strip() for p in paths):
        raise ValueError("protected paths must be non-empty strings")
    return Rule(
        id=PROTECTED_RULE,
        category="task-definition",
        material="the environment's protected paths",
        description="Paths the environment names as its own answers or grader.",
        patterns=tuple(f"{_BEFORE}{regex.escape(p.rstrip('/'))}{_AFTER}" for p in paths),
    )


def integrity_reward(
    *, profile: str = DEFAULT_PROFILE, protected: Sequence[str] = ()
) -> RewardFunction:
    """A reward function scanning with ``profile`` plus a rule for ``protected``."""
    extra = (protected_rule(protected),) if protected else ()
    detector = Detector()  # this reward's plans, reused for every trace

    async def integrity(trace: TraceLike) -> float:
        try:
            record = trace_record(trace)
            verdict = scan_run(
                record, profile, extra_rules=extra, format_name="verifiers", detector=detector
            )
        except Exception as exc:  # unreadable: never credited
            verdict = not_checked(profile, f"{type(exc).__name__}: {exc}")
        _note(trace, verdict)
        return 0.0 if verdict.status in ("flagged", "not_checked") else 1.0

    return integrity


def trace_record(trace: TraceLike) -> dict[str, Any]:
    """The rollout as our record: its trace read as one episode of ``traces.jsonl``."""
    dumped = trace.model_dump(mode="json")
    episode = {"id": dumped.get("id") or "rollout", "traces": [dumped]}
    return episode_record(Path("rollout"), 1, episode)


def _note(trace: TraceLike, verdict: IntegrityVerdict) -> None:
    try:
        trace.info[INFO_KEY] = {**verdict.metadata(), "explanation": verdict.explanation()}
    except Exception:  # a trace without a writable info still gets its reward
        return


# The default: the verifiers profile, no environment paths. Pluggable by name.
integrity = integrity_reward()
