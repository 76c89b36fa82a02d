"""Which importer reads a file: detected from its content, or forced by name.

Detection looks at bytes, never at the extension alone: a zip holding ``header.json``
or ``samples/`` is an Inspect ``.eval``; otherwise the first JSON line (or, for a
pretty-printed document, the whole document) is matched against each format's
distinguishing keys, most specific first.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchguard.importers import (
    claude_code,
    inspect_eval,
    mini_swe_agent,
    results_json,
    swe_agent,
    verifiers_traces,
)
from benchguard.importers.eval_zip import is_zip
from benchguard.importers.transcript import ImportedFile, UnreadableLogError

# A first line longer than this is not sniffed line-wise; the document is parsed whole.
_MAX_SNIFF_LINE = 64 * 1024 * 1024


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
            "Claude Code stream-json transcript",
            claude_code.import_file,
        ),
    )
}
FORMAT_NAMES: tuple[str, ...] = tuple(FORMATS)


class UnknownFormatError(UnreadableLogError):
    """No importer recognises the file."""


def formats_help() -> str:
    return "; ".join(f"{f.name} ({f.description})" for f in FORMATS.values())


def detect_format(path: Path) -> str:
    """The name of the format ``path`` is in; raises :class:`UnknownFormatError`."""
    try:
        if is_zip(path):
            if inspect_eval.archive_is_eval_log(path):
                return inspect_eval.FORMAT_NAME
            raise _unknown(path, "a zip archive that is not an Inspect .eval log")
        with path.open("rb") as handle:
            first = handle.readline(_MAX_SNIFF_LINE).lstrip(b"\xef\xbb\xbf \t\r\n")
            if not first:
                first = handle.read(4096).lstrip()
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc
    if first.startswith(b"["):
        return results_json.FORMAT_NAME
    if not first.startswith(b"{"):
        raise _unknown(path, "not JSON")
    try:
        document: Any = json.loads(first)
        whole_line = True
    except (json.JSONDecodeError, UnicodeDecodeError):
        whole_line = False
    if not whole_line:
        try:
            document = json.loads(path.read_bytes())
        except (OSError, json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise _unknown(path, f"neither JSON lines nor a JSON document ({exc})") from exc
    name = _match_document(document)
    if name is None:
        keys = sorted(document)[:8] if isinstance(document, dict) else []
        raise _unknown(path, f"unrecognised JSON object (keys: {', '.join(keys)})")
    return name


def _match_document(document: Any) -> str | None:
    if inspect_eval.looks_like_eval_log(document) or inspect_eval.looks_like_sample(document):
        return inspect_eval.FORMAT_NAME
    if mini_swe_agent.looks_like_mini_swe_agent(document):
        return mini_swe_agent.FORMAT_NAME
    if swe_agent.looks_like_swe_agent(document):
        return swe_agent.FORMAT_NAME
    if verifiers_traces.is_episode(document):
        return verifiers_traces.FORMAT_NAME
    if claude_code.is_claude_code([json.dumps(document)]):
        return claude_code.FORMAT_NAME
    if results_json.looks_like_results_document(document) or results_json.looks_like_record(
        document
    ):
        return results_json.FORMAT_NAME
    return None


def _unknown(path: Path, why: str) -> UnknownFormatError:
    return UnknownFormatError(
        f"{path}: unknown log format ({why}). Formats read: {formats_help()}. "
        f"Force one with --format {{{','.join(FORMAT_NAMES)}}}."
    )


def import_path(path: Path, format_name: str | None = None) -> ImportedFile:
    """Read one file with the named importer, or the one its content calls for."""
    if format_name is not None and format_name not in FORMATS:
        raise ValueError(
            f"unknown format {format_name!r}; choose one of: {', '.join(FORMAT_NAMES)}"
        )
    name = format_name or detect_format(path)
    return FORMATS[name].read(path)
