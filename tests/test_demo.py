"""`make demo` end to end: the leaderboard with gated zeros and the redaction table."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
def test_demo_prints_the_leaderboard_with_gated_zeros_and_the_redaction_table(
    tmp_path: Path,
) -> None:
    """Guards the newcomer's first command: the whole product must work from one call."""
    out = tmp_path / "demo"
    bin_dir = str(Path(sys.executable).parent)
    env = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}"}
    done = subprocess.run(
        [sys.executable, "-m", "benchguard.demo", "--out", str(out)],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    text = done.stdout
    assert "Leaderboard" in text
    assert "Gated runs (visible zeros)" in text
    assert "IntegrityCatastrophic" in text
    assert "split dev" in text and "oracle" in text and "first_character" in text
    assert str(out / "leaderboard" / "leaderboard.html") in text
    # The whole terminal output fits in 200 columns (issue 24).
    assert all(len(line) <= 200 for line in text.splitlines()), max(text.splitlines(), key=len)
    # The leaderboard's text: no absolute path of the operator's tree (headers included),
    # one line per gated run with identical iterations folded, and a legend.
    board_text = text[text.index("\nLeaderboard\n") : text.index("wrote leaderboard/")]
    assert str(out) not in board_text
    assert "sum-numbers#1-2" in board_text and "more)" in board_text
    assert "legend: IntegrityCatastrophic = " in board_text
    gated = board_text[board_text.index("Gated runs (visible zeros)") :].splitlines()
    gated_lines = len([line for line in gated if line.startswith("scripted-")])
    # Where the --json output went; the redaction table is plain lines in a pipe.
    assert "is written to leaderboard/leaderboard.json" in text
    assert "┃" not in text and "│" not in text
    if shutil.which("strace") is not None:
        # One cheater records nothing of its peek: the system audit alone catches it.
        assert "caught only by the audit" in text

    board = json.loads((out / "leaderboard" / "leaderboard.json").read_text("utf-8"))
    standings = {s["setupId"]: s for s in board["standings"]}
    assert standings["scripted-honest"]["meanOutcome"] == 1.0
    assert standings["scripted-honest"]["gatedRuns"] == 0
    gated_setups = [s for s in standings if "cheat" in s]
    assert len(gated_setups) >= 4, sorted(standings)
    # One line per gated run at most, and identical iterations folded into one line.
    assert 0 < gated_lines < sum(standings[s]["gatedRuns"] for s in gated_setups)
    for setup in gated_setups:
        standing = standings[setup]
        assert standing["meanOutcome"] == 0.0, standing
        assert standing["gatedRuns"] == standing["runs"] > 0, standing
        assert standing["gatedByKind"]["IntegrityCatastrophic"] == standing["runs"], standing
        assert all(run["outcomeScore"] == 0.0 for run in standing["gated"]), standing
    rows = json.loads((out / "leaderboard" / "rows.json").read_text("utf-8"))
    by_setup: dict[str, list[dict[str, object]]] = {}
    for row in rows:
        by_setup.setdefault(str(row["setupId"]), []).append(row)
    assert {r["outcomeScore"] for r in by_setup["scripted-honest"]} == {1.0}
    cheaters = [s for s in by_setup if "cheat" in s]
    assert len(cheaters) >= 4
    for setup in cheaters:
        for row in by_setup[setup]:
            assert row["outcomeScore"] == 0.0, (setup, row)
            assert row["correctnessScore"] == 1.0, "the cheaters' answers are correct"
            assert "IntegrityCatastrophic" in row["catastrophicKinds"]  # type: ignore[operator]
    html = (out / "leaderboard" / "leaderboard.html").read_text("utf-8")
    assert "IntegrityCatastrophic" in html and "<script" in html
