"""OpenAI Codex CLI logs: ``codex exec --json`` output and session rollout files.

Two JSON-lines shapes, both written by Codex 0.171 (checked against its own output):

- **exec events** (``codex exec --json`` on stdout): ``{"type": ...}`` lines.
  ``thread.started`` carries ``thread_id``; ``item.started``/``item.updated``/
  ``item.completed`` carry an ``item`` whose ``type`` is ``command_execution``
  (``command``, ``aggregated_output``, ``exit_code``), ``file_change`` (``changes``),
  ``mcp_tool_call`` (``server``, ``tool``, ``arguments``, ``result``), ``web_search``
  (``query``), ``agent_message`` (``text``: the last one is the answer), ``reasoning``,
  ``todo_list`` or ``error``; ``turn.*`` and ``error`` lines frame the run.
- **rollout files** (``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl``): ``{"timestamp",
  "type", "payload"}`` lines. ``response_item`` payloads are the model conversation:
  ``message`` (role ``user``/``assistant``/``developer``), ``function_call`` (``name``
  such as ``exec_command``, JSON ``arguments``, ``call_id``), ``function_call_output``,
  ``custom_tool_call`` (``input``) and its output, ``local_shell_call``,
  ``web_search_call``, ``reasoning``. The rollout records every tool call with its
  arguments as the model wrote them; the exec stream can leave some out, so the harness
  reads the rollout first.

Types this module does not know are counted and reported on the record (one line per
type), never dropped silently: a newer Codex may carry a tool call in one.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from benchguard.importers.chat import ToolSteps
from benchguard.importers.transcript import (
    ImportedFile,
    ParsedTranscript,
    StepStatus,
    UnreadableLogError,
    json_lines,
    make_record,
    make_step,
    text_of,
)

FORMAT_NAME = "codex"
EXEC_EVENT_TYPES = frozenset(
    {
        "thread.started",
        "turn.started",
        "turn.completed",
        "turn.failed",
        "item.started",
        "item.updated",
        "item.completed",
        "error",
    }
)
EXEC_ITEM_TYPES = frozenset(
    {
        "command_execution",
        "file_change",
        "mcp_tool_call",
        "web_search",
        "agent_message",
        "reasoning",
        "todo_list",
        "error",
    }
)
ROLLOUT_LINE_TYPES = frozenset(
    {
        "session_meta",
        "response_item",
        "event_msg",
        "turn_context",
        "world_state",
        "token_usage_record",
        "compacted",
    }
)
# Rollout payloads that are the conversation; event_msg and the rest repeat or frame it.
ROLLOUT_ITEM_TYPES = frozenset(
    {
        "message",
        "function_call",
        "function_call_output",
        "custom_tool_call",
        "custom_tool_call_output",
        "local_shell_call",
        "local_shell_call_output",
        "web_search_call",
        "reasoning",
    }
)
# Codex wraps its own context in tagged user messages; the task prompt is not tagged.
_CONTEXT_PREFIXES = ("<environment_context>", "<user_instructions>", "<skills_instructions>")


def is_exec_event(document: object) -> bool:
    """One decoded line of ``codex exec --json`` output."""
    return (
        isinstance(document, dict)
        and document.get("type") in EXEC_EVENT_TYPES
        and (
            "thread_id" in document
            or isinstance(document.get("item"), dict)
            or document.get("type") in ("turn.started", "turn.completed", "turn.failed")
        )
    )


def is_rollout_line(document: object) -> bool:
    """One decoded line of a Codex session rollout file."""
    return (
        isinstance(document, dict)
        and document.get("type") in ROLLOUT_LINE_TYPES
        and isinstance(document.get("payload"), dict)
        and "timestamp" in document
    )


class _Unknown:
    """Counts what was not understood, by kind, and reports each kind once."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter()
        self.first_line: dict[str, int] = {}

    def add(self, kind: str, number: int) -> None:
        self.counts[kind] += 1
        self.first_line.setdefault(kind, number)

    def errors(self) -> list[str]:
        return [
            f"line {self.first_line[kind]}: unknown {kind} not read ({count} line(s) of it in all)"
            for kind, count in sorted(self.counts.items())
        ]


def _unreadable(message: str, errors: list[str], unread: list[str]) -> None:
    """A line whose content is lost: an error of the record, and skipped input of the file."""
    errors.append(message)
    unread.append(message)


