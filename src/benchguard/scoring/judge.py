"""Judges: optional, model-backed scorers that add judged sub-scores to a record.

A judge never decides a gate: the pipeline refuses judge output under any catastrophic
key or ``OutcomeScore``. When a judge cannot be built (unknown provider, missing key)
``judge_or_null`` returns the null judge and the reason, so scoring still runs and the
deterministic gates still apply.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any, Protocol

from benchguard.scoring.keys import JUDGED_CORRECTNESS

JUDGE_API_KEY_ENV = "BENCHGUARD_JUDGE_API_KEY"
JUDGE_BASE_URL_ENV = "BENCHGUARD_JUDGE_BASE_URL"
JUDGE_MODEL_ENV = "BENCHGUARD_JUDGE_MODEL"
DEFAULT_JUDGE_MODEL = "gpt-4o-mini"
_JUDGE_TIMEOUT_S = 60.0
_OUTPUT_CAP = 20_000


class Judge(Protocol):
    """Anything that turns a record into judged score entries."""

    name: str

    def judge(self, record: Mapping[str, Any]) -> Mapping[str, Any]:
        """Return score entries (``{key: float | {score, success, reason}}``)."""
        ...


class JudgeUnavailable(RuntimeError):
    """The configured judge cannot be built; the message says why."""


class NullJudge:
    """The judge used when none is configured or one cannot be built: judges nothing."""

    name = "none"

    def judge(self, record: Mapping[str, Any]) -> Mapping[str, Any]:
        return {}


class OpenAICompatibleJudge:
    """Grades a record's output against its ``expected_output`` or ``rubric`` through any
    OpenAI-compatible chat-completions endpoint, as ``JudgedCorrectness``.

    Records with neither field are left unjudged.
    """

    name = "openai"

    def __init__(self, *, api_key: str, model: str, base_url: str | None = None) -> None:
        from openai import OpenAI

        self._client = OpenAI(api_key=api_key, base_url=base_url, timeout=_JUDGE_TIMEOUT_S)
        self._model = model

    def judge(self, record: Mapping[str, Any]) -> Mapping[str, Any]:
        reference = record.get("expected_output") or record.get("rubric")
        if not isinstance(reference, str) or not reference.strip():
            return {}
        output = record.get("output")
        answer = output if isinstance(output, str) else json.dumps(output, default=str)
        reply = self._client.chat.completions.create(
            model=self._model,
            temperature=0,
            messages=[
                {
                    "role": "system",
                    "content": "Grade the answer against the reference. Reply with one JSON "
                    'object: {"score": <number from 0 to 1>, "reason": "<one sentence>"}.',
                },
                {
                    "role": "user",
                    "content": f"Task:\n{record.get('input', '')}\n\nReference:\n{reference}"
                    f"\n\nAnswer:\n{answer[:_OUTPUT_CAP]}",
                },
            ],
        )
        return {JUDGED_CORRECTNESS: _parse_grade(reply.choices[0].message.content or "")}


def _parse_grade(text: str) -> dict[str, Any]:
    match = re.search(r"\{.*\}", text, re.DOTALL)
    if match is None:
        raise ValueError("judge reply holds no JSON object")
    data = json.loads(match.group(0))
    score = data.get("score") if isinstance(data, dict) else None
    if isinstance(score, bool) or not isinstance(score, int | float) or not 0 <= score <= 1:
        raise ValueError(f"judge score {score!r} is not a number in [0, 1]")
    reason = data.get("reason")
    return {
        "score": float(score),
        "success": None,
        "reason": reason if isinstance(reason, str) else "",
    }


def _build_openai(env: Mapping[str, str]) -> Judge:
    api_key = env.get(JUDGE_API_KEY_ENV) or env.get("OPENAI_API_KEY")
    if not api_key:
        raise JudgeUnavailable(
            f"judge provider 'openai' needs {JUDGE_API_KEY_ENV} (or OPENAI_API_KEY) to be set"
        )
    return OpenAICompatibleJudge(
        api_key=api_key,
        model=env.get(JUDGE_MODEL_ENV) or DEFAULT_JUDGE_MODEL,
        base_url=env.get(JUDGE_BASE_URL_ENV) or None,
    )


_PROVIDERS: dict[str, Callable[[Mapping[str, str]], Judge]] = {
    "none": lambda env: NullJudge(),
    "openai": _build_openai,
}
JUDGE_PROVIDERS: tuple[str, ...] = tuple(sorted(_PROVIDERS))


def build_judge(provider: str | None, env: Mapping[str, str]) -> Judge:
    """Build the judge for ``provider`` (``None`` or ``""`` means none).

    Raises ``JudgeUnavailable`` naming the provider and what is missing.
    """
    name = (provider or "none").strip().lower()
    factory = _PROVIDERS.get(name)
    if factory is None:
        raise JudgeUnavailable(
            f"unknown judge provider {provider!r}; allowed: {', '.join(JUDGE_PROVIDERS)}"
        )
    try:
        return factory(env)
    except JudgeUnavailable:
        raise
    except Exception as exc:  # a client library failing to construct is "unavailable" too
        raise JudgeUnavailable(f"judge provider {name!r} could not be built: {exc}") from exc


def judge_or_null(provider: str | None, env: Mapping[str, str]) -> tuple[Judge, str | None]:
    """``build_judge``, falling back to the null judge; returns the judge and why it fell back."""
    try:
        return build_judge(provider, env), None
    except JudgeUnavailable as exc:
        return NullJudge(), f"{exc}; scoring without a judge (deterministic gates still apply)"
