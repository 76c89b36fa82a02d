"""Reading JSON one value at a time: the lines of a JSON Lines file, and the elements of
a file holding one JSON array. Memory stays bounded by the largest value plus a chunk,
never the whole file.

Values are decoded with orjson; whatever orjson refuses or could read differently from
the standard library (``NaN``, lone surrogates, control characters, nesting past 1024,
integers past 64 bits, which orjson would turn into floats) is decoded again with
:mod:`json`, so a value is exactly what ``json.loads`` gives and an error is worded as
``json.loads`` words it. A JSON Lines line is read as the text-mode reader reads it
(UTF-8 with invalid bytes replaced, ``\\r``, ``\\n`` and ``\\r\\n`` all ending a line).

An array's elements are found without a parser: in a pretty-printed file an element
opened after a newline and some indentation closes at the first newline with the same
indentation followed by ``}`` or ``]`` (strings cannot hold a raw newline, nested values
are indented deeper); orjson then confirms the guess by decoding exactly that span.
Otherwise orjson reports where the first value in the buffer ends ("unexpected content
after document"), and the last resort is a byte scanner tracking strings, escapes and
depth. Each element is bounded (:data:`MAX_VALUE_BYTES`; its nesting by
:data:`MAX_SCAN_DEPTH`): past a bound it is skipped, and said so, without being held.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

import orjson

from benchguard.importers._json import _has_long_digits, loads_like_json
from benchguard.importers.transcript import JsonLine, RecordStream, UnreadableLogError

# The largest line or array element read; a bigger one is skipped (a per-record
# problem, not an out-of-memory).
MAX_VALUE_BYTES = 256 << 20
# Nesting deeper than this is not decoded (json.loads would exhaust the stack long
# before); the element is skipped by counting brackets, which needs no stack.
MAX_SCAN_DEPTH = 4096
# Bytes read at a time.
CHUNK_BYTES = 1 << 20
_JSON_SPACE = b" \t\r\n"
_ORJSON_TRAILING = "unexpected content after document"
# orjson's first look at an element (doubled while the element is longer, up to the
# last: orjson reserves about 12 times what it is given, mostly never touched).
_FIRST_WINDOW = 64 << 10
_LAST_WINDOW = 8 << 20
_IN_STRING = re.compile(rb'["\\]')
_OUTSIDE = re.compile(rb'["\[\]{}]')
_SCALAR_END = re.compile(rb"[,\]} \t\r\n]")
_NOT_CONTINUATION = bytes(b for b in range(256) if not 0x80 <= b < 0xC0)


def _text_line_value(raw: bytes) -> tuple[Any, str | None] | None:
    """The old text-mode reading of one line (None when it is blank)."""
    line = raw.decode("utf-8", errors="replace").strip()
    if not line:
        return None
    try:
        return json.loads(line), None
    except json.JSONDecodeError as exc:
        return None, f"not valid JSON ({exc.msg})"
    except (ValueError, RecursionError) as exc:
        return None, f"not readable JSON ({type(exc).__name__}: {exc})"


def stream_json_lines(handle: BinaryIO, *, max_line: int | None = None) -> Iterator[JsonLine]:
    """What :func:`benchguard.importers.transcript.json_lines` yields for the same file
    opened as UTF-8 text (errors replaced), read one line at a time from ``handle``.

    A line longer than ``max_line`` bytes (:data:`MAX_VALUE_BYTES`) is skipped unread
    (an error line)."""
    max_line = MAX_VALUE_BYTES if max_line is None else max_line
    number = 0
    while True:
        raw = handle.readline(max_line + 1)
        if not raw:
            return
        if len(raw) > max_line and not raw.endswith(b"\n"):
            number += 1
            _skip_rest_of_line(handle)
            yield JsonLine(number, error=f"longer than {max_line} bytes; not read")
            continue
        body = raw[:-1] if raw.endswith(b"\n") else raw
        if body.endswith(b"\r"):
            body = body[:-1]
        # Text mode ends a line at a lone CR too.
        for part in body.split(b"\r") if b"\r" in body else (body,):
            number += 1
            read = _line_value(part)
            if read is None:
                continue
            value, error = read
            yield JsonLine(number, value, error)


def stream_json_lines_file(
    path: Path,
    *,
    format_name: str,
    read_line: Callable[[int, Any], dict[str, Any] | str],
) -> RecordStream:
    """:func:`import_json_lines`, one line at a time (the same records and problems)."""
    problems: list[str] = []
    return RecordStream(path, format_name, _json_lines_records(path, read_line, problems), problems)


def _json_lines_records(
    path: Path, read_line: Callable[[int, Any], dict[str, Any] | str], problems: list[str]
) -> Iterator[dict[str, Any]]:
    try:
        with path.open("rb") as handle:
            for line in stream_json_lines(handle):
                read = line.error if line.error is not None else read_line(line.number, line.value)
                if isinstance(read, str):
                    problems.append(f"{path}: line {line.number}: {read}; skipped")
                else:
                    yield read
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc


def _line_value(part: bytes) -> tuple[Any, str | None] | None:
    stripped = part.strip()
    if not stripped:
        # ASCII whitespace only: blank to the text reader as well.
        return None
    try:
        value = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return _text_line_value(part)
    if _has_long_digits(stripped):
        return _text_line_value(part)
    return value, None


def _skip_rest_of_line(handle: BinaryIO) -> None:
    while True:
        chunk = handle.readline(CHUNK_BYTES)
        if not chunk or chunk.endswith(b"\n"):
            return


@dataclass(frozen=True)
class ArrayElement:
    """One element of the array: its 0-based position, the line it starts on, and its
    value or, when it could not be read, why (``error``; ``value`` is then None)."""

    position: int
    line: int
    value: Any = None
    error: str | None = None


class NotAnArray(ValueError):
    """The file does not start with ``[`` (after a UTF-8 BOM and whitespace)."""


class BrokenArray(ValueError):
    """The array cannot be read past this point (truncated, or not JSON structure):
    ``position`` is the element it broke in, ``line`` where."""

    def __init__(self, message: str, position: int, line: int) -> None:
        super().__init__(message)
        self.position = position
        self.line = line


class _Buffer:
    """A window on the file: ``data[0]`` is file byte ``offset`` (on line ``line``)."""

    def __init__(self, handle: BinaryIO, chunk: int) -> None:
        self.handle = handle
        self.chunk = chunk
        self.data = bytearray()
        self.offset = 0
        self.line = 1
        self.eof = False

    def more(self, at_least: int = 0) -> bool:
        """Read another chunk (or ``at_least`` bytes); False at the end of the file."""
        if self.eof:
            return False
        block = self.handle.read(max(self.chunk, at_least))
        if not block:
            self.eof = True
            return False
        self.data += block
        return True

    def drop(self, count: int) -> None:
        """Forget the first ``count`` bytes (consumed)."""
        self.line += self.data.count(b"\n", 0, count)
        self.offset += count
        if count > self.chunk:
            # A large element leaves: a fresh buffer gives its memory back (deleting a
            # bytearray's head keeps the allocation).
            self.data = self.data[count:]
        else:
            del self.data[:count]

    def take(self, count: int) -> bytes:
        """The first ``count`` bytes, removed from the buffer."""
        with memoryview(self.data) as view:
            taken = bytes(view[:count])
        self.drop(count)
        return taken

    def put_back(self, taken: bytes) -> None:
        """Undo :meth:`take`."""
        self.data[0:0] = taken
        self.offset -= len(taken)
        self.line -= taken.count(b"\n")

    def line_at(self, index: int) -> int:
        return self.line + self.data.count(b"\n", 0, index)

    def skip_space(self, index: int) -> int:
        """The index of the next non-space byte at or after ``index`` (reading on),
        or ``len(data)`` at the end of the file."""
        while True:
            data = self.data
            while index < len(data) and data[index] in _JSON_SPACE:
                index += 1
            if index < len(data) or not self.more():
                return index


def array_elements(
    handle: BinaryIO,
    *,
    max_value: int | None = None,
    max_depth: int | None = None,
    chunk: int | None = None,
) -> Iterator[ArrayElement]:
    """The elements of the JSON array in ``handle`` (UTF-8, a BOM allowed), in order.

    An element that is not valid JSON, is nested deeper than ``max_depth`` or is larger
    than ``max_value`` bytes comes with its ``error`` and the next one is read. Raises
    :class:`NotAnArray` before anything is read when the file holds no array, and
    :class:`BrokenArray` where the array's own structure breaks (a truncated file,
    a missing comma, text after the closing bracket)."""
    buf, bounds = _open(handle, max_value, max_depth, chunk)
    index = buf.skip_space(0)
    if index >= len(buf.data) or buf.data[index] != ord("["):
        raise NotAnArray("not a JSON array")
    buf.drop(index + 1)
    yield from _array_body(buf, bounds, "the list")
    _expect_end(buf, "the list's closing ']'")


def _open(
    handle: BinaryIO, max_value: int | None, max_depth: int | None, chunk: int | None
) -> tuple[_Buffer, tuple[int, int]]:
    # The bounds are read when called (not bound at import) so they can be set.
    buf = _Buffer(handle, CHUNK_BYTES if chunk is None else chunk)
    buf.more()
    if buf.data.startswith(b"\xef\xbb\xbf"):
        buf.drop(3)
    return buf, (
        MAX_VALUE_BYTES if max_value is None else max_value,
        MAX_SCAN_DEPTH if max_depth is None else max_depth,
    )


def _array_body(buf: _Buffer, bounds: tuple[int, int], what: str) -> Iterator[ArrayElement]:
    """The elements of the array whose ``[`` was just consumed, through its ``]``."""
    max_value, max_depth = bounds
    position = 0
    while True:
        index = buf.skip_space(0)
        if index >= len(buf.data):
            raise BrokenArray(f"the file ends inside {what} (no closing ']')", position, buf.line)
        if buf.data[index] == ord("]") and position == 0:
            buf.drop(index + 1)
            return
        indent = _indent_before(buf.data, index)
        buf.drop(index)
        line = buf.line
        yield _read_element(buf, indent, position, line, max_value, max_depth)
        position += 1
        index = buf.skip_space(0)
        if index >= len(buf.data):
            raise BrokenArray(f"the file ends inside {what} (no closing ']')", position, buf.line)
        separator = buf.data[index]
        buf.drop(index + 1)
        if separator == ord("]"):
            return
        if separator != ord(","):
            raise BrokenArray(
                f"expected ',' or ']' after element [{position - 1}], found {chr(separator)!r}",
                position,
                buf.line,
            )


@dataclass(frozen=True)
class Member:
    """One member of an object read by :func:`object_members`: its key and value."""

    key: str
    value: Any


def object_members(
    handle: BinaryIO,
    streamed: str,
    *,
    max_value: int | None = None,
    max_depth: int | None = None,
    chunk: int | None = None,
) -> Iterator[Member | ArrayElement]:
    """The members of the JSON object in ``handle``, in order; the member named
    ``streamed``, when its value is an array, comes as its elements instead (each an
    :class:`ArrayElement`, after a ``Member(streamed, None)`` announcing them).

    Every other value is read whole (within ``max_value``). Raises
    :class:`NotAnArray` when the file holds no object, :class:`BrokenArray` where the
    structure breaks (position -1 outside the streamed array)."""
    buf, bounds = _open(handle, max_value, max_depth, chunk)
    index = buf.skip_space(0)
    if index >= len(buf.data) or buf.data[index] != ord("{"):
        raise NotAnArray("not a JSON object")
    buf.drop(index + 1)
    first = True
    while True:
        index = buf.skip_space(0)
        if index >= len(buf.data):
            raise BrokenArray("the file ends inside the object (no closing '}')", -1, buf.line)
        byte = buf.data[index]
        if first and byte == ord("}"):
            buf.drop(index + 1)
            break
        if byte != ord('"'):
            raise BrokenArray(f"expected a key, found {chr(byte)!r}", -1, buf.line_at(index))
        buf.drop(index)
        key = _read_element(buf, None, -1, buf.line, *bounds)
        if not isinstance(key.value, str):
            raise BrokenArray(f"a key that is not a string ({key.error})", -1, key.line)
        _expect_byte(buf, b":", f"':' after the key {key.value!r}")
        index = buf.skip_space(0)
        if key.value == streamed and index < len(buf.data) and buf.data[index] == ord("["):
            buf.drop(index + 1)
            yield Member(key.value, None)
            yield from _array_body(buf, bounds, f"'{streamed}'")
        else:
            indent = _indent_before(buf.data, index)
            buf.drop(index)
            value = _read_element(buf, indent, -1, buf.line, *bounds)
            if value.error is not None:
                raise BrokenArray(f"the value of {key.value!r}: {value.error}", -1, value.line)
            yield Member(key.value, value.value)
        first = False
        index = buf.skip_space(0)
        if index < len(buf.data) and buf.data[index] == ord("}"):
            buf.drop(index + 1)
            break
        _expect_byte(buf, b",", "',' or '}' between members")
    _expect_end(buf, "the object's closing '}'")


def _expect_byte(buf: _Buffer, byte: bytes, what: str) -> None:
    index = buf.skip_space(0)
    if index >= len(buf.data) or buf.data[index] != byte[0]:
        found = "the end of the file" if index >= len(buf.data) else repr(chr(buf.data[index]))
        raise BrokenArray(f"expected {what}, found {found}", -1, buf.line_at(index))
    buf.drop(index + 1)


def last_member(
    handle: BinaryIO, key: str, indent: bytes = b"  ", *, max_value: int | None = None
) -> tuple[bool, Any]:
    """The value of ``key`` when it is the last member of the pretty-printed object in
    ``handle`` (a line ``<indent>"key": value`` followed only by the closing ``}``),
    read from the end of the file without reading the rest: ``(True, value)``, else
    ``(False, None)``. A guess to check against the member read in order later: the
    line is the structure only in a file pretty-printed that way (strings cannot hold
    a raw newline)."""
    limit = MAX_VALUE_BYTES if max_value is None else max_value
    needle = b"\n" + indent + orjson.dumps(key) + b": "
    end = handle.seek(0, 2)
    size = end
    later = b""  # the start of the block after this one: a needle may straddle blocks
    while end > 0 and size - end <= limit:
        start = max(0, end - CHUNK_BYTES)
        handle.seek(start)
        block = handle.read(end - start) + later
        found = block.rfind(needle)
        if found >= 0:
            return _value_at(handle, start + found + len(needle), indent, limit)
        later = block[: len(needle) - 1]
        end = start
    return False, None


def _value_at(handle: BinaryIO, offset: int, indent: bytes, limit: int) -> tuple[bool, Any]:
    """The value at ``offset`` if only the object's closing ``}`` follows it."""
    handle.seek(offset)
    buf = _Buffer(handle, CHUNK_BYTES)
    buf.more()
    if not buf.data:
        return False, None
    try:
        value = _read_element(buf, b"\n" + indent, -1, 1, limit, MAX_SCAN_DEPTH)
    except BrokenArray:
        return False, None
    index = buf.skip_space(0)
    if value.error is not None or index >= len(buf.data) or buf.data[index] != ord("}"):
        return False, None
    buf.drop(index + 1)
    if buf.skip_space(0) < len(buf.data):
        return False, None
    return True, value.value


