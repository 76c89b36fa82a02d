"""Bounded decoding of tool results before matching: what an encoded read really showed.

``base64 task.yaml``, ``xxd``, ``od -c``, ``rev``, a rot13 ``tr`` and ``fold`` all show
the material, just not as itself; ``gzip | base64`` too. :func:`decoded_views` returns
the plain text such a result carries, so content rules and fingerprints see it:

* base64 and plain hex blobs in a result are decoded (gzip is undone), kept when the
  outcome is printable UTF-8, when the step's command names an encoding (an encoder,
  ``encode``, ``hex``, ``eval`` or a command substitution: :data:`_ENCODER_HINT`; an
  interpreter that encodes without naming it in the command is not looked at);
* the transforms a command names are undone on its result: ``xxd`` dumps, ``od -c``,
  ``rev`` (per line), rot13 through ``tr``, ``fold`` (lines joined).

Bounded: at most :data:`MAX_DECODE_INPUT_CHARS` of a result are read and at most
:data:`MAX_DECODED_OUTPUT_CHARS` produced; a blob that does not decode is ignored.
"""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import gzip
import io
import re
import zlib

MAX_DECODE_INPUT_CHARS = 256 * 1024
MAX_DECODED_OUTPUT_CHARS = 256 * 1024
MAX_COMMAND_HINT_CHARS = 4096
_MIN_BLOB = 24

# Anchored at the start of a run (the lookbehind), so a long text of short words is
# passed over in one step per word instead of one attempt per character.
_BASE64_RUN = re.compile(
    r"(?<![A-Za-z0-9+/])[A-Za-z0-9+/]{24,}={0,2}(?:[ \t]*\n[A-Za-z0-9+/]{4,}={0,2})*"
)
_HEX_RUN = re.compile(r"(?<![0-9a-fA-F])(?:[0-9a-fA-F]{2}){12,}(?:[ \t]*\n(?:[0-9a-fA-F]{2})+)*")
# Blobs are looked for only in the result of a step whose command could have encoded
# something: an encoder, an interpreter, eval or a command substitution. Plain reads
# (cat, kubectl, git) print text as it is, and skipping them keeps the scan fast.
_ENCODER_HINT = re.compile(
    r"base64|b64|xxd|hexdump|\bod\b|openssl|hex|encode|gzip|zlib|compress|bz2|lzma|"
    r"marshal|pickle|(?<![\w.-])eval\b|\$\(|`",
    re.IGNORECASE,
)
# Every literal _ENCODER_HINT can match, lower-cased: an ASCII command holding none of
# them cannot match it, which a few substring tests say far faster than the
# case-insensitive alternation (most commands name no encoding). The regex decides.
_ENCODER_LITERALS = (
    "base64", "b64", "xxd", "hex", "od", "openssl", "encode", "gzip", "zlib", "compress",
    "bz2", "lzma", "marshal", "pickle", "eval", "$(", "`",
)  # fmt: skip
# Any of the transforms undone below; the specific checks run only when this matches.
_TRANSFORM_HINT = re.compile(r"\b(?:xxd|od|rev|tr|rot13|fold)\b")
_XXD_HEXDUMP = re.compile(r"\bxxd\b")
_XXD_PLAIN = re.compile(r"\bxxd\b[^|;&\n]*\s-p\b")
_OD = re.compile(r"\bod\b")
_REV = re.compile(r"\brev\b")
_FOLD = re.compile(r"\bfold\b")
_XXD_LINE = re.compile(r"^[0-9a-f]{7,8}: ((?:[0-9a-f]{2,4} ?){1,16})", re.M)
_OD_LINE = re.compile(r"^[0-7]{7}((?:\s+\S{1,4})+)\s*$", re.M)
_ROT13 = re.compile(r"\btr\b[^|;&\n]*(?:N-ZA-M|n-za-m)|\brot13\b")


