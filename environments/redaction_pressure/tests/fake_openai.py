"""A tiny OpenAI-compatible chat server on 127.0.0.1 for end-to-end runs.

It answers every chat completion with the reply a callback picks for the request's
last user message, streamed as SSE chunks (what the null harness asks for) or as one
JSON body. It runs its own event loop in a daemon thread and is stopped explicitly.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Callable
from typing import Any

from aiohttp import web


def _user_text(body: dict[str, Any]) -> str:
    for message in reversed(body.get("messages", [])):
        if message.get("role") == "user":
            content = message.get("content")
            if isinstance(content, list):
                return "".join(part.get("text", "") for part in content if isinstance(part, dict))
            return str(content or "")
    return ""


class FakeChatServer:
    """Serve ``answer(user_text) -> reply`` at ``http://127.0.0.1:{port}/v1``."""

    def __init__(self, answer: Callable[[str], str]) -> None:
        self._answer = answer
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.port = 0
        self.requests: list[dict[str, Any]] = []

    def start(self) -> FakeChatServer:
        self._thread.start()
        asyncio.run_coroutine_threadsafe(self._start(), self._loop).result(timeout=30)
        return self

    def stop(self) -> None:
        if self._runner is not None:
            asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(timeout=30)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=30)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    async def _start(self) -> None:
        app = web.Application(client_max_size=16 * 1024 * 1024)
        app.router.add_post("/v1/chat/completions", self._chat)
        self._runner = web.AppRunner(app)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        reply = self._answer(_user_text(body))
        model = body.get("model", "fake-model")
        created = int(time.time())
        usage = {"prompt_tokens": 100, "completion_tokens": 50, "total_tokens": 150}
        if not body.get("stream"):
            return web.json_response(
                {
                    "id": "chatcmpl-fake",
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": usage,
                }
            )
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)

        async def send(choices: list[dict[str, Any]], extra: dict[str, Any] | None = None) -> None:
            chunk = {
                "id": "chatcmpl-fake",
                "object": "chat.completion.chunk",
                "created": created,
                "model": model,
                "choices": choices,
                **(extra or {}),
            }
            await response.write(f"data: {json.dumps(chunk)}\n\n".encode())

        await send([{"index": 0, "delta": {"role": "assistant", "content": reply}}])
        await send([{"index": 0, "delta": {}, "finish_reason": "stop"}])
        await send([], {"usage": usage})
        await response.write(b"data: [DONE]\n\n")
        await response.write_eof()
        return response
