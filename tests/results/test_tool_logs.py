"""Foreign logs all the way to the leaderboard, from real logs the tools wrote.

For each tool (Inspect ``.eval`` and ``.json``, vf-eval ``traces.jsonl``, mini-swe-agent
``.traj.json``; see ``tool_logs/README.md``): ``scan`` flags the run that read the task
file, ``score`` gates it to a visible zero with the setup named from the log's model
and task, ``aggregate`` and ``leaderboard`` publish it, and a reviewed dismissal of its
findings lifts the gate. Inspect's log is also produced live by inspect-ai itself.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner, Result

from benchguard.cli import app

from .tool_logs.make_inspect_logs import write_log

LOGS = Path(__file__).parent / "tool_logs"

# log file -> (format scan reports, setup id score names from the log)
CASES = {
    "inspect_fix_login.eval": ("inspect", "mockllm-model-inspect-fix-login"),
    "inspect_fix_login.json": ("inspect", "mockllm-model-inspect-fix-login"),
    "vf_eval_traces.jsonl": ("verifiers", "fake-model-verifiers-probe-tasks"),
    "mini_swe_agent.traj.json": ("mini-swe-agent", "openai-fake-model-mini-swe-agent"),
}


def invoke(*args: str) -> Result:
    return CliRunner().invoke(
        app, list(args), env={"COLUMNS": "400", "NO_COLOR": "1", "BENCHGUARD_CONFIG": ""}
    )


def exited(result: Result, code: int) -> None:
    assert result.exit_code == code, result.output


def _publish(log: Path, tmp_path: Path, *score_args: str, code: int) -> dict[str, Any]:
    """score (exiting ``code``) -> aggregate -> leaderboard --json; the one standing."""
    exited(invoke("score", str(log), *score_args), code)
    board_dir = tmp_path / "board"
    exited(invoke("aggregate", str(log.parent), "-o", str(board_dir)), 0)
    board = invoke("leaderboard", str(board_dir / "rows.json"), "--json")
    exited(board, 0)
    (standing,) = json.loads(board.stdout)["standings"]
    return dict(standing)


@pytest.mark.parametrize("name", sorted(CASES))
def test_real_log_scanned_scored_dismissed_and_published(name: str, tmp_path: Path) -> None:
    log_format, setup_id = CASES[name]
    log = tmp_path / "logs" / name
    log.parent.mkdir()
    shutil.copy(LOGS / name, log)

    scanned = invoke("scan", str(log), "--format", "json")
    exited(scanned, 1)
    (entry,) = json.loads(scanned.stdout)
    assert entry["format"] == log_format
    assert "task-definition" in entry["report"]["categories"]

    standing = _publish(log, tmp_path, code=1)  # gated: score exits 1, as scan
    assert standing["setupId"] == setup_id
    assert standing["gatedRuns"] == 1 and standing["meanOutcome"] == 0.0
    (gated,) = standing["gated"]
    assert gated["kinds"] == ["IntegrityCatastrophic"]

    # A reviewer dismisses every rule that fired: the run is no longer gated, and the
    # dismissal is on record in the scored results.
    results = json.loads((log.parent / f"{name}.benchguard" / "results.json").read_text())
    (record,) = results["records"]
    rules = sorted({f["rule"] for f in record["cheating_report"]["findings"]})
    reviewed = tmp_path / "reviewed.yaml"
    reviewed.write_text(
        "".join(
            f"- {{task: {json.dumps(gated['taskFolder'])}, iteration: 0, rule: {rule}, "
            "reviewer: alice, reason: scripted probe, date: 2026-11-30}\n"
            for rule in rules
        )
    )
    shutil.rmtree(tmp_path / "board")
    standing = _publish(log, tmp_path, "--dismissals", str(reviewed), code=0)
    assert standing["gatedRuns"] == 0 and standing["dismissedFindings"] > 0


@pytest.mark.slow
@pytest.mark.parametrize("log_format", ["eval", "json"])
def test_inspect_log_written_live_by_inspect_ai(log_format: str, tmp_path: Path) -> None:
    """The fixture is not a hand-edited stand-in: inspect-ai writes the same shape now."""
    written = write_log(tmp_path / "logs", "eval" if log_format == "eval" else "json")
    scanned = invoke("scan", str(written), "--format", "json")
    exited(scanned, 1)
    (entry,) = json.loads(scanned.stdout)
    assert entry["format"] == "inspect" and entry["name"] == "fix_login/login-1"
    exited(invoke("score", str(written)), 1)
    manifest = json.loads(
        (written.parent / f"{written.name}.benchguard" / "manifest.json").read_text()
    )
    assert manifest["setupId"] == "mockllm-model-inspect-fix-login"
