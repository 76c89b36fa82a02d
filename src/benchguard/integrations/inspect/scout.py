"""The ``benchguard/integrity_scanner`` Inspect Scout scanner: one result per
transcript, citing the messages that hold each finding.

``scout scan benchguard/integrity_scanner -T LOGS [-S profile=NAME]`` runs it offline
over Inspect logs (Scout finds it through benchguard's ``inspect_ai`` entry point). The
result's value is True when the transcript is flagged, False when clean, None when
there was nothing to scan or the scan failed; ``answer`` is the status, ``metadata``
the verdict (as the scorer's) and ``references`` the assistant message that typed each
flagged call (``args``), the tool message that returned its result (``result``) or the
final assistant message (``output``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from inspect_ai.model import ChatMessage, ChatMessageAssistant, ChatMessageTool
from inspect_ai.scorer import Reference
from inspect_scout import Result, Scanner, Transcript, scanner

from benchguard.detection.detector import Detector
from benchguard.importers.chat import ToolSteps
from benchguard.importers.transcript import StepStatus, make_record, text_of
from benchguard.integrations.verdict import (
    IntegrityVerdict,
    not_checked,
    profile_rules,
    scan_run,
)

DEFAULT_PROFILE = "inspect"


@dataclass
class _Where:
    """Which messages each step came from, to cite them."""

    args: dict[int, str] = field(default_factory=dict)
    result: dict[int, str] = field(default_factory=dict)
    output: str | None = None
    cites: dict[str, str] = field(default_factory=dict)


def transcript_record(messages: list[ChatMessage]) -> tuple[dict[str, Any], _Where]:
    """Our record of a transcript's messages, and where each step came from."""
    tools = ToolSteps()
    where = _Where()
    prompt = ""
    answer = ""
    for position, message in enumerate(messages):
        cite = f"M{position + 1}"
        if message.id:
            where.cites[message.id] = cite
        if isinstance(message, ChatMessageAssistant):
            if message.text:
                answer, where.output = message.text, message.id
            for call in message.tool_calls or []:
                called = tools.call(call.function, call.arguments, call.id)
                if message.id:
                    where.args[called] = message.id
        elif isinstance(message, ChatMessageTool):
            content = message.content
            text = text_of(
                content if isinstance(content, str) else [c.model_dump() for c in content]
            )
            status: StepStatus = "completed"
            if message.error is not None:
                status = "error"
                text = f"{text}\n{message.error.message}" if text else message.error.message
            index: int | None = tools.index_of(message.tool_call_id)
            unknown = message.function or "unknown"
            if not tools.result(message.tool_call_id, text, status, unknown_name=unknown):
                index = len(tools.steps) - 1
            if message.id and index is not None:
                where.result[index] = message.id
        elif message.role == "user" and not prompt:
            prompt = message.text
    record = make_record(
        name="transcript", input_text=prompt, output=answer, trajectory=tools.steps, source={}
    )
    return record, where


def _references(verdict: IntegrityVerdict, where: _Where) -> list[Reference]:
    found: dict[str, Reference] = {}
    for finding in verdict.findings:
        if finding.field == "output":
            message_id = where.output
        elif finding.step is None:
            message_id = None
        else:
            table = where.args if finding.field == "args" else where.result
            message_id = table.get(finding.step)
        if message_id and message_id not in found:
            cite = where.cites.get(message_id)
            found[message_id] = Reference(
                type="message", id=message_id, cite=f"[{cite}]" if cite else None
            )
    return list(found.values())


@scanner(messages="all", name="integrity_scanner")
def integrity_scanner(profile: str = DEFAULT_PROFILE) -> Scanner[Transcript]:
    """benchguard's integrity verdict on each transcript (see the module docstring).

    Args:
        profile: a built-in detection profile or the path of a profile YAML.
    """
    profile_rules(profile)  # a bad profile fails before any transcript is read
    detector = Detector()  # this scanner's plans, reused for every transcript

    async def scan(transcript: Transcript) -> Result:
        try:
            record, where = transcript_record(list(transcript.messages))
            verdict = scan_run(record, profile, format_name="inspect", detector=detector)
        except Exception as exc:  # unreadable: never clean
            verdict = not_checked(profile, f"{type(exc).__name__}: {exc}")
            where = _Where()
        references = _references(verdict, where)
        explanation = verdict.explanation()
        if references:
            # Scout's viewer links cites such as [M3] in an explanation to the message.
            explanation += " " + " ".join(r.cite or r.id for r in references)
        value: bool | None = (
            None if verdict.status in ("no_data", "not_checked") else verdict.flagged
        )
        return Result(
            value=value,
            answer=verdict.status,
            explanation=explanation,
            metadata=verdict.metadata(),
            references=references,
        )

    return scan