def _read_element(
    buf: _Buffer, indent: bytes | None, position: int, line: int, max_value: int, max_depth: int
) -> ArrayElement:
    """The element at ``buf.data[0]``, decoded; the buffer is left just past it.

    The element's bytes are taken out of the buffer before they are decoded, so the
    file's bytes and the decoded value are held once each (orjson would copy a mutable
    buffer before parsing it)."""
    if indent is not None and buf.data[0] in b"{[":
        end = _end_by_indentation(buf, indent, max_value)
        if end is not None:
            span = buf.take(end)
            try:
                value = orjson.loads(span)
            except orjson.JSONDecodeError:
                buf.put_back(span)  # not the element's end after all
            else:
                if not _has_long_digits(span):
                    return ArrayElement(position, line, value)
                return _decoded(span, position, line)
    end = _end_by_orjson(buf, max_value)
    if end is None:
        end, error = _end_by_scanning(buf, max_value, max_depth)
        if error is not None:
            return ArrayElement(position, line, error=error)
        if end is None:
            raise BrokenArray("the file ends inside this element (truncated)", position, line)
    return _decoded(buf.take(end), position, line)


def _end_by_indentation(buf: _Buffer, indent: bytes, max_value: int) -> int | None:
    """Pretty-printed JSON: the element opened after ``indent`` (a newline and spaces)
    closes at the first ``indent`` + its closing bracket. Only a guess: the caller keeps
    it when orjson decodes exactly that span (a span that decodes is the whole value)."""
    closing = indent + (b"}" if buf.data[0] == ord("{") else b"]")
    searched = 0
    while True:
        found = buf.data.find(closing, searched)
        if found >= 0:
            return found + len(closing)
        if len(buf.data) > max_value:
            return None
        searched = max(0, len(buf.data) - len(closing))
        if not buf.more():
            return None


