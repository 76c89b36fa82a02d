"""Trajectory steps from OpenAI-style chat messages, the shape most frameworks log.

Assistant messages carry ``tool_calls``; each result comes back in a ``role: tool``
message naming its call by ``tool_call_id``. Frameworks spell a call three ways, all
read here: ``{function: {name, arguments}}`` (OpenAI, mini-swe-agent), ``{function:
name, arguments}`` (Inspect AI) and ``{name, arguments}`` (verifiers).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from benchguard.importers.transcript import StepStatus, make_step, text_of


class ToolSteps:
    """Trajectory steps in call order: a call is a ``called`` step, and its result,
    found by call id when it comes back, fills that step in."""

    def __init__(self) -> None:
        self.steps: list[dict[str, Any]] = []
        self._by_call_id: dict[str, int] = {}

    def call(self, name: str, args: Any, call_id: object = None) -> int:
        """Add a call's step; a string ``call_id`` lets its result find it. Its index."""
        self.steps.append(make_step(name, args, None, "called"))
        index = len(self.steps) - 1
        if isinstance(call_id, str):
            self._by_call_id[call_id] = index
        return index

    def result(self, call_id: object, text: str, status: StepStatus, *, unknown_name: str) -> bool:
        """Fill in the step of the call ``call_id`` names. False when no call has that
        id: the result is then kept as a step of its own (named ``unknown_name``), since
        what it shows is still to be scanned."""
        index = self._by_call_id.get(call_id) if isinstance(call_id, str) else None
        if index is None:
            self.steps.append(make_step(unknown_name, {}, text, status))
            return False
        self.fill(index, text, status)
        return True

    def index_of(self, call_id: object) -> int | None:
        """The step of the call ``call_id`` names, if any."""
        return self._by_call_id.get(call_id) if isinstance(call_id, str) else None

    def fill(self, index: int, text: str, status: StepStatus) -> None:
        self.steps[index] = {**self.steps[index], "result": text, "status": status}


@dataclass
class ChatSteps:
    """What a message list yields: steps in call order plus the texts around them."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    first_user_text: str = ""
    last_assistant_text: str = ""


def call_name_and_args(call: dict[str, Any]) -> tuple[str, Any]:
    function = call.get("function")
    if isinstance(function, dict):
        return str(function.get("name") or "unknown"), function.get("arguments")
    if isinstance(function, str):
        return function, call.get("arguments")
    return str(call.get("name") or "unknown"), call.get("arguments", call.get("input"))


def steps_from_messages(messages: Iterable[Any], where: str = "messages") -> ChatSteps:
    """Pair tool calls with their results; a result with no known call is kept as a step."""
    out = ChatSteps()
    tools = ToolSteps()
    for position, message in enumerate(messages):
        if not isinstance(message, dict):
            out.errors.append(f"{where}[{position}]: not an object, skipped")
            continue
        role = message.get("role")
        if role == "assistant":
            text = text_of(message.get("content"))
            if text:
                out.last_assistant_text = text
            for call in message.get("tool_calls") or []:
                if not isinstance(call, dict):
                    out.errors.append(f"{where}[{position}].tool_calls: entry is not an object")
                    continue
                tools.call(*call_name_and_args(call), call.get("id"))
        elif role == "tool":
            _take_tool_result(out, tools, message, f"{where}[{position}]")
        elif role == "user" and not out.first_user_text:
            out.first_user_text = text_of(message.get("content"))
    out.steps = tools.steps
    return out


def _take_tool_result(
    out: ChatSteps, tools: ToolSteps, message: dict[str, Any], where: str
) -> None:
    text = text_of(message.get("content"))
    error = message.get("error")
    status: StepStatus = "completed"
    if error:
        status = "error"
        error_text = error.get("message") if isinstance(error, dict) else str(error)
        if error_text and error_text not in text:
            text = f"{text}\n{error_text}" if text else str(error_text)
    call_id = message.get("tool_call_id")
    name = message.get("function") or message.get("name") or "unknown"
    if not tools.result(call_id, text, status, unknown_name=str(name)):
        out.errors.append(f"{where}: tool result for unknown tool_call_id {call_id!r}")
