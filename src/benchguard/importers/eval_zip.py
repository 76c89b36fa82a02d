"""Read members of an Inspect ``.eval`` archive, including zstd-compressed ones.

Inspect writes ``.eval`` logs as zip archives. Recent versions compress members with
zstd (zip method 93), which :mod:`zipfile` before Python 3.14 refuses to read; older
logs use deflate. We take the member table from the central directory (``zipfile``
parses that fine whatever the method), then read each member's local header and
payload ourselves and decompress with ``zlib`` or ``zstandard``.
"""

from __future__ import annotations

import struct
import zipfile
import zlib
from pathlib import Path
from typing import BinaryIO

from benchguard.errors import BadInputError

METHOD_STORED = 0
METHOD_DEFLATE = 8
METHOD_ZSTD = 93
SUPPORTED_METHODS = {METHOD_STORED: "stored", METHOD_DEFLATE: "deflate", METHOD_ZSTD: "zstd"}

_LOCAL_HEADER = struct.Struct("<4sHHHHHIIIHH")
_LOCAL_SIGNATURE = b"PK\x03\x04"
# A member bigger than this once decompressed is refused: a log is text, and a
# hostile archive must not expand without bound in the scanner's memory.
MAX_MEMBER_BYTES = 512 * 1024 * 1024


class EvalArchiveError(BadInputError, ValueError):
    """The archive or one of its members cannot be read."""


def is_zip(path: Path) -> bool:
    with path.open("rb") as handle:
        return handle.read(4) == _LOCAL_SIGNATURE


class EvalArchive:
    """An open ``.eval`` archive: list member names, read one member's bytes."""

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            with zipfile.ZipFile(path) as listing:
                self._members = {info.filename: info for info in listing.infolist()}
        except (zipfile.BadZipFile, OSError) as exc:
            raise EvalArchiveError(f"{path}: not a readable zip archive ({exc})") from exc

    def names(self) -> list[str]:
        return sorted(self._members)

    def read(self, name: str) -> bytes:
        info = self._members.get(name)
        if info is None:
            raise EvalArchiveError(f"{self.path}: no member {name!r}")
        if info.flag_bits & 0x1:
            raise EvalArchiveError(f"{self.path}: member {name!r} is encrypted")
        if info.file_size > MAX_MEMBER_BYTES:
            raise EvalArchiveError(
                f"{self.path}: member {name!r} is {info.file_size} bytes uncompressed, "
                f"over the {MAX_MEMBER_BYTES} byte limit"
            )
        with self.path.open("rb") as handle:
            payload = _member_payload(handle, info, self.path)
        return _decompress(payload, info, self.path)


def _member_payload(handle: BinaryIO, info: zipfile.ZipInfo, path: Path) -> bytes:
    handle.seek(info.header_offset)
    header = handle.read(_LOCAL_HEADER.size)
    if len(header) != _LOCAL_HEADER.size:
        raise EvalArchiveError(f"{path}: member {info.filename!r}: truncated local header")
    fields = _LOCAL_HEADER.unpack(header)
    if fields[0] != _LOCAL_SIGNATURE:
        raise EvalArchiveError(f"{path}: member {info.filename!r}: bad local header signature")
    name_length, extra_length = fields[9], fields[10]
    # Sizes come from the central directory: with a data descriptor (flag bit 3) the
    # local header's size fields are zero.
    handle.seek(info.header_offset + _LOCAL_HEADER.size + name_length + extra_length)
    payload = handle.read(info.compress_size)
    if len(payload) != info.compress_size:
        raise EvalArchiveError(f"{path}: member {info.filename!r}: truncated data")
    return payload


def _decompress(payload: bytes, info: zipfile.ZipInfo, path: Path) -> bytes:
    method = info.compress_type
    where = f"{path}: member {info.filename!r}"
    if method not in SUPPORTED_METHODS:
        allowed = ", ".join(f"{n} ({m})" for m, n in SUPPORTED_METHODS.items())
        raise EvalArchiveError(
            f"{where} uses zip compression method {method}; supported: {allowed}"
        )
    if method == METHOD_DEFLATE:
        data = _inflate(payload, where)
    elif method == METHOD_ZSTD:
        data = _zstd_decompress(payload, where)
    else:
        data = payload
    if len(data) > MAX_MEMBER_BYTES:
        raise EvalArchiveError(f"{where} expands past the size limit")
    if zlib.crc32(data) != info.CRC:
        raise EvalArchiveError(f"{where}: CRC mismatch")
    return data


def _inflate(payload: bytes, where: str) -> bytes:
    """Raw deflate, stopping one byte past the limit so an oversized member shows."""
    try:
        return zlib.decompressobj(-zlib.MAX_WBITS).decompress(payload, MAX_MEMBER_BYTES + 1)
    except zlib.error as exc:
        raise EvalArchiveError(f"{where}: corrupt data ({exc})") from exc


def _zstd_decompress(payload: bytes, where: str) -> bytes:
    import zstandard

    chunks: list[bytes] = []
    total = 0
    try:
        reader = zstandard.ZstdDecompressor().stream_reader(payload, read_across_frames=True)
        while total <= MAX_MEMBER_BYTES:
            chunk: bytes = reader.read(1 << 20)
            if not chunk:
                break
            chunks.append(chunk)
            total += len(chunk)
    except zstandard.ZstdError as exc:
        raise EvalArchiveError(f"{where}: corrupt data ({exc})") from exc
    return b"".join(chunks)
