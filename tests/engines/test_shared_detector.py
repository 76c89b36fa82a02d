"""One scan, one detector: the profile choices of ``--profile auto`` share it.

Sharing is for speed (a choice that adds a few patterns extends the last prefilter
instead of building and warming new Sets, and shell readings carry over); it must not
change a report: each file reads as it does scanned alone with a fresh detector.
"""

from __future__ import annotations

import json
from pathlib import Path
from unittest import mock

from benchguard.detection.detector import Detector
from benchguard.engines import scan_files
from benchguard.workflows import scan as scan_workflow
from benchguard.workflows.scan import ScanRequest, choose_profiles, scan_logs


def _record(index: int) -> dict[str, object]:
    return {
        "name": f"task-{index}",
        "input": "Fix the bug and write report.md.",
        "output": "done",
        "trajectory": [
            {"name": "exec", "args": {"command": "git log --oneline"}, "result": "abc fix"},
            {"name": "exec", "args": {"command": "cat ~/benchguard/tasks/t/task.yaml"},
             "result": "checks: [pytest]"},
            {"name": "write_file", "args": {"path": "x.py", "content": "print(1)\n"},
             "result": "ok"},
            {"name": "exec", "args": {"command": "python x.py"}, "result": "1"},
        ],
    }  # fmt: skip


def _episode(index: int) -> dict[str, object]:
    nodes: list[dict[str, object]] = [
        {"parent": None, "message": {"role": "user", "content": "Solve it."}},
        {
            "parent": 0,
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {"id": "c0", "name": "bash",
                     "arguments": json.dumps({"command": "cat ~/.cache/prior/results.jsonl"})}
                ],
            },
        },
        {"parent": 1, "message": {"role": "tool", "tool_call_id": "c0", "content": "r"}},
        {"parent": 2, "message": {"role": "assistant", "content": "done"}},
    ]  # fmt: skip
    return {"id": f"ep-{index}", "ok": True, "traces": [{"id": f"tr-{index}", "nodes": nodes}]}


def _corpus(root: Path) -> list[Path]:
    lines = root / "run_a" / "results.jsonl"
    lines.parent.mkdir(parents=True)
    lines.write_text("\n".join(json.dumps(_record(i)) for i in range(3)) + "\n", encoding="utf-8")
    traces = root / "vf" / "traces.jsonl"
    traces.parent.mkdir()
    traces.write_text("\n".join(json.dumps(_episode(i)) for i in range(2)) + "\n", encoding="utf-8")
    return [lines, traces]


def test_an_auto_scan_shares_one_detector_and_reads_as_files_alone(tmp_path: Path) -> None:
    """Guards the shared detector: one per scan (fails when each profile choice makes
    its own), and every file's reports equal those of that file scanned alone with its
    choice's rules and a fresh detector."""
    paths = _corpus(tmp_path)
    choices = [choose_profiles(path, ("auto",), None, None) for path in paths]
    assert len({choice.names for choice in choices}) == 2, [c.names for c in choices]
    made: list[Detector] = []

    class Counted(Detector):
        def __init__(self) -> None:
            super().__init__()
            made.append(self)

    with mock.patch.object(scan_workflow, "Detector", Counted):
        outcome = scan_logs(ScanRequest(paths=[tmp_path], rules=(), profiles=("auto",)))
    assert len(made) == 1 and all(d._plans for d in made)
    by_path = {scanned.path: scanned for scanned in outcome.scans}
    for path, choice in zip(paths, choices, strict=True):
        [alone] = scan_files([str(path)], choice.rules)
        assert by_path[str(path)] == alone