def parse_exec_json(lines: Iterable[str]) -> ParsedTranscript:
    """Read ``codex exec --json`` output; bad and unknown lines go to ``errors``."""
    steps: dict[str, int] = {}
    tools = ToolSteps()
    unknown = _Unknown()
    errors: list[str] = []
    unread: list[str] = []
    answer = ""
    metadata: dict[str, Any] = {}
    completed = False
    for line in json_lines(lines):
        number, event = line.number, line.value
        if line.error is not None:
            _unreadable(f"line {number}: {line.error}", errors, unread)
            continue
        if not isinstance(event, dict):
            _unreadable(f"line {number}: expected a JSON object", errors, unread)
            continue
        kind = event.get("type")
        if kind not in EXEC_EVENT_TYPES:
            unknown.add(f"event type {kind!r}", number)
            continue
        if kind == "thread.started" and isinstance(event.get("thread_id"), str):
            metadata["thread_id"] = event["thread_id"]
        elif kind == "turn.completed":
            completed = True
        elif kind == "turn.failed":
            errors.append(f"line {number}: turn failed: {text_of(event.get('error'))}")
        elif kind.startswith("item."):
            item = event.get("item")
            if not isinstance(item, dict):
                errors.append(f"line {number}: {kind} has no item object")
                continue
            item_type = item.get("type")
            if item_type not in EXEC_ITEM_TYPES:
                unknown.add(f"item type {item_type!r}", number)
                continue
            if item_type == "agent_message" and kind == "item.completed":
                answer = str(item.get("text", ""))
            elif item_type in _EXEC_TOOL_ITEMS:
                _exec_tool_item(tools, steps, item, done=kind == "item.completed")
    if not completed:
        errors.append("no turn.completed line: the run may have been cut short")
    return ParsedTranscript(
        trajectory=tools.steps,
        output=answer,
        errors=errors + unknown.errors(),
        unread=unread,
        metadata=metadata,
    )


def _command_item(item: dict[str, Any]) -> tuple[str, dict[str, Any], str | None, StepStatus]:
    exit_code = item.get("exit_code")
    status: StepStatus = (
        "called" if exit_code is None else ("completed" if exit_code == 0 else "error")
    )
    return (
        "exec_command",
        {"cmd": item.get("command")},
        _opt_text(item.get("aggregated_output")),
        status,
    )


def _file_change_item(item: dict[str, Any]) -> tuple[str, dict[str, Any], str | None, StepStatus]:
    status: StepStatus = "error" if item.get("status") == "failed" else "completed"
    return "apply_patch", {"changes": item.get("changes")}, None, status


def _mcp_item(item: dict[str, Any]) -> tuple[str, dict[str, Any], str | None, StepStatus]:
    name = f"{item.get('server', 'mcp')}.{item.get('tool', 'unknown')}"
    result = item.get("result") if item.get("result") is not None else item.get("error")
    status: StepStatus = "error" if item.get("status") == "failed" else "completed"
    return name, {"arguments": item.get("arguments")}, _opt_text(result), status


def _search_item(item: dict[str, Any]) -> tuple[str, dict[str, Any], str | None, StepStatus]:
    return "web_search", {"query": item.get("query")}, None, "completed"


_EXEC_TOOL_ITEMS = {
    "command_execution": _command_item,
    "file_change": _file_change_item,
    "mcp_tool_call": _mcp_item,
    "web_search": _search_item,
}


def _exec_tool_item(
    tools: ToolSteps, steps: dict[str, int], item: dict[str, Any], *, done: bool
) -> None:
    """One step per item id: started adds it, completed fills in its result."""
    name, args, result, status = _EXEC_TOOL_ITEMS[str(item["type"])](item)
    if not done and status != "error":
        status = "called"
    item_id = str(item.get("id", ""))
    index = steps.get(item_id)
    if index is None:
        steps[item_id] = len(tools.steps)
        tools.steps.append(make_step(name, args, result, status))
    else:
        tools.steps[index] = make_step(name, args, result, status)


def _opt_text(value: Any) -> str | None:
    if value is None:
        return None
    return value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)


