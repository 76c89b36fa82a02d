"""Which importer reads a file: detected from its content, or forced by name.

Detection looks at bytes, never at the extension alone: a zip holding ``header.json``
or ``samples/`` is an Inspect ``.eval``; otherwise the first JSON line (or, for a
pretty-printed document, the whole document; or, when neither decodes, the first of the
next few lines that decodes to an object) is matched against each format's
distinguishing keys, most specific first.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO

from benchguard.importers import (
    atif,
    claude_code,
    codex,
    harbor,
    inspect_eval,
    mini_swe_agent,
    results_json,
    swe_agent,
    verifiers_traces,
)
from benchguard.importers._json import loads_like_json
from benchguard.importers.eval_zip import is_zip
from benchguard.importers.json_stream import array_elements
from benchguard.importers.transcript import (
    ImportedFile,
    RecordStream,
    UnreadableLogError,
    predecoded,
)
from benchguard.record.rulesets import to_reference
from benchguard.records import bounded_record_dict

# A line longer than this is not sniffed line-wise; the document is parsed whole.
_MAX_SNIFF_LINE = 64 * 1024 * 1024
# How many non-blank lines are tried when the first one does not decode.
SNIFF_LINES = 32
# The first line's head, enough to see a list of objects open (see _nonblank_lines).
_SNIFF_HEAD = 64 * 1024
# Marks "did not decode" (JSON ``null`` decodes to None).
_UNDECODABLE: Any = object()


@dataclass(frozen=True)
class LogFormat:
    name: str
    description: str
    read: Callable[[Path], ImportedFile]


FORMATS: dict[str, LogFormat] = {
    f.name: f
    for f in (
        LogFormat(
            results_json.FORMAT_NAME,
            "benchguard records: results.json (object with records, or a list) or JSONL",
            results_json.import_file,
        ),
        LogFormat(
            inspect_eval.FORMAT_NAME,
            "Inspect AI eval log (.eval zip, deflate or zstd; or .json)",
            inspect_eval.import_file,
        ),
        LogFormat(
            verifiers_traces.FORMAT_NAME,
            "verifiers 0.4 vf-eval traces.jsonl",
            verifiers_traces.import_file,
        ),
        LogFormat(swe_agent.FORMAT_NAME, "SWE-agent .traj trajectory", swe_agent.import_file),
        LogFormat(
            mini_swe_agent.FORMAT_NAME,
            "mini-swe-agent .traj.json trajectory",
            mini_swe_agent.import_file,
        ),
        LogFormat(
            claude_code.FORMAT_NAME,
            "Claude Code stream-json transcript or saved session file",
            claude_code.import_file,
        ),
        LogFormat(
            codex.FORMAT_NAME,
            "Codex exec --json output or session rollout file",
            codex.import_file,
        ),
        LogFormat(
            atif.FORMAT_NAME,
            "Harbor ATIF trajectory (ATIF-v1.0 to v1.7), or a Harbor job or trial directory",
            harbor.import_path,
        ),
    )
}
FORMAT_NAMES: tuple[str, ...] = tuple(FORMATS)
# Formats whose records can be read one at a time (:func:`stream_path`): our records,
# verifiers episodes, an Inspect .eval's samples. The others hold one run per file (a
# transcript, a trajectory), which is the record.
STREAMED: dict[str, Callable[[Path], RecordStream]] = {
    results_json.FORMAT_NAME: results_json.stream_file,
    verifiers_traces.FORMAT_NAME: verifiers_traces.stream_file,
    inspect_eval.FORMAT_NAME: inspect_eval.stream_file,
}


class UnknownFormatError(UnreadableLogError):
    """No importer recognises the file."""


def formats_help() -> str:
    return "; ".join(f"{f.name} ({f.description})" for f in FORMATS.values())


def detect_format(path: Path) -> str:
    """The name of the format ``path`` is in; raises :class:`UnknownFormatError`."""
    return _detect(path)[0]


def _detect(path: Path) -> tuple[str, Any]:
    """The format of ``path``, and the whole document when detection had to decode it
    (handed to the importer so the file is decoded once), else :data:`_UNDECODABLE`.

    One undecodable line must not hide a JSONL file's format (its valid records are
    still to be scanned), so when neither the first line nor the whole document parses,
    the first of the first :data:`SNIFF_LINES` non-blank lines that decodes to an object
    decides.
    """
    try:
        if harbor.is_harbor_dir(path):
            # A Harbor job or trial directory: one record per trial (importers.harbor).
            return atif.FORMAT_NAME, _UNDECODABLE
        if is_zip(path):
            if inspect_eval.archive_is_eval_log(path):
                return inspect_eval.FORMAT_NAME, _UNDECODABLE
            damage = inspect_eval.archive_problem(path)
            if damage is not None:
                # A zip that does not open is damaged, not some other format: say so.
                raise UnreadableLogError(
                    f"{path}: a corrupt or truncated zip archive ({damage}); if it is an "
                    "Inspect .eval log, it was cut short (an unfinished copy or download?)"
                )
            raise _unknown(path, "a zip archive that is not an Inspect .eval log")
        with path.open("rb") as handle:
            return _detect_json_format(path, _nonblank_lines(handle))
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc


def _detect_json_format(path: Path, lines: Iterator[bytes]) -> tuple[str, Any]:
    first = next(lines, b"")
    if not first:
        raise _unknown(path, "empty")
    head = results_json.read_head(path) if first.startswith(b"{") else b""
    if results_json.opens_a_results_object(head) and not atif.opens_an_atif_object(head):
        # The harness's results object: its reader streams it (decoding it here would
        # hold the whole file).
        return results_json.FORMAT_NAME, _UNDECODABLE
    if _opens_a_list_of_objects(first):
        # Only our records come as a list: the reader parses it (and names a broken
        # one's JSON error and position), so it is not parsed here as well (a one-line
        # list is the whole file). A list of chat messages parses too, but is not our
        # records (fail closed on shape: refused, never read as empty records).
        problem = _message_list_problem(path) or _foreign_list_problem(path)
        if problem is not None:
            raise _unknown(path, problem)
        return results_json.FORMAT_NAME, _UNDECODABLE
    document = first_value = _decode(first)
    whole: Any = _UNDECODABLE
    if document is _UNDECODABLE and first.startswith((b"{", b"[")):
        # A pretty-printed document: its first line is just ``{`` (or a list's start).
        try:
            document = whole = loads_like_json(path.read_bytes())
        except (ValueError, RecursionError):
            # Malformed, not UTF-8, or past the decoder's limits (huge integers, deep
            # nesting): fall back to sniffing line by line.
            document = _UNDECODABLE
    if not isinstance(document, dict | list):
        # Scalars are passed over like undecodable lines: neither says what format
        # the records beside them are in.
        document = next(
            (v for v in map(_decode, lines) if isinstance(v, dict | list)), _UNDECODABLE
        )
    if document is _UNDECODABLE:
        if first.startswith(b"["):
            # The benchguard reader names the exact JSON error and position.
            return results_json.FORMAT_NAME, _UNDECODABLE
        raise _unknown(
            path, f"not JSON: none of the first {SNIFF_LINES} lines decodes to a JSON object"
        )
    if isinstance(document, list):
        return results_json.FORMAT_NAME, whole
    name = _match_document(document)
    if name is None:
        raise _unknown(path, f"unrecognised JSON object (keys: {', '.join(sorted(document)[:8])})")
    if whole is _UNDECODABLE and document is first_value and next(lines, None) is None:
        # A one-line document (minified JSON): the line decoded is the whole file.
        whole = document
    return name, whole


def _nonblank_lines(handle: BinaryIO) -> Iterator[bytes]:
    """The first :data:`SNIFF_LINES` non-blank lines, stripped (and a BOM dropped),
    read as they are asked for.

    A first line that opens a list of objects (a one-line results list, possibly the
    whole file) is yielded as its head only: that head is all detection reads of it
    (:func:`_opens_a_list_of_objects`), and the reader reads the file itself."""
    seen = 0
    while seen < SNIFF_LINES:
        line = handle.readline(_SNIFF_HEAD if seen == 0 else _MAX_SNIFF_LINE)
        if seen == 0 and len(line) == _SNIFF_HEAD and not line.endswith(b"\n"):
            head = line.lstrip(b"\xef\xbb\xbf").strip()
            if head.startswith(b"[") and head[1:].lstrip()[:1] == b"{":
                yield head
                return
            line += handle.readline(_MAX_SNIFF_LINE - len(line))
        if not line:
            return
        stripped = line.lstrip(b"\xef\xbb\xbf").strip()
        if stripped:
            seen += 1
            yield stripped


# A list whose first element opens with a chat message's own key ("role", "content"
# or "type" then "role"): what early mini-swe-agent and plain chat logs write.
_MESSAGE_LIST_HEAD = re.compile(
    rb'^\[\s*\{\s*(?:"(?:type|id)"\s*:\s*"[^"]{0,64}"\s*,\s*)?"(?:role|content)"\s*:'
)
_MESSAGE_HEAD_BYTES = 64 << 10


def _message_list_problem(path: Path) -> str | None:
    """Why a file holding a list is not benchguard results, or ``None``: a bare list
    of chat messages (``role``/``content`` objects) has no record to scan, and reading
    it as records would report no_data over a transcript that was never read."""
    try:
        with path.open("rb") as handle:
            head = handle.read(_MESSAGE_HEAD_BYTES).lstrip(b"\xef\xbb\xbf \t\r\n")
    except OSError:
        return None  # the reader reports what it cannot read
    if _MESSAGE_LIST_HEAD.match(head) is None:
        return None
    return (
        "a bare list of chat messages (role/content objects, as early mini-swe-agent "
        "wrote), not benchguard results: no record to attribute them to; convert it to a "
        "trajectory file (mini-swe-agent's {\"messages\": [...]} or SWE-agent's .traj)"
    )


def _foreign_list_problem(path: Path) -> str | None:
    """Why a list of objects is not benchguard results, or ``None``: its first object
    has none of a record's keys (another tool's event list, as OpenHands writes one,
    parses as a list of objects too, and read as records it would scan as no_data)."""
    try:
        with path.open("rb") as handle:
            first = next(array_elements(handle), None)
    except (OSError, ValueError):
        return None  # the reader names what it cannot read or parse
    if first is None or first.error is not None or not isinstance(first.value, dict):
        return None
    if results_json.looks_like_record(first.value):
        return None
    keys = ", ".join(sorted(first.value)[:12]) or "none"
    return (
        f"a list whose first object has none of a benchguard record's keys "
        f"({', '.join(results_json.RECORD_KEYS_SORTED)}); its keys: {keys}"
    )


def _opens_a_list_of_objects(first: bytes) -> bool:
    """A first line ``[`` or ``[{...},``: a pretty-printed list (not ``[INFO] ...``)."""
    return first.startswith(b"[") and first[1:].lstrip()[:1] in (b"", b"{")


def _decode(line: bytes) -> Any:
    """The JSON value on one line, or :data:`_UNDECODABLE`."""
    try:
        return loads_like_json(line)
    except (ValueError, RecursionError):
        return _UNDECODABLE


def _match_document(document: Any) -> str | None:
    if atif.looks_like_atif(document):
        return atif.FORMAT_NAME
    if inspect_eval.looks_like_eval_log(document) or inspect_eval.looks_like_sample(document):
        return inspect_eval.FORMAT_NAME
    if mini_swe_agent.looks_like_mini_swe_agent(document):
        return mini_swe_agent.FORMAT_NAME
    if swe_agent.looks_like_swe_agent(document):
        return swe_agent.FORMAT_NAME
    if verifiers_traces.is_episode(document):
        return verifiers_traces.FORMAT_NAME
    if codex.is_exec_event(document) or codex.is_rollout_line(document):
        return codex.FORMAT_NAME
    if claude_code.is_stream_json_event(document) or claude_code.is_session_line(document):
        return claude_code.FORMAT_NAME
    if results_json.looks_like_results_document(document) or results_json.looks_like_record(
        document
    ):
        return results_json.FORMAT_NAME
    return None


def _unknown(path: Path, why: str) -> UnknownFormatError:
    return UnknownFormatError(
        f"{path}: unknown log format ({why}). Formats read: {formats_help()}. "
        f"Force one with --input-format {{{','.join(FORMAT_NAMES)}}}."
    )


def import_path(path: Path, format_name: str | None = None) -> ImportedFile:
    """Read one file whole with the named importer, or the one its content calls for
    (every record in memory at once; :func:`stream_path` reads them one at a time)."""
    name, document = _format_of(path, format_name)
    imported = _read_whole(path, name, document)
    # The edge: every foreign record is bounded and sanitised once, here, as the
    # harness's own records are (benchguard.records); a report carrying its dynamic
    # rules inline (an older results file) has them moved into the file's table.
    rulesets = imported.rulesets
    return dataclasses.replace(
        imported,
        records=[to_reference(bounded_record_dict(r), rulesets) for r in imported.records],
    )


def stream_path(path: Path, format_name: str | None = None) -> RecordStream:
    """:func:`import_path`, record by record: a list of records and JSON Lines are read
    one element (line) at a time, so memory follows the largest record, not the file.
    The other formats are read whole (one run per file, or an archive)."""
    name, document = _format_of(path, format_name)
    if document is _UNDECODABLE and name in STREAMED:
        stream = STREAMED[name](path)
    else:
        stream = RecordStream.of(_read_whole(path, name, document))
    rulesets = stream.rulesets
    records = (to_reference(bounded_record_dict(r), rulesets) for r in stream.records)
    return dataclasses.replace(stream, records=records)


def _format_of(path: Path, format_name: str | None) -> tuple[str, Any]:
    if format_name is not None and format_name not in FORMATS:
        raise ValueError(
            f"unknown format {format_name!r}; choose one of: {', '.join(FORMAT_NAMES)}"
        )
    return (format_name, _UNDECODABLE) if format_name else _detect(path)


def _read_whole(path: Path, name: str, document: Any) -> ImportedFile:
    if document is _UNDECODABLE:
        return FORMATS[name].read(path)
    # Detection decoded the whole document: the importer gets it, not a re-parse.
    with predecoded(path, document):
        return FORMATS[name].read(path)
