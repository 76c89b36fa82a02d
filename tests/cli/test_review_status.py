"""``scan`` and ``score`` on records sent to review: printed, counted, exit 0 unless
``--fail-on-review``; rows carry the review mark and the findings."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cli.helpers import exited, invoke


def _record(command: str, result: str) -> dict[str, Any]:
    return {
        "input": "Fix the bug.",
        "output": "done",
        "trajectory": [{"name": "exec", "args": {"command": command}, "result": result}],
    }


def _results(tmp_path: Path, *records: dict[str, Any]) -> Path:
    run = tmp_path / "run_x"
    run.mkdir()
    path = run / "results.json"
    path.write_text(json.dumps([{"folder": f"t{i}", **r} for i, r in enumerate(records)]))
    return path


def test_scan_exits_zero_on_review_unless_asked(tmp_path: Path) -> None:
    path = _results(tmp_path, _record("git tag --list", "v1.0"))
    plain = invoke("scan", str(path), "--profile", "swe-bench")
    exited(plain, 0)
    assert "1 review" in plain.stdout and "review" in plain.stdout
    strict = invoke("scan", str(path), "--profile", "swe-bench", "--fail-on-review")
    exited(strict, 1)


def test_score_marks_review_rows_with_their_findings(tmp_path: Path) -> None:
    path = _results(tmp_path, _record("git tag --list", "v1.0"))
    result = invoke("score", str(path), "--profile", "swe-bench")
    exited(result, 0)
    rows = json.loads((path.parent / "rows.json").read_text())
    assert rows[0]["integrityStatus"] == "review"
    assert rows[0]["catastrophic"] is False
    assert rows[0]["reviewDetails"][0]["name"] == "git-history/ref-listing"
    assert "weak evidence" in rows[0]["reviewDetails"][0]["reason"]
    exited(invoke("score", str(path), "--profile", "swe-bench", "--fail-on-review"), 1)
