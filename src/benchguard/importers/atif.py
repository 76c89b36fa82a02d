"""Harbor's Agent Trajectory Interchange Format (ATIF), versions 1.0 to 1.7.

Field sources (Harbor ``rfcs/0001-trajectory-format.md`` and its pydantic models): the
root object holds ``schema_version`` (``ATIF-v1.N``), ``session_id``, ``trajectory_id``
(1.7), ``agent`` (``name``, ``version``, ``model_name``), ``steps``,
``continued_trajectory_ref`` (1.5) and ``subagent_trajectories`` (1.7, embedded
trajectories). A step has ``source`` (``system``, ``user`` or ``agent``), ``message``
(a string, or from 1.6 a list of content parts), ``tool_calls[]`` (``tool_call_id``,
``function_name``, ``arguments``), ``observation.results[]`` (``source_call_id``,
``content`` as a string or parts, ``subagent_trajectory_ref[]`` naming a
``trajectory_id`` (1.7), a ``session_id`` or a ``trajectory_path``) and
``is_copied_context`` (1.5).

Mapping to our record: each tool call is a step (name from ``function_name``, args
from ``arguments``); its result is the observation result with the same
``source_call_id``; results without one fill the step's calls in order; a result left
over is kept as a step of its own (an agent step without tool calls acts through its
message, so the message is that step's args). Every subagent trajectory a result
refers to (embedded, or a file beside this one) is read and its steps follow the
referring step's. The input is the first user message, the output the last agent
message. These are legal ATIF and never reported as problems: results without
``source_call_id``, observations without tool calls, copied-context steps.

Bounds: a trajectory file over :data:`MAX_FILE_BYTES` is refused; subagents nest at
most :data:`MAX_SUBAGENT_DEPTH` deep and at most :data:`MAX_SUBAGENT_FILES` files are
read per record; a referenced file must lie in the referring file's directory tree.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchguard.importers.transcript import (
    ImportedFile,
    UnreadableLogError,
    as_dict,
    make_record,
    make_step,
    read_json_document,
    text_of,
)

FORMAT_NAME = "atif"
SCHEMA_PREFIX = "ATIF-v1."
# The newest minor version whose fields this module knows; later ones are read as it.
NEWEST_MINOR = 7
# A trajectory file larger than this is refused before it is read (a Harbor
# trajectory of a long run is a few MiB; this leaves room without reading a bomb).
MAX_FILE_BYTES = 256 << 20
# Subagents referring to subagents: deeper than this is not followed (and said).
MAX_SUBAGENT_DEPTH = 8
# Referenced subagent files read for one record, all depths together.
MAX_SUBAGENT_FILES = 64
# Name of the step a result with no call becomes.
OBSERVATION_STEP = "observation"
# Name of the one step a trajectory with neither calls nor observations gets, holding
# its agent messages, so the record is scanned rather than empty.
MESSAGES_STEP = "agent_messages"
_VERSION = re.compile(r"ATIF-v1\.(\d+)\Z")
# Harbor's fixed environment layout (``EnvironmentPaths``): the paths a glob in an
# agent's command can name (``cat /tes?/test.sh``), stored as the record's scan
# context so the detector resolves globs against them. Nothing else is known of the
# agent's machine (no home, no working directory).
HARBOR_KNOWN_PATHS = (
    "/logs",
    "/logs/agent",
    "/logs/verifier",
    "/logs/verifier/reward.json",
    "/logs/verifier/reward.txt",
    "/solution",
    "/solution/solve.sh",
    "/tests",
    "/tests/test.sh",
    "/tests/test_outputs.py",
)
# A file opening with an ATIF schema_version (our own results object also opens with a
# schema_version key, a number): told apart before either is decoded.
_ATIF_HEAD = re.compile(rb'\{\s*"schema_version"\s*:\s*"ATIF-v1\.')


def looks_like_atif(document: object) -> bool:
    """A JSON object whose ``schema_version`` starts ``ATIF-v1.`` with a ``steps`` list."""
    return (
        isinstance(document, dict)
        and isinstance(document.get("schema_version"), str)
        and document["schema_version"].startswith(SCHEMA_PREFIX)
        and isinstance(document.get("steps"), list)
    )


def opens_an_atif_object(head: bytes) -> bool:
    """Whether a file starting with ``head`` (leading space stripped) opens with an ATIF
    ``schema_version``."""
    return _ATIF_HEAD.match(head) is not None


def import_file(path: Path) -> ImportedFile:
    """One record from a trajectory file (a Harbor job or trial directory is read by
    :func:`benchguard.importers.harbor.import_path`, which reads each trial with this
    module)."""
    document = read_trajectory_file(path)
    record, unread = trajectory_reading(path, document)
    return ImportedFile(path=path, format=FORMAT_NAME, records=[record], problems=unread)


def read_trajectory_file(path: Path) -> dict[str, Any]:
    """The decoded trajectory at ``path``; ``UnreadableLogError`` naming the file and
    field when it is too large, not JSON, or not ATIF."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise UnreadableLogError(f"{path}: cannot read ({exc.strerror})") from exc
    if size > MAX_FILE_BYTES:
        raise UnreadableLogError(
            f"{path}: {size} bytes, over the {MAX_FILE_BYTES}-byte limit for an ATIF trajectory"
        )
    document = read_json_document(path, what="ATIF trajectory")
    if not isinstance(document, dict):
        raise UnreadableLogError(f"{path}: not an ATIF trajectory (a JSON object is needed)")
    version = document.get("schema_version")
    if not isinstance(version, str) or not version.startswith(SCHEMA_PREFIX):
        raise UnreadableLogError(
            f"{path}: not an ATIF trajectory: field 'schema_version' is {version!r}, "
            f"expected a string starting {SCHEMA_PREFIX!r} (ATIF-v1.0 to ATIF-v1.{NEWEST_MINOR})"
        )
    if not isinstance(document.get("steps"), list):
        raise UnreadableLogError(
            f"{path}: not an ATIF trajectory: field 'steps' is "
            f"{type(document.get('steps')).__name__}, expected a list"
        )
    return document


