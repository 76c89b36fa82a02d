"""Where in a log file a finding's text sits, as a 1-based line, within bounds.

A finding carries an excerpt of the scanned surface (whitespace collapsed), not a file
offset: importers turn a log into records and keep no positions. The longest
whitespace-free stretch of the excerpt is searched for in the file's text, both as it
is and as JSON would escape it. The file is read once per output and only when it is
plain text under :data:`MAX_LOCATE_BYTES`; a zip (an Inspect ``.eval``) or a larger
file gets the record's own line, or line 1. The line is a pointer for a reviewer, never
evidence: the verdict does not depend on it.
"""

from __future__ import annotations

import json
from pathlib import Path

# Larger files are not read again just to place findings on a line.
MAX_LOCATE_BYTES = 32 * 1024 * 1024
# Shorter stretches match too many places to be worth pointing at.
MIN_NEEDLE_CHARS = 6


class LineLocator:
    """Caches each file's text so a file with many findings is read once."""

    def __init__(self) -> None:
        self._texts: dict[str, str | None] = {}

    def line_of(self, path: str, excerpt: str, fallback: int | None) -> int:
        """The line the excerpt's most distinctive stretch is on, else ``fallback``, else 1."""
        text = self._text(path)
        default = fallback if fallback is not None and fallback >= 1 else 1
        if text is None:
            return default
        needle = _needle(excerpt)
        if needle is None:
            return default
        # Start at the record's own line when known, so a repeated path is placed in
        # the record that reached it, not in the first record that mentions it.
        start = _offset_of_line(text, default) if fallback is not None else 0
        for candidate in (needle, json.dumps(needle, ensure_ascii=False)[1:-1]):
            at = text.find(candidate, start)
            if at < 0 and start:
                at = text.find(candidate)
            if at >= 0:
                return text.count("\n", 0, at) + 1
        return default

    def _text(self, path: str) -> str | None:
        if path not in self._texts:
            self._texts[path] = _read_text(Path(path))
        return self._texts[path]


def _read_text(path: Path) -> str | None:
    try:
        if not path.is_file() or path.stat().st_size > MAX_LOCATE_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if data[:4] == b"PK\x03\x04":
        return None
    return data.decode("utf-8", errors="replace")


def _needle(excerpt: str) -> str | None:
    longest = max(excerpt.replace("…", " ").split(), key=len, default="")
    return longest if len(longest) >= MIN_NEEDLE_CHARS else None


def _offset_of_line(text: str, line: int) -> int:
    at = 0
    for _ in range(line - 1):
        found = text.find("\n", at)
        if found < 0:
            return 0
        at = found + 1
    return at
