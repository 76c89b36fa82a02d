"""A scripted OpenAI-compatible chat server on 127.0.0.1, for producing real logs offline.

Each conversation gets the scripted shell commands in turn: while a request's messages
hold fewer tool results than there are commands, the reply calls the request's first
tool with the next command (under the tool's first required parameter, ``command`` by
default); after the last command the reply is ``final``. A request without tools gets
the command in a fenced ``bash`` block (text-based agents). Streaming (SSE chunks, then
a usage chunk, then ``[DONE]``) and plain JSON replies are both served.

Used only by the fixture generators beside it; it never leaves 127.0.0.1.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


class FakeOpenAI:
    def __init__(self, commands: Sequence[str], final: str) -> None:
        self.commands = list(commands)
        self.final = final
        self.requests: list[dict[str, Any]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = json.loads(self.rfile.read(length) or b"{}")
                server.requests.append(body)
                message = server.reply(body)
                if body.get("stream"):
                    self._stream(body, message)
                else:
                    self._json(body, message)

            def do_GET(self) -> None:
                self._send(
                    200, {"object": "list", "data": [{"id": "fake-model", "object": "model"}]}
                )

            def log_message(self, *_: Any) -> None:
                return

            def _json(self, body: dict[str, Any], message: dict[str, Any]) -> None:
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                self._send(
                    200,
                    {
                        "id": "chatcmpl-fake",
                        "object": "chat.completion",
                        "created": int(time.time()),
                        "model": body.get("model", "fake-model"),
                        "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                    },
                )

            def _stream(self, body: dict[str, Any], message: dict[str, Any]) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                base = {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion.chunk",
                    "created": int(time.time()),
                    "model": body.get("model", "fake-model"),
                }
                delta: dict[str, Any] = {
                    "role": "assistant",
                    "content": message.get("content") or "",
                }
                if message.get("tool_calls"):
                    delta["tool_calls"] = [
                        {**call, "index": i} for i, call in enumerate(message["tool_calls"])
                    ]
                finish = "tool_calls" if message.get("tool_calls") else "stop"
                for chunk in (
                    {**base, "choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
                    {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}]},
                    {
                        **base,
                        "choices": [],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                    },
                ):
                    self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.write(b"data: [DONE]\n\n")

            def _send(self, code: int, payload: dict[str, Any]) -> None:
                data = json.dumps(payload).encode()
                self.send_response(code)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._httpd.server_address[1]}/v1"

    def __enter__(self) -> FakeOpenAI:
        self._thread.start()
        return self

    def __exit__(self, *_: object) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()

    def reply(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages") or []
        done = sum(1 for m in messages if m.get("role") == "tool")
        tools = body.get("tools") or []
        if not tools:
            # Text-based agents: count the observations (user turns after the first).
            done = max(0, sum(1 for m in messages if m.get("role") == "user") - 1)
        if done >= len(self.commands):
            return {"role": "assistant", "content": self.final}
        command = self.commands[done]
        if not tools:
            return {"role": "assistant", "content": f"Next step.\n\n```bash\n{command}\n```"}
        function = tools[0].get("function", {})
        params = function.get("parameters", {})
        key = (params.get("required") or list(params.get("properties") or {}) or ["command"])[0]
        return {
            "role": "assistant",
            "content": "",
            "tool_calls": [
                {
                    "id": f"call_{done}",
                    "type": "function",
                    "function": {
                        "name": function.get("name", "bash"),
                        "arguments": json.dumps({key: command}),
                    },
                }
            ],
        }
