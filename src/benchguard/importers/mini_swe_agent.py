"""mini-swe-agent trajectory files (``*.traj.json``, ``trajectory_format``
``mini-swe-agent-1.1`` from v2, and the older hand-formatted ``mini-swe-agent-1``).

Field sources (mini-swe-agent "Output files" and "v2 migration" docs): top level
``info`` (``exit_status``, ``submission``, ``config``, ``mini_version``), ``messages``
and ``trajectory_format``. With tool-calling models an assistant message carries
``tool_calls[].function.arguments`` (a JSON string such as ``{"command": "..."}``) and
its result comes back as a ``role: tool`` message; text-based models put the parsed
commands in ``extra.actions[].command`` and the result in the next ``user`` message
(``extra.raw_output`` / ``extra.returncode``). v1 files have only markdown code blocks.
The run ends with a ``role: exit`` message whose ``extra`` holds ``exit_status`` and
``submission``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from benchguard.importers.chat import ToolSteps, call_name_and_args
from benchguard.importers.transcript import (
    ImportedFile,
    as_dict,
    import_json_document,
    make_record,
    text_of,
)

FORMAT_NAME = "mini-swe-agent"
_CODE_BLOCK = re.compile(r"```(?:bash|mswea_bash_command)\s*\n(.*?)\n```", re.DOTALL)


def looks_like_mini_swe_agent(document: object) -> bool:
    if not isinstance(document, dict) or not isinstance(document.get("messages"), list):
        return False
    fmt = document.get("trajectory_format")
    if isinstance(fmt, str):
        return fmt.startswith("mini-swe-agent")
    info = document.get("info")
    return isinstance(info, dict) and "mini_version" in info


def import_file(path: Path) -> ImportedFile:
    return import_json_document(
        path,
        format_name=FORMAT_NAME,
        what="mini-swe-agent trajectory",
        accepts=looks_like_mini_swe_agent,
        needs="needs 'messages' and a 'trajectory_format' starting with mini-swe-agent",
        record=trajectory_record,
    )


def trajectory_record(path: Path, document: dict[str, Any]) -> dict[str, Any]:
    tools = ToolSteps()
    errors: list[str] = []
    awaiting_text_result: list[int] = []
    prompt = ""
    last_text = ""
    exit_extra: dict[str, Any] = {}
    for position, message in enumerate(document["messages"]):
        where = f"{path}: messages[{position}]"
        if not isinstance(message, dict):
            errors.append(f"{where}: not an object, skipped")
            continue
        role = message.get("role")
        extra = as_dict(message.get("extra"))
        if role == "assistant":
            last_text = text_of(message.get("content")) or last_text
            awaiting_text_result = _assistant_steps(message, extra, tools)
        elif role == "tool":
            call_id = message.get("tool_call_id")
            text = text_of(message.get("content"))
            if not tools.result(call_id, text, "completed", unknown_name="bash"):
                errors.append(f"{where}: tool result for unknown tool_call_id {call_id!r}")
        elif role == "user":
            text = text_of(message.get("content"))
            if awaiting_text_result:
                tools.fill(awaiting_text_result.pop(0), text, "completed")
            elif not prompt:
                prompt = text
        elif role == "exit":
            exit_extra = extra or {}
            last_text = text_of(message.get("content")) or last_text
    info = as_dict(document.get("info"))
    submission = _first_str(info.get("submission"), exit_extra.get("submission"))
    return make_record(
        name=path.name.removesuffix(".json").removesuffix(".traj"),
        input_text=prompt,
        output=submission if submission is not None else last_text,
        trajectory=tools.steps,
        source={
            "format": FORMAT_NAME,
            "path": str(path),
            "trajectory_format": document.get("trajectory_format"),
            # The model the agent was configured with (``info.config.model.model_name``).
            "model": as_dict(as_dict(info.get("config")).get("model")).get("model_name"),
            "exit_status": _first_str(info.get("exit_status"), exit_extra.get("exit_status")),
        },
        errors=errors,
    )


def _assistant_steps(message: dict[str, Any], extra: dict[str, Any], tools: ToolSteps) -> list[int]:
    """Add this message's commands as steps; return those whose result is a user message."""
    calls = message.get("tool_calls")
    if isinstance(calls, list) and calls:
        for call in calls:
            if isinstance(call, dict):
                tools.call(*call_name_and_args(call), call.get("id"))
        return []
    actions = extra.get("actions")
    commands: list[Any]
    if isinstance(actions, list) and actions:
        commands = actions
    else:
        commands = _CODE_BLOCK.findall(text_of(message.get("content")))
    return [
        tools.call("bash", action if isinstance(action, dict) else {"command": str(action)})
        for action in commands
    ]


def _first_str(*values: Any) -> str | None:
    for value in values:
        if isinstance(value, str):
            return value
    return None
