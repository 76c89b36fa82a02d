"""The shape every importer produces and the helpers that build it.

A trajectory entry is the reference's ``{name, args, result, status}`` dict, so the
detector scans imported runs exactly as it scans our own ``results.json`` records.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from benchguard.errors import BadInputError
from benchguard.importers._json import loads_like_json, loads_text_like_json
from benchguard.record.rulesets import RulesetTable
from benchguard.record.steps import StepStatus as StepStatus  # compatibility re-export


class ParsedTranscript(BaseModel):
    """One agent run read from a foreign log.

    ``errors`` lists what could not be read (each naming its line or position); the
    parser never raises on a bad line, so a half-corrupt transcript still yields
    every step that was readable. ``unread`` is the part of ``errors`` whose content
    is lost (a line that is not JSON, or not the object its format writes): a step on
    such a line may be the one that matters, so the scan reports it as skipped input
    (exit 3) instead of reading the rest as the whole run. Unknown event kinds and a
    missing end marker stay in ``errors`` only: their lines were read.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    trajectory: list[dict[str, Any]] = Field(default_factory=list)
    output: str = ""
    input: str = ""
    errors: list[str] = Field(default_factory=list)
    unread: list[str] = Field(default_factory=list)
    metadata: dict[str, Any] = Field(default_factory=dict)


def make_step(name: str, args: Any, result: str | None, status: StepStatus) -> dict[str, Any]:
    """A trajectory entry in the reference shape; ``args`` is always a dict."""
    return {"name": name, "args": as_args(args), "result": result, "status": status}


def as_args(value: Any) -> dict[str, Any]:
    """Tool arguments as a dict: JSON strings are decoded, other scalars wrapped.

    Frameworks disagree (a dict, a JSON-encoded string, a bare command); wrapping keeps
    the typed text on the args surface either way, which is what the detector scans.
    """
    if isinstance(value, dict):
        return value
    if isinstance(value, str):
        try:
            decoded = loads_text_like_json(value)
        except ValueError:
            return {"raw": value}
        if isinstance(decoded, dict):
            return decoded
        return {"raw": value}
    if value is None:
        return {}
    return {"raw": value}


