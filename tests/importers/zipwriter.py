"""Write zip archives with a chosen compression method, zstd (93) included.

Python's zipfile before 3.14 cannot write zstd members, but new Inspect versions do;
the test builds such an archive byte by byte from the hand-written member files.
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path

import zstandard

ZSTD = 93
DEFLATE = 8


def _compress(data: bytes, method: int) -> bytes:
    if method == ZSTD:
        return zstandard.ZstdCompressor(level=3).compress(data)
    if method == DEFLATE:
        packer = zlib.compressobj(6, zlib.DEFLATED, -zlib.MAX_WBITS)
        return packer.compress(data) + packer.flush()
    return data


def write_zip(path: Path, members: dict[str, bytes], method: int) -> None:
    body = bytearray()
    central = bytearray()
    for name, data in members.items():
        encoded = name.encode()
        packed = _compress(data, method)
        crc = zlib.crc32(data)
        offset = len(body)
        body += struct.pack(
            "<4sHHHHHIIIHH",
            b"PK\x03\x04",
            63,
            0,
            method,
            0,
            0x5A21,
            crc,
            len(packed),
            len(data),
            len(encoded),
            0,
        )
        body += encoded + packed
        central += struct.pack(
            "<4sHHHHHHIIIHHHHHII",
            b"PK\x01\x02",
            63,
            63,
            0,
            method,
            0,
            0x5A21,
            crc,
            len(packed),
            len(data),
            len(encoded),
            0,
            0,
            0,
            0,
            0o644 << 16,
            offset,
        )
        central += encoded
    end = struct.pack(
        "<4sHHHHIIH",
        b"PK\x05\x06",
        0,
        0,
        len(members),
        len(members),
        len(central),
        len(body),
        0,
    )
    path.write_bytes(bytes(body) + bytes(central) + end)


def eval_members(folder: Path) -> dict[str, bytes]:
    """The members of an .eval archive from a folder of hand-written JSON files."""
    return {
        p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*.json"))
    }
