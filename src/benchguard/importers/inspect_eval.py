"""Inspect AI evaluation logs: ``.json`` (``--log-format json``) and ``.eval`` (zip).

Field sources (inspect_ai ``EvalLog`` / ``EvalSample``):

- task and model: ``eval.task``, ``eval.model`` (in ``header.json`` inside a ``.eval``);
- samples: ``samples[]`` in JSON, ``samples/<id>_epoch_<n>.json`` members in a ``.eval``;
- tool calls: ``messages[].tool_calls[]`` (``id``, ``function``, ``arguments`` dict);
- tool results: ``role: tool`` messages (``tool_call_id``, ``content``, ``error``);
  when a sample has no messages with calls, ``events[]`` with ``event: tool`` are used;
- final answer: ``output.completion`` (else the last assistant message);
- prompt: ``input`` (a string or a list of messages).

Long strings may be stored once as ``attachment://<hash>`` with the text under
``samples[].attachments``; they are resolved before anything is scanned, so a read
cannot hide behind a reference. An unresolvable reference is reported on the record.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from benchguard.importers.chat import steps_from_messages
from benchguard.importers.eval_zip import EvalArchive, EvalArchiveError, is_zip
from benchguard.importers.transcript import (
    ImportedFile,
    RecordStream,
    UnreadableLogError,
    make_record,
    make_step,
    read_json_document,
    text_of,
)

FORMAT_NAME = "inspect"
ATTACHMENT_PREFIX = "attachment://"
_ATTACHMENT_REF = re.compile(r"attachment://([0-9A-Za-z_\-]+)")


def looks_like_eval_log(document: object) -> bool:
    return (
        isinstance(document, dict)
        and isinstance(document.get("eval"), dict)
        and "version" in document
        and ("samples" in document or "status" in document)
    )


def looks_like_sample(document: object) -> bool:
    """A single ``EvalSample`` (as ``inspect log dump`` or a ``samples/`` member holds)."""
    return (
        isinstance(document, dict)
        and isinstance(document.get("messages"), list)
        and "epoch" in document
        and "id" in document
    )


def archive_is_eval_log(path: Path) -> bool:
    try:
        names = EvalArchive(path).names()
    except EvalArchiveError:
        return False
    return "header.json" in names or any(n.startswith("samples/") for n in names)


def archive_problem(path: Path) -> str | None:
    """Why a file that opens like a zip cannot be read as one (its central directory
    is missing or damaged: a truncated copy or download), or ``None`` when it can."""
    try:
        EvalArchive(path)
    except EvalArchiveError as exc:
        return str(exc.__cause__ or exc)
    return None


def import_file(path: Path) -> ImportedFile:
    if is_zip(path):
        return _import_archive(path)
    document = read_json_document(path, what="Inspect JSON log")
    if looks_like_sample(document):
        record = _sample_record(path, {}, document, "sample")
        return ImportedFile(path=path, format=FORMAT_NAME, records=[record])
    if not looks_like_eval_log(document):
        raise UnreadableLogError(f"{path}: not an Inspect eval log (no 'eval' and 'version')")
    header = {k: v for k, v in document.items() if k != "samples"}
    samples = document.get("samples") or []
    if not isinstance(samples, list):
        raise UnreadableLogError(f"{path}: 'samples' is not a list")
    records: list[dict[str, Any]] = []
    problems: list[str] = []
    for position, sample in enumerate(samples):
        where = f"samples[{position}]"
        if not isinstance(sample, dict):
            problems.append(f"{path}: {where} is not an object, skipped")
            continue
        records.append(_sample_record(path, header, sample, where))
    return ImportedFile(path=path, format=FORMAT_NAME, records=records, problems=problems)


def stream_file(path: Path) -> RecordStream:
    """:func:`import_file`, sample by sample for an ``.eval`` archive (one member
    decompressed at a time); a JSON log is one document, read whole."""
    if not is_zip(path):
        return RecordStream.of(import_file(path))
    archive, header = _open_archive(path)
    problems: list[str] = []
    return RecordStream(
        path, FORMAT_NAME, _archive_records(path, archive, header, problems), problems
    )


def _import_archive(path: Path) -> ImportedFile:
    archive, header = _open_archive(path)
    problems: list[str] = []
    records = list(_archive_records(path, archive, header, problems))
    return ImportedFile(path=path, format=FORMAT_NAME, records=records, problems=problems)


def _open_archive(path: Path) -> tuple[EvalArchive, dict[str, Any]]:
    try:
        archive = EvalArchive(path)
        header_bytes = archive.read("header.json") if "header.json" in archive.names() else b"{}"
        header = json.loads(header_bytes)
    except (EvalArchiveError, ValueError, RecursionError) as exc:
        raise UnreadableLogError(f"{path}: unreadable Inspect .eval header ({exc})") from exc
    if not isinstance(header, dict):
        raise UnreadableLogError(f"{path}: header.json is not an object")
    return archive, header


def _archive_records(
    path: Path, archive: EvalArchive, header: dict[str, Any], problems: list[str]
) -> Iterator[dict[str, Any]]:
    # Sorted member names give a stable record order whatever order the zip stores.
    for name in archive.names():
        if not (name.startswith("samples/") and name.endswith(".json")):
            continue
        try:
            sample = json.loads(archive.read(name))
        except (EvalArchiveError, ValueError, RecursionError) as exc:
            problems.append(f"{path}: member {name}: unreadable ({exc}), skipped")
            continue
        if not isinstance(sample, dict):
            problems.append(f"{path}: member {name}: not an object, skipped")
            continue
        yield _sample_record(path, header, sample, name)


def resolve_attachments(value: Any, attachments: dict[str, str], missing: set[str]) -> Any:
    """Replace every ``attachment://<hash>`` string (whole or embedded) by its text."""
    if isinstance(value, str):
        if ATTACHMENT_PREFIX not in value:
            return value

        def substitute(match: re.Match[str]) -> str:
            key = match.group(1)
            if key in attachments:
                return attachments[key]
            missing.add(key)
            return match.group(0)

        return _ATTACHMENT_REF.sub(substitute, value)
    if isinstance(value, list):
        return [resolve_attachments(item, attachments, missing) for item in value]
    if isinstance(value, dict):
        return {k: resolve_attachments(v, attachments, missing) for k, v in value.items()}
    return value