def decoded_views(result: str, command: str) -> str:
    """The decoded text hidden in ``result`` (``""`` when there is none)."""
    # The transform is named near the start of a command; a long args text is data.
    steps = _decodings(command[:MAX_COMMAND_HINT_CHARS])
    if not steps:
        return ""  # most commands name no transform and no encoding
    text = result[:MAX_DECODE_INPUT_CHARS]
    views: list[str] = []
    if "xxd" in steps:
        views.append(_from_xxd(text))
    if "od" in steps:
        views.append(_from_od(text))
    if "rev" in steps:
        views.append("\n".join(line[::-1] for line in text.splitlines()))
    if "rot13" in steps:
        views.append(codecs.decode(text, "rot13"))
    if "fold" in steps:
        views.append(text.replace("\n", ""))
    if "blobs" in steps:
        views.extend(_blobs(text))
    joined = "\n".join(view for view in views if view)
    return joined[:MAX_DECODED_OUTPUT_CHARS]


@functools.lru_cache(maxsize=4096)
def _decodings(command: str) -> tuple[str, ...]:
    """What to undo on the result of ``command``, in order: a function of the command's
    text alone, so it is worked out once per distinct command (agents repeat them)."""
    steps: list[str] = []
    if _TRANSFORM_HINT.search(command):
        if _XXD_HEXDUMP.search(command) and not _XXD_PLAIN.search(command):
            steps.append("xxd")
        if _OD.search(command):
            steps.append("od")
        if _REV.search(command):
            steps.append("rev")
        if _ROT13.search(command):
            steps.append("rot13")
        if _FOLD.search(command):
            steps.append("fold")
    if encoder_hinted(command):
        steps.append("blobs")
    return tuple(steps)


@functools.lru_cache(maxsize=4096)
def encoder_hinted(command: str) -> bool:
    """``_ENCODER_HINT`` finds a hint in ``command``; the literal test first (ASCII
    only: case-insensitive matching of non-ASCII text is left to the regex). Agents
    repeat commands, so the answer is remembered by the command's text."""
    if command.isascii():
        lowered = command.lower()
        if not any(literal in lowered for literal in _ENCODER_LITERALS):
            return False
    return _ENCODER_HINT.search(command) is not None


def _blobs(text: str) -> list[str]:
    found: list[str] = []
    budget = MAX_DECODED_OUTPUT_CHARS
    for match in _BASE64_RUN.finditer(text):
        blob = re.sub(r"\s+", "", match.group(0))
        try:
            data = base64.b64decode(blob + "=" * (-len(blob) % 4))
        except (binascii.Error, ValueError):
            continue
        budget -= _keep(found, data, budget)
        if budget <= 0:
            return found
    for match in _HEX_RUN.finditer(text):
        blob = re.sub(r"\s+", "", match.group(0))
        if len(blob) % 2:
            continue
        budget -= _keep(found, binascii.unhexlify(blob), budget)
        if budget <= 0:
            break
    return found


def _keep(found: list[str], data: bytes, budget: int) -> int:
    if data[:2] == b"\x1f\x8b":
        try:
            data = gzip.GzipFile(fileobj=io.BytesIO(data), mode="rb").read(budget)
        except (OSError, EOFError, zlib.error):
            return 0
    try:
        text = data[:budget].decode("utf-8")
    except UnicodeDecodeError:
        return 0
    if len(text) < _MIN_BLOB // 2:
        return 0
    printable = sum(1 for char in text if char.isprintable() or char in "\n\t\r")
    if printable < len(text) * 0.95:
        return 0
    found.append(text)
    return len(text)


def _from_xxd(text: str) -> str:
    hexed = "".join(match.group(1).replace(" ", "") for match in _XXD_LINE.finditer(text))
    try:
        return binascii.unhexlify(hexed[: len(hexed) // 2 * 2]).decode("utf-8", "replace")
    except (binascii.Error, ValueError):
        return ""


_OD_ESCAPES = {"\\n": "\n", "\\t": "\t", "\\0": "\0", "\\r": "\r"}


def _from_od(text: str) -> str:
    chars: list[str] = []
    for match in _OD_LINE.finditer(text):
        line = match.group(1)
        # od -c prints each byte in a 4-column cell.
        for start in range(0, len(line), 4):
            cell = line[start : start + 4].strip()
            if not cell:
                chars.append(" ")
            else:
                chars.append(_OD_ESCAPES.get(cell, cell if len(cell) == 1 else ""))
    return "".join(chars)


__all__ = ["MAX_DECODED_OUTPUT_CHARS", "MAX_DECODE_INPUT_CHARS", "decoded_views"]
