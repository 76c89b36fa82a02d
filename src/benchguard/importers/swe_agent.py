"""SWE-agent trajectory files (``<instance_id>.traj``, JSON).

Field sources (SWE-agent "Output files" documentation): ``trajectory[]`` holds one
entry per step with ``response`` (model output), ``thought``, ``action`` (the command
the agent typed), ``observation`` (what the environment returned), ``state`` and
``query``; ``history[]`` holds the chat messages (the first ``user`` message is the
problem statement); ``info.submission`` is the submitted patch and
``info.exit_status`` how the run ended.

A step's tool name is the first word of its action (``str_replace_editor``, ``cat``,
``submit``): SWE-agent actions are command lines, not named tool calls.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from benchguard.importers.transcript import (
    ImportedFile,
    as_dict,
    import_json_document,
    make_record,
    make_step,
    text_of,
)

FORMAT_NAME = "swe-agent"


def looks_like_swe_agent(document: object) -> bool:
    if not isinstance(document, dict) or not isinstance(document.get("trajectory"), list):
        return False
    steps = [s for s in document["trajectory"] if isinstance(s, dict)]
    if steps:
        return "action" in steps[0] and ("observation" in steps[0] or "response" in steps[0])
    return "history" in document or "info" in document


def import_file(path: Path) -> ImportedFile:
    return import_json_document(
        path,
        format_name=FORMAT_NAME,
        what="SWE-agent trajectory",
        accepts=looks_like_swe_agent,
        needs="needs a 'trajectory' list of {action, observation} steps",
        record=trajectory_record,
    )


def trajectory_record(path: Path, document: dict[str, Any]) -> dict[str, Any]:
    steps: list[dict[str, Any]] = []
    errors: list[str] = []
    for position, entry in enumerate(document["trajectory"]):
        if not isinstance(entry, dict):
            errors.append(f"{path}: trajectory[{position}] is not an object, skipped")
            continue
        action = entry.get("action")
        command = action if isinstance(action, str) else text_of(action)
        words = command.split(maxsplit=1)
        observation = entry.get("observation")
        steps.append(
            make_step(
                words[0] if words else "action",
                {"command": command.rstrip("\n")},
                None if observation is None else text_of(observation),
                "completed" if observation is not None else "called",
            )
        )
    info = as_dict(document.get("info"))
    submission = info.get("submission")
    return make_record(
        name=path.name.removesuffix(".traj"),
        input_text=_problem_statement(document.get("history")),
        output=submission if isinstance(submission, str) else "",
        trajectory=steps,
        source={
            "format": FORMAT_NAME,
            "path": str(path),
            "exit_status": info.get("exit_status"),
        },
        errors=errors,
    )


def _problem_statement(history: Any) -> str:
    if not isinstance(history, list):
        return ""
    for message in history:
        if isinstance(message, dict) and message.get("role") == "user":
            return text_of(message.get("content"))
    return ""
