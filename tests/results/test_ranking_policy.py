"""The leaderboard's ranked mean gives no silent credit to runs nobody could verify."""

from __future__ import annotations

from typing import Any

import pytest

from benchguard.results.leaderboard import build_leaderboard, render_html, render_table
from benchguard.results.rows import SCHEMA_VERSION, ResultRow


def _row(setup: str, task: str, outcome: float | None, **fields: Any) -> ResultRow:
    return ResultRow.model_validate(
        {
            "schemaVersion": SCHEMA_VERSION,
            "setupId": setup,
            "runId": "run_1",
            "t": "2026-01-01T00:00:00Z",
            "taskFolder": task,
            "outcomeScore": outcome,
            "integrityStatus": "clean",
            "status": "success",
            **fields,
        }
    )


def _rows() -> list[ResultRow]:
    return [
        # Verified clean, modest.
        _row("verified", "t1", 0.6),
        _row("verified", "t2", 0.6),
        # Perfect on paper, but one run left nothing to check and one was never scanned.
        _row("unchecked", "t1", 1.0, integrityStatus="no_data"),
        _row("unchecked", "t2", 1.0, integrityStatus="unverified"),
        _row("unchecked", "t3", 1.0),
    ]


def _standing(board: Any, setup: str) -> Any:
    return next(s for s in board.standings if s.setup_id == setup)


def test_by_default_unverifiable_runs_count_as_zero() -> None:
    """Guards against a setup whose runs could not be verified outranking a verified one."""
    board = build_leaderboard(_rows())
    assert board.unverified_policy == "zero"
    unchecked = _standing(board, "unchecked")
    assert unchecked.mean_outcome == pytest.approx(1 / 3)
    assert unchecked.scored_runs == 3
    assert [s.setup_id for s in board.standings] == ["verified", "unchecked"]
    assert board.to_json()["unverifiedPolicy"] == "zero"


@pytest.mark.parametrize(("policy", "mean", "scored"), [("include", 1.0, 3), ("exclude", 1.0, 1)])
def test_include_and_exclude_are_explicit_choices(policy: Any, mean: float, scored: int) -> None:
    board = build_leaderboard(_rows(), unverified_policy=policy)
    unchecked = _standing(board, "unchecked")
    assert unchecked.mean_outcome == mean and unchecked.scored_runs == scored
    assert board.standings[0].setup_id == "unchecked"


def test_the_page_and_the_table_say_which_policy_ranked_them() -> None:
    for policy, words in (
        ("zero", "count as 0"),
        ("include", "with their own outcome"),
        ("exclude", "left out of the mean"),
    ):
        board = build_leaderboard(_rows(), unverified_policy=policy)  # type: ignore[arg-type]
        assert words in render_html(board)
        [table, *_] = render_table(board).renderables
        assert words in str(getattr(table, "caption", ""))


def test_an_unknown_policy_is_refused() -> None:
    with pytest.raises(ValueError, match="allowed values are zero, include, exclude"):
        build_leaderboard(_rows(), unverified_policy="lenient")  # type: ignore[arg-type]


def test_among_equal_means_errored_runs_rank_last() -> None:
    """Guards against a setup that never ran (every run errored, 0.0) ranking above a
    caught cheater on the setup id alone."""
    rows = [
        _row("a-misspelled", "t1", 0.0, status="error", error="agent could not start"),
        _row("z-cheater", "t1", 0.0, catastrophic=True, integrityStatus="flagged"),
    ]
    board = build_leaderboard(rows)
    assert [s.setup_id for s in board.standings] == ["z-cheater", "a-misspelled"]
    assert _standing(board, "a-misspelled").no_credit_runs == 1
