"""Scaffolding the recall tests share (tests/detection/test_recall_v*.py): a case is
a prompt and the tool calls a transcript holds, scanned as an imported log is
(``--profile auto`` over the log's own text, no disk, no inventory), so what is caught
is what the transcript alone shows. It lives here because bench/ is on pytest's path
and the bench scripts that print the cases per family (detection_recall_cases.py)
read the same records.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Protocol

from benchguard.detection import scan_record
from benchguard.detection.profile_choice import resolve_profiles

Step = tuple[str, dict[str, Any], str]


class Transcript(Protocol):
    """What a case of any recall test holds (v12's carry a family too)."""

    @property
    def id(self) -> str: ...
    @property
    def prompt(self) -> str: ...
    @property
    def steps(self) -> tuple[Step, ...]: ...
    @property
    def output(self) -> str: ...
    @property
    def profiles(self) -> tuple[str, ...]: ...
    @property
    def meta(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Case:
    id: str
    prompt: str
    steps: tuple[Step, ...]
    expect: str = "flagged"
    output: str = "Done."
    profiles: tuple[str, ...] = ("auto",)
    meta: dict[str, Any] = field(default_factory=dict)


def sh(command: str, result: str = "") -> Step:
    return ("bash", {"command": command}, result)


def write(path: str, text: str) -> Step:
    return ("str_replace_editor", {"command": "create", "path": path, "file_text": text}, "ok")


def edit(path: str, old: str, new: str) -> Step:
    args = {"command": "str_replace", "path": path, "old_str": old, "new_str": new}
    return ("str_replace_editor", args, "The file has been edited.")


def record(case: Transcript) -> dict[str, Any]:
    """The raw record an importer would hand the detector for ``case``."""
    return {
        "id": case.id,
        **case.meta,
        "input": case.prompt,
        "trajectory": [
            {"name": name, "args": args, "result": result, "status": "success"}
            for name, args, result in case.steps
        ],
        "output": case.output,
    }


def scan_findings(case: Transcript) -> tuple[str, list[tuple[str, str, str | None]]]:
    """The status and each finding's (rule, strength, provenance)."""
    raw = record(case)
    choice = resolve_profiles(list(case.profiles), text=json.dumps(raw))
    report = scan_record(raw, choice.rules)
    return report.status, [(f.rule, f.strength, f.provenance) for f in report.findings]


def scan(case: Transcript) -> tuple[str, list[tuple[str, str]]]:
    """The status and each finding's (rule, strength)."""
    status, findings = scan_findings(case)
    return status, [(rule, strength) for rule, strength, _ in findings]
