"""Fake model servers on 127.0.0.1 that script an agent CLI's session.

Two wire formats, each the one a real CLI speaks:

- :class:`FakeAnthropic`: the Anthropic Messages API (``POST /v1/messages``), answered
  as server-sent events (``message_start``, ``content_block_*``, ``message_delta``,
  ``message_stop``) or one JSON body when ``stream`` is false. Claude Code reaches it
  through ``ANTHROPIC_BASE_URL``.
- :class:`FakeResponses`: the OpenAI Responses API (``POST /v1/responses``) as SSE
  (``response.created``, ``response.output_item.added``/``done``,
  ``response.completed``). Codex reaches it through ``OPENAI_BASE_URL``.

A :class:`Script` is the session: shell commands, then a final answer. Which step a
request gets is read from the conversation it carries (how many tool results it holds),
never from a counter, so side requests (titles, quota checks) and retries do not shift
the script, and concurrent runs each follow their own conversation. A request whose
tools do not include the CLI's shell tool is a side request and gets a short text.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Self


@dataclass(frozen=True)
class Script:
    """Run each command with the CLI's shell tool, in order, then answer ``answer``."""

    commands: tuple[str, ...]
    answer: str = "Done."


ScriptFor = Callable[[str], Script]
"""Picks the session from the task prompt (the first user text of the conversation)."""


@dataclass
class _Served:
    paths: list[str] = field(default_factory=list)
    bodies: list[dict[str, Any]] = field(default_factory=list)