def sample_record(
    sample: dict[str, Any], *, task: str, model: str | None, where: str = "sample"
) -> dict[str, Any]:
    """One ``EvalSample`` as Inspect dumps it (messages, events, output, input), read
    as a sample of a log is: the Inspect integration's scorer and hooks use this."""
    return _sample_record(Path(where), {"eval": {"task": task, "model": model}}, sample, where)


def _sample_record(
    path: Path, header: dict[str, Any], raw_sample: dict[str, Any], where: str
) -> dict[str, Any]:
    attachments = raw_sample.get("attachments")
    table = (
        {str(k): str(v) for k, v in attachments.items()} if isinstance(attachments, dict) else {}
    )
    missing: set[str] = set()
    sample = resolve_attachments(
        {k: v for k, v in raw_sample.items() if k != "attachments"}, table, missing
    )
    chat = steps_from_messages(sample.get("messages") or [], where=f"{where}.messages")
    errors = list(chat.errors)
    steps = chat.steps
    if not steps:
        steps = _steps_from_events(sample.get("events") or [])
    if missing:
        errors.append(f"{where}: unresolved attachment references: {', '.join(sorted(missing))}")
    output = sample.get("output")
    completion = output.get("completion") if isinstance(output, dict) else None
    answer = completion if isinstance(completion, str) and completion else chat.last_assistant_text
    raw_input = sample.get("input")
    prompt = raw_input if isinstance(raw_input, str) else _user_text(raw_input)
    raw_spec = header.get("eval")
    spec: dict[str, Any] = raw_spec if isinstance(raw_spec, dict) else {}
    sample_id = sample.get("id")
    epoch = sample.get("epoch")
    task = str(spec.get("task") or "inspect")
    return make_record(
        name=f"{task}/{sample_id}" + (f"#{epoch}" if epoch not in (None, 1) else ""),
        input_text=prompt or chat.first_user_text,
        output=answer,
        trajectory=steps,
        source={
            "format": FORMAT_NAME,
            "path": str(path),
            "member": where,
            "task": task,
            "model": spec.get("model"),
            "sample_id": sample_id,
            "epoch": epoch,
        },
        errors=errors,
    )


def _user_text(messages: Any) -> str:
    if not isinstance(messages, list):
        return ""
    return "\n".join(
        text_of(m.get("content"))
        for m in messages
        if isinstance(m, dict) and m.get("role") == "user"
    )


def _steps_from_events(events: list[Any]) -> list[dict[str, Any]]:
    steps: list[dict[str, Any]] = []
    for event in events:
        if not isinstance(event, dict) or event.get("event") != "tool":
            continue
        result = event.get("result")
        error = event.get("error")
        text = result if isinstance(result, str) else text_of(result)
        if isinstance(error, dict) and error.get("message"):
            text = f"{text}\n{error['message']}" if text else str(error["message"])
        steps.append(
            make_step(
                str(event.get("function") or "unknown"),
                event.get("arguments"),
                text,
                "error" if error else "completed",
            )
        )
    return steps