def text_of(content: Any) -> str:
    """Plain text of a message content: a string, or a list of text blocks.

    Non-text blocks (images, tool calls) contribute nothing; their payload is taken
    elsewhere. Unknown block shapes are JSON-dumped rather than dropped, so text
    hidden in them is still scanned.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts: list[str] = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, dict):
                kind = block.get("type")
                if kind in ("text", "output_text", "input_text") or (
                    kind is None and "text" in block
                ):
                    parts.append(str(block.get("text", "")))
                elif kind in ("image", "image_url", "tool_use", "tool_call", "reasoning"):
                    continue
                else:
                    parts.append(json.dumps(block, sort_keys=True, default=str))
        return "\n".join(p for p in parts if p)
    if isinstance(content, dict):
        if "text" in content:
            return str(content["text"])
        return json.dumps(content, sort_keys=True, default=str)
    return str(content)


@dataclass(frozen=True)
class JsonLine:
    """One non-blank line of a JSON-lines file: its 1-based number, and the value it
    holds or, when it is not JSON, why (``error``; ``value`` is then None)."""

    number: int
    value: Any = None
    error: str | None = None


def json_lines(lines: Iterable[str]) -> Iterator[JsonLine]:
    """Decode each non-blank line on its own, so one corrupt line (a killed writer's
    last, a stray log message) costs only itself; blank lines are passed over."""
    for number, raw in enumerate(lines, start=1):
        line = raw.strip()
        if not line:
            continue
        try:
            value = loads_text_like_json(line)
        except json.JSONDecodeError as exc:
            yield JsonLine(number, error=f"not valid JSON ({exc.msg})")
            continue
        except (ValueError, RecursionError) as exc:
            # Valid syntax past the decoder's limits (an integer of over 4300 digits,
            # nesting deeper than the stack): that line is lost, not the whole file.
            yield JsonLine(number, error=f"not readable JSON ({type(exc).__name__}: {exc})")
            continue
        yield JsonLine(number, value)


class UnreadableLogError(BadInputError, ValueError):
    """A whole file cannot be read in the format asked for; the message names the file."""


# The document format detection already decoded, handed to the importer that reads the
# same file next (decode once). Scoped to one ``import_path`` call by :func:`predecoded`.
_PREDECODED: ContextVar[tuple[Path, Any] | None] = ContextVar(
    "benchguard_predecoded_document", default=None
)


@contextmanager
def predecoded(path: Path, document: Any) -> Iterator[None]:
    """While inside, :func:`read_json_document` of ``path`` returns ``document``."""
    token = _PREDECODED.set((path, document))
    try:
        yield
    finally:
        _PREDECODED.reset(token)


def read_json_document(path: Path, *, what: str) -> Any:
    """The whole file as one JSON value (UTF-8, -16 or -32, a BOM allowed).

    Decoded once per import: when format detection already decoded this file, its
    value is returned (:func:`predecoded`). ``UnreadableLogError`` when it cannot be
    read: the message names the file, why (the decoder's own words and position) and
    ``what`` it was read as."""
    handed = _PREDECODED.get()
    if handed is not None and handed[0] == path:
        return handed[1]
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc
    try:
        return loads_like_json(data)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise UnreadableLogError(f"{path}: not valid JSON ({exc}); read as {what}") from exc
    except RecursionError as exc:
        raise UnreadableLogError(
            f"{path}: not readable JSON (nested too deeply); read as {what}"
        ) from exc
    except ValueError as exc:
        # Valid syntax past the decoder's limits (an integer of over 4300 digits).
        reason = str(exc).split(";")[0]
        raise UnreadableLogError(f"{path}: not readable JSON ({reason}); read as {what}") from exc


@dataclass(frozen=True)
class ImportedFile:
    """The records one file yielded, and what in it could not be read (by position)."""

    path: Path
    format: str
    records: list[dict[str, Any]]
    problems: list[str] = dataclass_field(default_factory=list)
    # The dynamic rulesets the records' reports name (our own results files only).
    rulesets: RulesetTable = dataclass_field(default_factory=RulesetTable)


@dataclass(frozen=True)
class RecordStream:
    """The records of one file as they are read, and what in it could not be read.

    ``problems`` grows while ``records`` is consumed: read it once ``records`` is
    exhausted. Iterating may raise :class:`UnreadableLogError` (or ``OSError``) when the
    file turns out to be unreadable as a whole."""

    path: Path
    format: str
    records: Iterator[dict[str, Any]]
    problems: list[str]
    # The dynamic rulesets the records' reports name (our own results files only),
    # filled as the records are read: a record's ruleset is here once it is yielded.
    rulesets: RulesetTable = dataclass_field(default_factory=RulesetTable)

    @classmethod
    def of(cls, imported: ImportedFile) -> RecordStream:
        return cls(
            imported.path,
            imported.format,
            iter(imported.records),
            imported.problems,
            imported.rulesets,
        )


def import_json_document(
    path: Path,
    *,
    format_name: str,
    what: str,
    accepts: Callable[[Any], bool],
    needs: str,
    record: Callable[[Path, dict[str, Any]], dict[str, Any]],
) -> ImportedFile:
    """One record from a file holding one JSON document (a framework's trajectory file).

    ``accepts`` tells the framework's document from other JSON; a file it refuses is an
    ``UnreadableLogError`` saying it is not ``what`` and what it ``needs``."""
    document = read_json_document(path, what=what)
    if not accepts(document):
        raise UnreadableLogError(f"{path}: not a {what} ({needs})")
    return ImportedFile(path=path, format=format_name, records=[record(path, document)])


def import_json_lines(
    path: Path,
    *,
    format_name: str,
    read_line: Callable[[int, Any], dict[str, Any] | str],
) -> ImportedFile:
    """Records from a JSON-lines file, one a line (``read_line(number, value)``).

    A line that is not JSON, or that ``read_line`` refuses by returning why, becomes a
    problem naming the file and line, ending in "; skipped"; the other lines are kept."""
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    try:
        with path.open(encoding="utf-8", errors="replace") as handle:
            for line in json_lines(handle):
                read = line.error if line.error is not None else read_line(line.number, line.value)
                if isinstance(read, str):
                    problems.append(f"{path}: line {line.number}: {read}; skipped")
                else:
                    records.append(read)
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc
    return ImportedFile(path=path, format=format_name, records=records, problems=problems)


def make_record(
    *,
    name: str,
    input_text: str,
    output: str,
    trajectory: list[dict[str, Any]],
    source: dict[str, Any],
    errors: list[str] | None = None,
) -> dict[str, Any]:
    """A record in our results.json shape; ``source`` says where it was read from."""
    return {
        "name": name,
        "input": input_text,
        "output": output,
        "trajectory": trajectory,
        "source": source,
        "import_errors": list(errors or []),
    }


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` if it is a JSON object, else an empty one (optional sections of a log)."""
    return value if isinstance(value, dict) else {}