class _Server:
    """A threaded HTTP server whose POST bodies go to ``self.reply``."""

    def __init__(self, script_for: ScriptFor) -> None:
        self.script_for = script_for
        self.served = _Served()
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def do_GET(self) -> None:
                self._send(200, "application/json", b'{"data": []}')

            def do_HEAD(self) -> None:
                self._send(200, "application/json", b"")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length) if length else b""
                try:
                    body = json.loads(raw or b"{}")
                except ValueError:
                    self._send(400, "application/json", b'{"error": "bad json"}')
                    return
                with owner._lock:
                    owner.served.paths.append(self.path)
                    owner.served.bodies.append(body)
                status, kind, payload = owner.reply(self.path, body)
                self._send(status, kind, payload)

            def _send(self, status: int, kind: str, payload: bytes) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                if self.command != "HEAD":
                    self.wfile.write(payload)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    def start(self) -> Self:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=10)

    def reply(self, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
        raise NotImplementedError


def _sse(events: list[tuple[str, dict[str, Any]]]) -> bytes:
    return b"".join(
        f"event: {name}\ndata: {json.dumps(data)}\n\n".encode() for name, data in events
    )


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return ""


class FakeAnthropic(_Server):
    """``/v1/messages`` for Claude Code; the shell tool is ``Bash``."""

    SHELL_TOOL = "Bash"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def reply(self, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
        if not path.startswith("/v1/messages"):
            return 404, "application/json", b'{"error": "not found"}'
        if path.startswith("/v1/messages/count_tokens"):
            return 200, "application/json", b'{"input_tokens": 10}'
        messages = body.get("messages") or []
        tools = {t.get("name") for t in body.get("tools") or [] if isinstance(t, dict)}
        if self.SHELL_TOOL not in tools:
            block: dict[str, Any] = {"type": "text", "text": "ok"}
            stop = "end_turn"
        else:
            prompt = next(
                (_text_of(m.get("content")) for m in messages if m.get("role") == "user"), ""
            )
            script = self.script_for(prompt)
            step = sum(1 for m in messages if m.get("role") == "assistant")
            if step < len(script.commands):
                block = {
                    "type": "tool_use",
                    "id": f"toolu_{step:04d}",
                    "name": self.SHELL_TOOL,
                    "input": {"command": script.commands[step], "description": "step"},
                }
                stop = "tool_use"
            else:
                block = {"type": "text", "text": script.answer}
                stop = "end_turn"
        model = str(body.get("model") or "claude-fake")
        message: dict[str, Any] = {
            "id": f"msg_{len(self.served.bodies):06d}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        }
        if not body.get("stream"):
            whole = {**message, "content": [block], "stop_reason": stop}
            return 200, "application/json", json.dumps(whole).encode()
        if block["type"] == "tool_use":
            start = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        else:
            start = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        events: list[tuple[str, dict[str, Any]]] = [
            ("message_start", {"type": "message_start", "message": message}),
            (
                "content_block_start",
                {"type": "content_block_start", "index": 0, "content_block": start},
            ),
            ("content_block_delta", {"type": "content_block_delta", "index": 0, "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": 0}),
            (
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": stop, "stop_sequence": None},
                    "usage": {"output_tokens": 5},
                },
            ),
            ("message_stop", {"type": "message_stop"}),
        ]
        return 200, "text/event-stream", _sse(events)


# Codex's shell tools and how each takes its command, most preferred first: which
# ones a request offers depends on the Codex version and its model family.
_CODEX_SHELL_TOOLS: tuple[tuple[str, Callable[[str], dict[str, Any]]], ...] = (
    ("exec_command", lambda command: {"cmd": command}),
    ("shell_command", lambda command: {"command": command}),
    ("shell", lambda command: {"command": ["bash", "-lc", command]}),
)


def _tool_names(body: dict[str, Any]) -> set[str]:
    names = set()
    for tool in body.get("tools") or []:
        if isinstance(tool, dict):
            name = tool.get("name") or (tool.get("function") or {}).get("name")
            if isinstance(name, str):
                names.add(name)
    return names


class FakeResponses(_Server):
    """``/v1/responses`` for Codex; the shell tool is whichever the request offers."""

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def reply(self, path: str, body: dict[str, Any]) -> tuple[int, str, bytes]:
        if not path.startswith("/v1/responses"):
            return 404, "application/json", b'{"error": "not found"}'
        items = [i for i in body.get("input") or [] if isinstance(i, dict)]
        offered = _tool_names(body)
        shell = next(((n, a) for n, a in _CODEX_SHELL_TOOLS if n in offered), None)
        number = len(self.served.bodies)
        if shell is None:
            item: dict[str, Any] = _message(f"msg_{number}", "ok")
        else:
            prompt = _codex_prompt(items)
            script = self.script_for(prompt)
            step = sum(1 for i in items if i.get("type") == "function_call_output")
            if step < len(script.commands):
                name, make_args = shell
                item = {
                    "type": "function_call",
                    "id": f"fc_{number}",
                    "call_id": f"call_{step:04d}",
                    "name": name,
                    "arguments": json.dumps(make_args(script.commands[step])),
                    "status": "completed",
                }
            else:
                item = _message(f"msg_{number}", script.answer)
        response_id = f"resp_{number:06d}"
        usage = {
            "input_tokens": 10,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": 5,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": 15,
        }
        base = {"id": response_id, "object": "response", "model": body.get("model", "")}
        events: list[tuple[str, dict[str, Any]]] = [
            (
                "response.created",
                {
                    "type": "response.created",
                    "response": {**base, "status": "in_progress", "output": []},
                },
            ),
            (
                "response.output_item.added",
                {"type": "response.output_item.added", "output_index": 0, "item": item},
            ),
            (
                "response.output_item.done",
                {"type": "response.output_item.done", "output_index": 0, "item": item},
            ),
            (
                "response.completed",
                {
                    "type": "response.completed",
                    "response": {**base, "status": "completed", "output": [item], "usage": usage},
                },
            ),
        ]
        return 200, "text/event-stream", _sse(events)


def _message(item_id: str, text: str) -> dict[str, Any]:
    return {
        "type": "message",
        "id": item_id,
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }


def _codex_prompt(items: list[dict[str, Any]]) -> str:
    """The task prompt: the last user message before any tool call (Codex sends its
    environment context and instructions as earlier user messages)."""
    prompt = ""
    for item in items:
        if item.get("type") == "function_call":
            break
        if item.get("role") == "user":
            prompt = _text_of(item.get("content"))
    return prompt