def _decoded(span: bytes, position: int, line: int) -> ArrayElement:
    try:
        return ArrayElement(position, line, loads_like_json(span))
    except json.JSONDecodeError as exc:
        # The decoder's line counts from the element's first line.
        at = f"line {line + exc.lineno - 1} column {exc.colno}"
        return ArrayElement(position, line, error=f"not valid JSON ({exc.msg}, {at})")
    except UnicodeDecodeError as exc:
        return ArrayElement(position, line, error=f"not UTF-8 ({exc.reason})")
    except RecursionError:
        return ArrayElement(position, line, error="not readable JSON (nested too deeply)")
    except ValueError as exc:
        reason = str(exc).split(";")[0]
        return ArrayElement(position, line, error=f"not readable JSON ({reason})")


def _expect_end(buf: _Buffer, what: str) -> None:
    index = buf.skip_space(0)
    if index < len(buf.data):
        raise BrokenArray(f"text after {what}", -1, buf.line_at(index))


def _indent_before(data: bytearray, index: int) -> bytes | None:
    """The newline and indentation just before ``index``, if the element starts a line."""
    start = index
    while start > 0 and data[start - 1] in b" \t":
        start -= 1
    if start > 0 and data[start - 1] == ord("\n"):
        return bytes(data[start - 1 : index])
    return None


