"""The leaderboard's uncertainty and per-task view: a mean carries its standard error,
and each task shows its setups best first."""

from __future__ import annotations

import math

from benchguard.results.leaderboard import (
    LEADERBOARD_SCHEMA_VERSION,
    build_leaderboard,
    render_html,
    standard_error,
)

from .test_leaderboard import gated, row


def test_standard_error_is_sample_stdev_over_root_n() -> None:
    assert standard_error([]) is None and standard_error([1.0]) is None
    # stdev of (0, 1) is sqrt(0.5); over sqrt(2) gives 0.5.
    assert standard_error([0.0, 1.0]) == 0.5
    values = [0.2, 0.4, 0.9, 1.0]
    mean = sum(values) / 4
    expected = math.sqrt(sum((v - mean) ** 2 for v in values) / 3) / 2
    assert math.isclose(standard_error(values) or 0.0, expected)


def test_standings_and_tasks_carry_standard_errors() -> None:
    rows = [
        row("a", "t1", 0, outcome_score=1.0),
        row("a", "t1", 1, outcome_score=0.0),
        gated("a", "t2", 0),
        row("b", "t1", 0, outcome_score=0.5),
        row("b", "t2", 0, outcome_score=None, integrity_status="no_data"),
    ]
    # Excluded, b's no_data run is not scored (by default it would count as 0).
    board = build_leaderboard(rows, unverified_policy="exclude")
    a = next(s for s in board.standings if s.setup_id == "a")
    assert a.mean_outcome is not None and math.isclose(a.mean_outcome, 1 / 3)
    assert a.stderr_outcome is not None and math.isclose(
        a.stderr_outcome, math.sqrt(1 / 3) / math.sqrt(3)
    )
    b = next(s for s in board.standings if s.setup_id == "b")
    assert b.stderr_outcome is None  # one scored run: no spread to estimate
    cells = [(t.task_folder, t.setup_id, t.mean_outcome, t.stderr_outcome) for t in board.tasks]
    assert cells == [
        ("t1", "a", 0.5, 0.5),  # equal means: by setup id
        ("t1", "b", 0.5, None),
        ("t2", "a", 0.0, None),
        ("t2", "b", None, None),
    ]
    published = board.to_json()
    assert published["schemaVersion"] == LEADERBOARD_SCHEMA_VERSION
    standings = published["standings"]
    assert isinstance(standings, list) and "stderrOutcome" in standings[0]
    assert isinstance(published["tasks"], list) and len(published["tasks"]) == 4
    assert "0.333 ± 0.333" in render_html(board)
