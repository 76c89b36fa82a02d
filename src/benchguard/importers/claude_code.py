"""Claude Code headless transcripts (``claude -p --output-format stream-json --verbose``).

One JSON object per line, keyed by ``type``:

- ``system`` (``subtype: init`` carries ``session_id``, ``model``, ``cwd``, ``tools``);
- ``assistant``: ``message.content`` blocks; ``tool_use`` blocks carry ``id``, ``name``
  and ``input`` (the typed arguments);
- ``user``: ``message.content`` holds ``tool_result`` blocks matched to their call by
  ``tool_use_id``; their ``content`` is a string or a list of text blocks, ``is_error``
  marks a failed call; a plain user text is the prompt;
- ``result``: the final line, ``result`` is the answer, ``is_error``/``subtype`` the end
  state.

``stream_event`` lines (partial deltas with ``--include-partial-messages``) repeat what
the aggregate lines carry and are skipped.

Saved session files (``$CLAUDE_CONFIG_DIR/projects/<cwd>/<session>.jsonl``, 2.1.x) use
the same ``user``/``assistant`` lines (keyed ``sessionId`` rather than ``session_id``)
among bookkeeping lines (``queue-operation``, ``attachment``, ``api-request``,
``last-prompt``, ``cost-state`` ...), which are skipped; they have no ``result`` line.
Any other type is counted and reported once per type, never dropped silently.
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
    text_of,
)

FORMAT_NAME = "claude-code"
_KNOWN_TYPES = frozenset({"system", "assistant", "user", "result", "stream_event"})
# Bookkeeping lines of saved session files (2.1.x): no tool call or result in them.
SESSION_BOOKKEEPING_TYPES = frozenset(
    {
        "queue-operation",
        "attachment",
        "atis-latch",
        "api-request-shape",
        "api-request-blob",
        "api-request",
        "tools-used",
        "last-prompt",
        "cost-state",
        "summary",
        "file-history-snapshot",
        "custom-title",
    }
)


def parse_stream_json(lines: Iterable[str]) -> ParsedTranscript:
    """Read a stream-json transcript; bad lines go to ``errors`` (1-based line numbers)."""
    state = _State()
    for line in json_lines(lines):
        number, event = line.number, line.value
        if line.error is not None:
            state.unread_line(f"line {number}: {line.error}")
            continue
        if not isinstance(event, dict):
            state.unread_line(f"line {number}: expected a JSON object, got {_kind(event)}")
            continue
        kind = event.get("type")
        if "sessionId" in event:
            state.session_file = True
        if kind in SESSION_BOOKKEEPING_TYPES:
            continue
        if kind not in _KNOWN_TYPES:
            state.unknown[str(kind)] += 1
            state.first_unknown.setdefault(str(kind), number)
            continue
        state.take(number, kind, event)
    return state.finish()


def is_session_line(event: object) -> bool:
    """Content sniff: a line of a saved session file (camel-case ``sessionId``)."""
    return (
        isinstance(event, dict)
        and isinstance(event.get("sessionId"), str)
        and (event.get("type") in _KNOWN_TYPES or event.get("type") in SESSION_BOOKKEEPING_TYPES)
    )


def is_stream_json_event(event: object) -> bool:
    """Content sniff on one decoded line: a stream-json event, by its ``type`` and the
    keys every such event carries one of."""
    return (
        isinstance(event, dict)
        and event.get("type") in _KNOWN_TYPES
        and ("session_id" in event or "message" in event or "subtype" in event)
    )


def import_file(path: Path) -> ImportedFile:
    """One record per transcript file; unreadable lines are kept in ``import_errors`` and
    reported as skipped input (``problems``), so the scan does not call the rest clean."""
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            parsed = parse_stream_json(handle)
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc
    record = make_record(
        name=str(parsed.metadata.get("session_id") or path.stem),
        input_text=parsed.input,
        output=parsed.output,
        trajectory=parsed.trajectory,
        source={"format": FORMAT_NAME, "path": str(path), **parsed.metadata},
        errors=[f"{path}: {e}" for e in parsed.errors],
    )
    problems = [f"{path}: {e}; skipped" for e in parsed.unread]
    return ImportedFile(path=path, format=FORMAT_NAME, records=[record], problems=problems)


def _kind(value: object) -> str:
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return type(value).__name__


class _State:
    """Accumulates one transcript; steps are appended in call order, results filled later."""

    def __init__(self) -> None:
        self.tools = ToolSteps()
        self.errors: list[str] = []
        self.unread: list[str] = []
        self.prompt_parts: list[str] = []
        self.last_assistant_text = ""
        self.final: str | None = None
        self.metadata: dict[str, Any] = {}
        self.session_file = False
        self.unknown: Counter[str] = Counter()
        self.first_unknown: dict[str, int] = {}

    def unread_line(self, message: str) -> None:
        """A line whose content is lost: an error of the record, and skipped input of the file."""
        self.errors.append(message)
        self.unread.append(message)

    def take(self, number: int, kind: str, event: dict[str, Any]) -> None:
        if kind == "system":
            if event.get("subtype") == "init":
                for key in ("session_id", "model", "cwd"):
                    if isinstance(event.get(key), str):
                        self.metadata[key] = event[key]
        elif kind == "assistant":
            self._assistant(number, event)
        elif kind == "user":
            self._user(number, event)
        elif kind == "result":
            self._result(number, event)

    def _content(self, number: int, event: dict[str, Any]) -> list[Any] | None:
        message = event.get("message")
        if not isinstance(message, dict):
            self.errors.append(f"line {number}: {event.get('type')} line has no message object")
            return None
        content = message.get("content")
        if isinstance(content, str):
            return [{"type": "text", "text": content}]
        if not isinstance(content, list):
            self.errors.append(f"line {number}: message.content is neither a string nor a list")
            return None
        return content

    def _assistant(self, number: int, event: dict[str, Any]) -> None:
        content = self._content(number, event)
        if content is None:
            return
        texts: list[str] = []
        for block in content:
            if not isinstance(block, dict):
                continue
            if block.get("type") == "tool_use":
                self.tools.call(
                    str(block.get("name") or "unknown"), block.get("input"), block.get("id")
                )
            elif block.get("type") == "text":
                texts.append(str(block.get("text", "")))
        if texts:
            self.last_assistant_text = "\n".join(texts)

    def _user(self, number: int, event: dict[str, Any]) -> None:
        content = self._content(number, event)
        if content is None:
            return
        for block in content:
            if isinstance(block, dict) and block.get("type") == "tool_result":
                self._tool_result(number, block)
            elif isinstance(block, dict) and block.get("type") == "text":
                self.prompt_parts.append(str(block.get("text", "")))
            elif isinstance(block, str):
                self.prompt_parts.append(block)

    def _tool_result(self, number: int, block: dict[str, Any]) -> None:
        call_id = block.get("tool_use_id")
        text = text_of(block.get("content"))
        status: StepStatus = "error" if block.get("is_error") is True else "completed"
        if not self.tools.result(call_id, text, status, unknown_name="unknown"):
            self.errors.append(f"line {number}: tool_result for unknown tool_use_id {call_id!r}")

    def _result(self, number: int, event: dict[str, Any]) -> None:
        answer = event.get("result")
        if answer is not None and not isinstance(answer, str):
            self.errors.append(f"line {number}: result.result is not a string")
            answer = json.dumps(answer, sort_keys=True, default=str)
        self.final = answer if answer is not None else ""
        for key in ("subtype", "is_error", "num_turns", "session_id"):
            if key in event and isinstance(event[key], str | bool | int):
                self.metadata[key] = event[key]

    def finish(self) -> ParsedTranscript:
        if self.final is None and not self.session_file:
            self.errors.append("no final result line: the transcript may be truncated")
        self.errors += [
            f"line {self.first_unknown[kind]}: unknown type {kind!r} not read "
            f"({count} line(s) of it in all)"
            for kind, count in sorted(self.unknown.items())
        ]
        return ParsedTranscript(
            trajectory=self.tools.steps,
            output=self.final if self.final is not None else self.last_assistant_text,
            input="\n".join(p for p in self.prompt_parts if p),
            errors=self.errors,
            unread=self.unread,
            metadata=self.metadata,
        )