def _utf8_whole(data: bytearray, length: int) -> int:
    """How many of the first ``length`` bytes of ``data`` end on a character boundary
    (a window may end inside a multi-byte character)."""
    for back in range(1, min(4, length) + 1):
        byte = data[length - back]
        if byte < 0x80:
            return length
        if byte >= 0xC0:  # a lead byte: is its sequence complete?
            need = 2 if byte < 0xE0 else 3 if byte < 0xF0 else 4
            return length if back >= need else length - back
    return length


def _end_by_orjson(buf: _Buffer, max_value: int) -> int | None:
    """The element's end from orjson's "unexpected content after document" position;
    None when orjson cannot say (refused content, or past the cap).

    orjson checks a whole input's UTF-8 before parsing it, so it is given a window
    that doubles while the element is longer: the cost follows the element, not the
    buffer (and invalid bytes further on do not spoil this element)."""
    window = _FIRST_WINDOW
    while window <= min(max_value, _LAST_WINDOW):
        if window >= len(buf.data) and not buf.more(window - len(buf.data)):
            window = len(buf.data)
        window = min(window, len(buf.data))
        cut = window if buf.eof and window == len(buf.data) else _utf8_whole(buf.data, window)
        with memoryview(buf.data) as view:
            try:
                orjson.loads(view[:cut])
            except orjson.JSONDecodeError as exc:
                if exc.msg == _ORJSON_TRAILING:
                    return _byte_index(buf.data, exc.pos, cut)
                if not exc.msg.startswith("unexpected end of data"):
                    return None
            else:
                if buf.eof and cut == len(buf.data):
                    return None
        if buf.eof and window == len(buf.data):
            return None
        window *= 2
    return None


