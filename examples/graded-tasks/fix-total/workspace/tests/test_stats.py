"""The grading tests for stats.total (the task folder's copy is the one that grades)."""

import stats


def test_total_of_several():
    assert stats.total([17, 23, 40, 57]) == 137


def test_total_of_one():
    assert stats.total([5]) == 5


def test_total_of_none():
    assert stats.total([]) == 0
