"""The first model request a sandboxed agent sent through the model proxy, read for
its first user message (``prompt_delivery.model_request``).

The proxy relays bytes; this tap copies the first connection's client-to-model bytes,
up to a bound, and reads them as one HTTP/1.1 request: a request line, headers, and a
body of ``Content-Length`` bytes or chunked. The body must be JSON with a ``messages``
list (OpenAI chat completions, Anthropic messages); the first message whose ``role``
is ``user`` is the one the agent asked about, its ``content`` a string or a list of
parts whose ``text`` fields are joined. Anything else (TLS, HTTP/2, another API, a
request past the bound) leaves the message unknown, with the reason, never a guess.
"""

from __future__ import annotations

import json
import threading
from typing import Any

MAX_REQUEST_BYTES = 4 * 1024 * 1024
MAX_HEADER_BYTES = 64 * 1024


class RequestTap:
    """Fed the first request's bytes as they pass; reads the user message once whole."""

    def __init__(self) -> None:
        self._buffer = bytearray()
        self._lock = threading.Lock()
        self._done = False
        self.user_message: str | None = None
        # Why no message was read ("" while none was tried: no request passed).
        self.note = ""

    def feed(self, data: bytes) -> bool:
        """Take the next bytes; False once the tap needs no more."""
        with self._lock:
            if self._done:
                return False
            self._buffer += data
            outcome = _read(bytes(self._buffer))
            if outcome is None and len(self._buffer) <= MAX_REQUEST_BYTES:
                return True
            self._done = True
            if outcome is None:
                self.note = f"the first request is over {MAX_REQUEST_BYTES} bytes: not read"
            elif isinstance(outcome, tuple):
                self.user_message = outcome[0]
            else:
                self.note = outcome
            self._buffer.clear()
            return False

    def finish(self) -> None:
        """The connection ended: a request still incomplete is noted as such."""
        with self._lock:
            if not self._done and self._buffer:
                self.note = "the first request ended before its body was complete"
            self._done = True
            self._buffer.clear()


def _read(data: bytes) -> tuple[str] | str | None:
    """(message,) when read; a reason when it cannot be; None while incomplete."""
    if data[:1] == b"\x16":
        return "the model traffic is TLS: the proxy cannot read it"
    end = data.find(b"\r\n\r\n")
    if end < 0:
        return "the first request's headers are too long" if len(data) > MAX_HEADER_BYTES else None
    head = data[:end].decode("latin-1").split("\r\n")
    parts = head[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        return "the first request is not HTTP/1.x"
    headers: dict[str, str] = {}
    for line in head[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    body = data[end + 4 :]
    if "chunked" in headers.get("transfer-encoding", "").lower():
        decoded = _dechunk(body)
        if decoded is None:
            return None
        body = decoded
    else:
        try:
            length = int(headers.get("content-length", ""))
        except ValueError:
            return "the first request has no Content-Length"
        if len(body) < length:
            return None
        body = body[:length]
    if headers.get("content-encoding", "identity").lower() not in ("", "identity"):
        return "the first request's body is compressed: not read"
    try:
        document = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        return "the first request's body is not JSON"
    message = _first_user_message(document)
    if message is None:
        return "the first request has no user message in a messages list"
    return (message,)


def _dechunk(body: bytes) -> bytes | None:
    out = bytearray()
    at = 0
    while True:
        line_end = body.find(b"\r\n", at)
        if line_end < 0:
            return None
        try:
            size = int(body[at:line_end].split(b";")[0], 16)
        except ValueError:
            return b""  # malformed: an empty body, read as "not JSON"
        if size == 0:
            return bytes(out)
        start = line_end + 2
        if len(body) < start + size + 2:
            return None
        out += body[start : start + size]
        at = start + size + 2


def _first_user_message(document: Any) -> str | None:
    messages = document.get("messages") if isinstance(document, dict) else None
    if not isinstance(messages, list):
        return None
    for message in messages:
        if not isinstance(message, dict) or message.get("role") != "user":
            continue
        content = message.get("content")
        if isinstance(content, str):
            return content
        if isinstance(content, list):
            texts = [
                part["text"]
                for part in content
                if isinstance(part, dict) and isinstance(part.get("text"), str)
            ]
            return "".join(texts) if texts else None
        return None
    return None