@dataclass
class _Reading:
    """What one record gathers while its trajectory and subagents are read."""

    steps: list[dict[str, Any]] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    prompt: str | None = None
    answer: str = ""
    agent_messages: list[str] = field(default_factory=list)
    files_read: int = 0
    # Files and embedded ids already read, so a reference cycle ends.
    seen: set[str] = field(default_factory=set)
    # Subagent trajectories referred to and not read: a part of the run never scanned,
    # so the file's reading is incomplete (a problem, not only a note on the record).
    unread: list[str] = field(default_factory=list)

    def not_read(self, message: str) -> None:
        self.errors.append(message)
        self.unread.append(message)


def trajectory_record(
    path: Path, document: dict[str, Any], *, name: str | None = None
) -> dict[str, Any]:
    """Our record for one decoded ATIF trajectory (and every subagent it refers to)."""
    return trajectory_reading(path, document, name=name)[0]


def trajectory_reading(
    path: Path, document: dict[str, Any], *, name: str | None = None
) -> tuple[dict[str, Any], list[str]]:
    """:func:`trajectory_record`, and what of the run was referred to and not read
    (subagents that are missing, outside the folder or past the bounds)."""
    reading = _Reading(seen={_file_key(path)})
    version = str(document["schema_version"])
    match = _VERSION.match(version)
    if match is None or int(match.group(1)) > NEWEST_MINOR:
        reading.errors.append(
            f"{path}: schema_version {version!r} is not one of ATIF-v1.0 to "
            f"ATIF-v1.{NEWEST_MINOR}; read as ATIF-v1.{NEWEST_MINOR}"
        )
    _read_trajectory(path, document, "", 0, reading)
    if not reading.steps:
        # Legal: a run that only talked. Its words are still scanned, as one step.
        reading.steps.append(
            make_step(MESSAGES_STEP, {}, "\n".join(reading.agent_messages), "completed")
        )
    agent = as_dict(document.get("agent"))
    record_name = (
        name
        or _text_field(document, "trajectory_id")
        or _text_field(document, "session_id")
        or path.stem
    )
    record = make_record(
        name=record_name,
        input_text=reading.prompt or "",
        output=reading.answer,
        trajectory=reading.steps,
        source={
            "format": FORMAT_NAME,
            "path": str(path),
            "schema_version": version,
            "session_id": _text_field(document, "session_id"),
            "agent": _text_field(agent, "name"),
            "agent_version": _text_field(agent, "version"),
            "model": _text_field(agent, "model_name"),
            "continued_trajectory_ref": _text_field(document, "continued_trajectory_ref"),
        },
        errors=reading.errors,
    )
    record["scan_context"] = {"known_paths": list(HARBOR_KNOWN_PATHS)}
    return record, reading.unread


