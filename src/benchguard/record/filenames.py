"""File names as the kernel gives them: bytes, carried losslessly, shown with escapes.

A file name on Linux is any byte string without ``/`` or NUL; it need not be UTF-8.
:class:`FileName` holds the bytes and has one text form, used for display and for
storage alike: valid UTF-8 stays as it is, every byte that is not part of valid UTF-8
becomes ``\\xNN`` and a backslash becomes ``\\\\``, so the text is plain printable JSON
and :meth:`FileName.parse` gives back the very bytes. Control characters are escaped
the same way (``\\x0a`` for a newline in a name), so a name can never forge a line.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any

_ESCAPE = re.compile(r"\\(\\|x[0-9a-f]{2})")


@dataclass(frozen=True, order=True)
class FileName:
    """One file name or relative path, as bytes."""

    raw: bytes

    @classmethod
    def from_bytes(cls, raw: bytes) -> FileName:
        return cls(bytes(raw))

    @classmethod
    def from_os(cls, name: str | bytes) -> FileName:
        """From an ``os`` API result (a str decoded with surrogateescape, or bytes)."""
        return cls(os.fsencode(name))

    @classmethod
    def parse(cls, text: str) -> FileName:
        """The inverse of :attr:`text`; ``ValueError`` for a malformed escape."""
        out = bytearray()
        position = 0
        for match in _ESCAPE.finditer(text):
            out += text[position : match.start()].encode("utf-8")
            token = match.group(1)
            out += b"\\" if token == "\\" else bytes([int(token[1:], 16)])
            position = match.end()
        rest = text[position:]
        if "\\" in rest:
            raise ValueError(f"malformed escape in file name {text!r}")
        out += rest.encode("utf-8")
        return cls(bytes(out))

    @property
    def text(self) -> str:
        """The escaped text form (display and storage; see the module doc)."""
        parts: list[str] = []
        decoded = self.raw.decode("utf-8", errors="surrogateescape")
        for char in decoded:
            code = ord(char)
            if 0xDC80 <= code <= 0xDCFF:
                parts.append(f"\\x{code - 0xDC00:02x}")
            elif char == "\\":
                parts.append("\\\\")
            elif code < 0x20 or code == 0x7F:
                parts.append(f"\\x{code:02x}")
            else:
                parts.append(char)
        return "".join(parts)

    def to_json(self) -> str:
        return self.text

    def os_path(self) -> bytes:
        return self.raw

    def __str__(self) -> str:
        return self.text


_SURROGATE = re.compile("[\udc80-\udcff]")


def escape_surrogates(value: Any) -> Any:
    """``value`` (JSON-shaped) with every lone surrogate (an undecodable byte carried by
    ``surrogateescape``) written as ``\\xNN``, so it encodes as UTF-8."""
    if isinstance(value, str):
        return _SURROGATE.sub(lambda m: f"\\x{ord(m.group(0)) - 0xDC00:02x}", value)
    if isinstance(value, dict):
        return {escape_surrogates(k): escape_surrogates(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [escape_surrogates(v) for v in value]
    return value