def parse_rollout(lines: Iterable[str]) -> ParsedTranscript:
    """Read a session rollout file; bad and unknown lines go to ``errors``."""
    tools = ToolSteps()
    unknown = _Unknown()
    errors: list[str] = []
    unread: list[str] = []
    prompts: list[str] = []
    answer = ""
    metadata: dict[str, Any] = {}
    completed = False
    for line in json_lines(lines):
        number, entry = line.number, line.value
        if line.error is not None:
            _unreadable(f"line {number}: {line.error}", errors, unread)
            continue
        if not isinstance(entry, dict) or not isinstance(entry.get("payload"), dict):
            _unreadable(f"line {number}: expected an object with a payload object", errors, unread)
            continue
        kind, payload = entry.get("type"), entry["payload"]
        if kind not in ROLLOUT_LINE_TYPES:
            unknown.add(f"line type {kind!r}", number)
        elif kind == "session_meta":
            for key in ("id", "cwd", "cli_version", "model_provider"):
                if isinstance(payload.get(key), str):
                    metadata["session_id" if key == "id" else key] = payload[key]
        elif kind == "event_msg" and payload.get("type") == "task_complete":
            completed = True
            if isinstance(payload.get("last_agent_message"), str) and not answer:
                answer = payload["last_agent_message"]
        elif kind == "response_item":
            item_type = payload.get("type")
            if item_type not in ROLLOUT_ITEM_TYPES:
                unknown.add(f"response item type {item_type!r}", number)
                continue
            text = _rollout_item(tools, payload, number, errors)
            if text is not None:
                role, content = text
                if role == "user" and not content.lstrip().startswith(_CONTEXT_PREFIXES):
                    prompts.append(content)
                elif role == "assistant" and content:
                    answer = content
    if not completed:
        errors.append("no task_complete event: the session may have been cut short")
    return ParsedTranscript(
        trajectory=tools.steps,
        output=answer,
        input="\n".join(p for p in prompts if p),
        errors=errors + unknown.errors(),
        unread=unread,
        metadata=metadata,
    )


def _rollout_item(
    tools: ToolSteps, payload: dict[str, Any], number: int, errors: list[str]
) -> tuple[str, str] | None:
    """Take one conversation item; a message is returned as ``(role, text)``."""
    item_type = payload["type"]
    if item_type == "message":
        return str(payload.get("role", "")), text_of(payload.get("content"))
    if item_type == "function_call":
        tools.call(
            str(payload.get("name") or "unknown"), payload.get("arguments"), payload.get("call_id")
        )
    elif item_type == "custom_tool_call":
        tools.call(
            str(payload.get("name") or "unknown"),
            {"input": payload.get("input")},
            payload.get("call_id"),
        )
    elif item_type == "local_shell_call":
        tools.call("local_shell", payload.get("action"), payload.get("call_id"))
    elif item_type == "web_search_call":
        tools.call("web_search", payload.get("action"), payload.get("id"))
    elif item_type.endswith("_output"):
        output = payload.get("output")
        text = text_of(output) if not isinstance(output, dict) else text_of(output.get("content"))
        status: StepStatus = (
            "error" if isinstance(output, dict) and output.get("success") is False else "completed"
        )
        if not tools.result(payload.get("call_id"), text, status, unknown_name="unknown"):
            errors.append(
                f"line {number}: {item_type} for unknown call_id {payload.get('call_id')!r}"
            )
    return None


def parse_lines(lines: list[str]) -> ParsedTranscript:
    """Either shape, told apart by the first line that decodes to an object."""
    for line in json_lines(lines):
        if is_rollout_line(line.value):
            return parse_rollout(lines)
        if isinstance(line.value, dict):
            break
    return parse_exec_json(lines)


def import_file(path: Path) -> ImportedFile:
    """One record per file (an exec stream or a rollout), bad lines kept as errors."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            lines = handle.readlines()
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc
    parsed = parse_lines(lines)
    name = parsed.metadata.get("session_id") or parsed.metadata.get("thread_id") or path.stem
    record = make_record(
        name=str(name),
        input_text=parsed.input,
        output=parsed.output,
        trajectory=parsed.trajectory,
        source={"format": FORMAT_NAME, "path": str(path), **parsed.metadata},
        errors=[f"{path}: {e}" for e in parsed.errors],
    )
    problems = [f"{path}: {e}; skipped" for e in parsed.unread]
    return ImportedFile(path=path, format=FORMAT_NAME, records=[record], problems=problems)