def _read_trajectory(
    path: Path, document: dict[str, Any], where: str, depth: int, reading: _Reading
) -> None:
    """Append the steps of one trajectory (``where`` locates it inside the record)."""
    embedded = {
        str(sub.get("trajectory_id")): (position, sub)
        for position, sub in enumerate(document.get("subagent_trajectories") or [])
        if isinstance(sub, dict) and isinstance(sub.get("trajectory_id"), str)
    }
    subagents = document.get("subagent_trajectories")
    if subagents is not None and not isinstance(subagents, list):
        reading.not_read(f"{path}: {where}subagent_trajectories is not a list; not read")
    steps = document.get("steps")
    for index, step in enumerate(steps if isinstance(steps, list) else []):
        at = f"{where}steps[{index}]"
        if not isinstance(step, dict):
            reading.errors.append(f"{path}: {at}: not an object, skipped")
            continue
        refs = _read_step(path, step, at, depth, reading)
        for ref_at, ref in refs:
            _follow(path, ref, ref_at, embedded, where, depth, reading)
    # Embedded subagents no result refers to are still part of the run.
    for trajectory_id in sorted(embedded):
        position, sub = embedded[trajectory_id]
        key = f"embedded:{where}{trajectory_id}"
        if key not in reading.seen:
            reading.seen.add(key)
            _descend(path, sub, f"{where}subagent_trajectories[{position}].", depth, reading)


def _read_step(
    path: Path, step: dict[str, Any], at: str, depth: int, reading: _Reading
) -> list[tuple[str, dict[str, Any]]]:
    """Append one ATIF step's calls and results; return its subagent references."""
    source = step.get("source")
    message = text_of(step.get("message"))
    if source == "user" and reading.prompt is None and depth == 0 and message:
        reading.prompt = message
    elif source == "agent" and message:
        if depth == 0:
            reading.answer = message
        reading.agent_messages.append(message)
    calls: list[int] = []
    by_id: dict[str, int] = {}
    tool_calls = step.get("tool_calls")
    if tool_calls is not None and not isinstance(tool_calls, list):
        reading.errors.append(f"{path}: {at}.tool_calls is not a list; not read")
        tool_calls = None
    for position, call in enumerate(tool_calls or []):
        if not isinstance(call, dict):
            reading.errors.append(f"{path}: {at}.tool_calls[{position}]: not an object, skipped")
            continue
        name = call.get("function_name")
        reading.steps.append(
            make_step(
                name if isinstance(name, str) and name else "unknown",
                call.get("arguments"),
                None,
                "called",
            )
        )
        calls.append(len(reading.steps) - 1)
        call_id = call.get("tool_call_id")
        if isinstance(call_id, str):
            by_id.setdefault(call_id, len(reading.steps) - 1)
    observation = step.get("observation")
    results = as_dict(observation).get("results") if observation is not None else None
    if observation is not None and not isinstance(results, list):
        reading.errors.append(f"{path}: {at}.observation.results is not a list; not read")
        return []
    refs: list[tuple[str, dict[str, Any]]] = []
    filled: set[int] = set()
    pending: list[tuple[int, dict[str, Any]]] = []
    # Results naming their call first, so an unnamed one never takes a named one's call.
    for position, result in enumerate(results or []):
        if not isinstance(result, dict):
            reading.errors.append(
                f"{path}: {at}.observation.results[{position}]: not an object, skipped"
            )
            continue
        for ref_position, ref in enumerate(result.get("subagent_trajectory_ref") or []):
            if isinstance(ref, dict):
                refs.append(
                    (
                        f"{at}.observation.results[{position}].subagent_trajectory_ref"
                        f"[{ref_position}]",
                        ref,
                    )
                )
        call_id = result.get("source_call_id")
        index = by_id.get(call_id) if isinstance(call_id, str) else None
        if index is not None and index not in filled:
            _fill(reading, index, result)
            filled.add(index)
        else:
            pending.append((position, result))
    open_calls = [i for i in calls if i not in filled]
    acted_through_message = source == "agent" and not calls
    for _position, result in pending:
        if result.get("content") is None and result.get("subagent_trajectory_ref"):
            continue  # a pure delegation: the subagent's own steps follow
        if open_calls:
            _fill(reading, open_calls.pop(0), result)
            continue
        args: dict[str, Any] = {}
        if acted_through_message and message:
            # An agent acting without tool calls: its message is the action.
            args = {"message": message}
            acted_through_message = False
        reading.steps.append(make_step(OBSERVATION_STEP, args, _content(result), "completed"))
    return refs


