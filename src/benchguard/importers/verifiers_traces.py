"""verifiers 0.4 ``vf-eval`` output: ``traces.jsonl``, one episode per line.

Field sources (``verifiers.v1``): an episode line is ``{id, env, task, run, ok,
is_timeout, errors, traces: [Trace]}``; a trace's messages are ``traces[].nodes[]
.message`` (``role``, ``content``); assistant messages carry ``tool_calls[]`` with
``id``, ``name`` and ``arguments`` (the raw JSON string the model emitted); results are
``role: tool`` messages with ``tool_call_id``. The final answer is ``root_reply`` when
set, else the last assistant message. Every node is scanned, branches included: an
access in a discarded branch still happened.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchguard.importers.chat import steps_from_messages
from benchguard.importers.json_stream import stream_json_lines_file
from benchguard.importers.transcript import (
    ImportedFile,
    RecordStream,
    as_dict,
    import_json_lines,
    make_record,
)

FORMAT_NAME = "verifiers"


def is_episode(document: object) -> bool:
    return isinstance(document, dict) and isinstance(document.get("traces"), list)


def import_file(path: Path) -> ImportedFile:
    return import_json_lines(path, format_name=FORMAT_NAME, read_line=_line_reader(path))


def stream_file(path: Path) -> RecordStream:
    """:func:`import_file`, one episode at a time."""
    return stream_json_lines_file(path, format_name=FORMAT_NAME, read_line=_line_reader(path))


def _line_reader(path: Path) -> Callable[[int, Any], dict[str, Any] | str]:
    def read_line(number: int, episode: Any) -> dict[str, Any] | str:
        if not is_episode(episode):
            return "not an episode (no 'traces' list)"
        return episode_record(path, number, episode)

    return read_line


def episode_record(path: Path, number: int, episode: dict[str, Any]) -> dict[str, Any]:
    steps: list[dict[str, Any]] = []
    errors: list[str] = []
    prompt = ""
    answers: list[str] = []
    for t, trace in enumerate(episode["traces"]):
        where = f"line {number}: traces[{t}]"
        if not isinstance(trace, dict):
            errors.append(f"{path}: {where}: not an object, skipped")
            continue
        nodes = trace.get("nodes") or []
        messages = [n.get("message") if isinstance(n, dict) else n for n in nodes]
        chat = steps_from_messages(messages, where=f"{where}.nodes")
        steps.extend(chat.steps)
        errors.extend(f"{path}: {e}" for e in chat.errors)
        prompt = prompt or chat.first_user_text
        root_reply = trace.get("root_reply")
        # Every trace's final reply is kept: in a multi-agent episode any of them may
        # carry what the agent read.
        answer = (
            root_reply if isinstance(root_reply, str) and root_reply else chat.last_assistant_text
        )
        if answer:
            answers.append(answer)
    for error in episode.get("errors") or []:
        if isinstance(error, dict):
            errors.append(
                f"{path}: line {number}: rollout error {error.get('type')}: {error.get('message')}"
            )
    task = as_dict(episode.get("task"))
    env = as_dict(episode.get("env"))
    name = str(episode.get("id") or f"{path.stem}:{number}")
    return make_record(
        name=name,
        input_text=prompt,
        output="\n".join(answers),
        trajectory=steps,
        source={
            "format": FORMAT_NAME,
            "path": str(path),
            "line": number,
            "env": env.get("id"),
            "model": _agent_model(episode["traces"]),
            "task_key": task.get("key"),
            "ok": episode.get("ok"),
            "is_timeout": episode.get("is_timeout"),
        },
        errors=errors,
    )


def _agent_model(traces: list[Any]) -> str | None:
    """The model the episode's first trace was run with (``agent.config.model``)."""
    for trace in traces:
        config = as_dict(as_dict(as_dict(trace).get("agent")).get("config"))
        model = config.get("model")
        if isinstance(model, str) and model:
            return model
    return None