def _byte_index(data: bytearray, chars: int, within: int) -> int:
    """The byte offset of code point ``chars`` (orjson's error positions count code
    points): ``chars`` plus the UTF-8 continuation bytes before it."""
    if data.isascii() if within >= len(data) else data[:within].isascii():
        return chars
    index = chars
    while True:
        moved = chars + len(data[:index].translate(None, _NOT_CONTINUATION))
        if moved == index:
            return index
        index = moved


def _end_by_scanning(buf: _Buffer, max_value: int, max_depth: int) -> tuple[int | None, str | None]:
    """Bracket counting outside strings: the last resort, and the way past an element
    too large or too deep to hold (read on and dropped, never kept). Regex searches
    jump from one byte that matters to the next.

    ``(end, None)``: the element is ``buf.data[:end]``. ``(None, error)``: it was
    skipped, the buffer is past it. ``(None, None)``: the file ended inside it."""
    depth = deepest = 0
    in_string = False
    index = dropped = 0
    scalar = buf.data[0] not in b'"[{'
    while True:
        data = buf.data
        while True:
            if scalar:
                found = _SCALAR_END.search(data, index)
                if found is None:
                    index = len(data)
                    break
                return _scanned(buf, found.start(), dropped, 0, max_value, max_depth)
            found = (_IN_STRING if in_string else _OUTSIDE).search(data, index)
            if found is None:
                index = len(data)
                break
            at = found.start()
            byte = data[at]
            if in_string:
                if byte == 0x5C:  # a backslash escapes the next byte (maybe not read yet)
                    if at + 1 >= len(data):
                        index = at
                        break
                    index = at + 2
                    continue
                in_string = False
                index = at + 1
                if depth == 0:
                    return _scanned(buf, index, dropped, deepest, max_value, max_depth)
                continue
            index = at + 1
            if byte == 0x22:
                in_string = True
            elif byte in b"[{":
                depth += 1
                deepest = max(deepest, depth)
            else:
                depth -= 1
                if depth == 0:
                    return _scanned(buf, index, dropped, deepest, max_value, max_depth)
        if dropped + index > max_value:
            # Too large to hold: read on, dropping what was scanned.
            buf.drop(index)
            dropped += index
            index = 0
        if not buf.more():
            if scalar and index > 0:
                return _scanned(buf, index, dropped, 0, max_value, max_depth)
            if dropped:
                return None, f"larger than {max_value} bytes; the file ends inside it"
            return None, None


def _scanned(
    buf: _Buffer, end: int, dropped: int, deepest: int, max_value: int, max_depth: int
) -> tuple[int | None, str | None]:
    size = dropped + end
    if size > max_value:
        buf.drop(end)
        return None, f"larger than {max_value} bytes ({size}); not read"
    if deepest > max_depth:
        buf.drop(end)
        return None, f"nested deeper than {max_depth} levels; not read"
    return end, None