def _fill(reading: _Reading, index: int, result: dict[str, Any]) -> None:
    reading.steps[index] = {
        **reading.steps[index],
        "result": _content(result),
        "status": "completed",
    }


def _content(result: dict[str, Any]) -> str:
    return text_of(result.get("content"))


def _follow(
    path: Path,
    ref: dict[str, Any],
    at: str,
    embedded: dict[str, tuple[int, dict[str, Any]]],
    where: str,
    depth: int,
    reading: _Reading,
) -> None:
    """Read the subagent one reference names: embedded by ``trajectory_id`` (1.7), or
    a file by ``trajectory_path``. A reference that resolves to neither is noted."""
    trajectory_id = ref.get("trajectory_id")
    if isinstance(trajectory_id, str) and trajectory_id in embedded:
        key = f"embedded:{where}{trajectory_id}"
        if key in reading.seen:
            return
        reading.seen.add(key)
        position, sub = embedded[trajectory_id]
        _descend(path, sub, f"{where}subagent_trajectories[{position}].", depth, reading)
        return
    ref_path = ref.get("trajectory_path")
    if not isinstance(ref_path, str) or not ref_path:
        if isinstance(trajectory_id, str):
            # A reference to an embedded trajectory that is not there.
            reading.not_read(
                f"{path}: {at}: subagent trajectory_id {trajectory_id!r} is not in "
                "subagent_trajectories; its steps were not read"
            )
        else:
            # Legal up to v1.6 (a session id alone): the trajectory is elsewhere and the
            # reference names no file, so there is nothing to read; said on the record.
            reading.errors.append(
                f"{path}: {at}: subagent {ref.get('session_id')!r} names no trajectory_path "
                "or trajectory_id; its steps are not in this file"
            )
        return
    target = _resolve(path, ref_path)
    if target is None:
        reading.not_read(
            f"{path}: {at}: trajectory_path {ref_path!r} is not a file under "
            f"{path.parent}; not read"
        )
        return
    key = _file_key(target)
    if key in reading.seen:
        return
    if reading.files_read >= MAX_SUBAGENT_FILES:
        reading.not_read(
            f"{path}: {at}: more than {MAX_SUBAGENT_FILES} subagent files; {ref_path!r} not read"
        )
        return
    reading.seen.add(key)
    reading.files_read += 1
    try:
        sub = read_trajectory_file(target)
    except UnreadableLogError as exc:
        reading.not_read(f"{path}: {at}: subagent not read: {exc}")
        return
    _descend(target, sub, "", depth, reading)


def _descend(
    path: Path, document: dict[str, Any], where: str, depth: int, reading: _Reading
) -> None:
    if depth + 1 > MAX_SUBAGENT_DEPTH:
        reading.not_read(
            f"{path}: {where or 'trajectory'}: subagents nest deeper than "
            f"{MAX_SUBAGENT_DEPTH}; not read"
        )
        return
    _read_trajectory(path, document, where, depth + 1, reading)


def _resolve(path: Path, ref_path: str) -> Path | None:
    """``ref_path`` relative to ``path``'s directory, when it stays inside it (a
    trajectory must not make us read an arbitrary file of the machine scanning it)."""
    base = Path(os.path.realpath(path.parent))
    candidate = Path(os.path.realpath(base / ref_path))
    if not candidate.is_relative_to(base) or not candidate.is_file():
        return None
    return candidate


def _file_key(path: Path) -> str:
    return f"file:{os.path.realpath(path)}"


def _text_field(document: dict[str, Any], key: str) -> str | None:
    value = document.get(key)
    return value if isinstance(value, str) and value else None
