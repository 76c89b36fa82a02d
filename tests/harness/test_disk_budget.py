"""The disk budget's parts (harness/disk_budget.py): the option's sizes, the bounded
walk, the free-space check, and the transcript's bound."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchguard.errors import BadInputError
from benchguard.harness.disk_budget import (
    MIB,
    PREFLIGHT_MARGIN,
    RunDisk,
    free_space_problem,
    parse_budget,
    size_text,
    walked_usage,
    xfsz_exit,
)
from benchguard.harness.transcript_channel import TranscriptChannel


@pytest.mark.parametrize(
    ("text", "expected"),
    [("2GiB", 2 << 30), ("512MiB", 512 << 20), ("64m", 64 << 20), ("8388608", 8 << 20)],
)
def test_sizes_are_read_with_their_units(text: str, expected: int) -> None:
    assert parse_budget(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("lots", "--disk-budget 'lots': not a size"),
        ("2 GB", "--disk-budget '2 GB': not a size"),
        ("-5MiB", "--disk-budget '-5MiB': not a size"),
        ("1MiB", "--disk-budget '1MiB': below the smallest budget, 4 MiB"),
    ],
)
def test_a_bad_size_names_the_value(text: str, message: str) -> None:
    with pytest.raises(BadInputError) as raised:
        parse_budget(text)
    assert str(raised.value).startswith(message)


def test_sizes_are_shown_for_people() -> None:
    assert [size_text(n) for n in (700, 32 << 20, 3 << 29, 2 << 30)] == [
        "700 B",
        "32 MiB",
        "1.5 GiB",
        "2 GiB",
    ]


def test_the_walk_counts_blocks_once_per_inode_and_stops_at_its_bound(tmp_path: Path) -> None:
    """Guards against a hard link counting twice, a symlink being followed, and a tree of
    many small entries being walked to its end."""
    (tmp_path / "deep" / "er").mkdir(parents=True)
    (tmp_path / "deep" / "er" / "data").write_bytes(b"x" * MIB)
    os.link(tmp_path / "deep" / "er" / "data", tmp_path / "twin")
    (tmp_path / "away").symlink_to("/usr")
    used = walked_usage(tmp_path)
    assert used is not None and MIB <= used < 2 * MIB
    for index in range(20):
        (tmp_path / f"f{index}").touch()
    assert walked_usage(tmp_path, max_entries=10) is None


def test_a_tree_past_the_budget_is_over_it(tmp_path: Path) -> None:
    disk = RunDisk(tmp_path, 4 * MIB, mount_problem="not root")
    assert disk.look() is None
    (tmp_path / "big").write_bytes(b"y" * (5 * MIB))
    reason = disk.look()
    assert reason is not None and "of its disk budget of 4 MiB" in reason
    facts = disk.facts()
    assert facts["enforced_by"] == ["rlimit-fsize", "watchdog"]
    assert facts["mount_unavailable"] == "not root" and facts["peak_bytes"] >= 5 * MIB


def test_free_space_is_asked_for_every_parallel_run(tmp_path: Path) -> None:
    info = os.statvfs(tmp_path)
    free = info.f_bavail * info.f_frsize
    assert free_space_problem([tmp_path], 4 * MIB, 1) is None
    problem = free_space_problem([tmp_path, tmp_path], free, 2)
    assert problem is not None
    assert problem.startswith(f"{tmp_path}: ") and "2 parallel run(s)" in problem
    assert size_text(PREFLIGHT_MARGIN) in problem


def test_a_signal_25_exit_is_the_file_size_limit() -> None:
    assert xfsz_exit(-25) and xfsz_exit(153)
    assert not xfsz_exit(0) and not xfsz_exit(1) and not xfsz_exit(None)


def test_the_transcript_copy_stops_at_its_limit(tmp_path: Path) -> None:
    """Guards against the harness's copy of the transcript (on the host's disk, outside
    the run's scratch) growing without bound."""
    channel = TranscriptChannel(tmp_path / "trajectory.jsonl", limit=1000)
    try:
        fd = os.open(tmp_path / "trajectory.jsonl", os.O_WRONLY)
        for _ in range(10):
            os.write(fd, b"z" * 500)
        os.close(fd)
        channel.close()
        assert channel.overflowed
        assert channel.stored.stat().st_size == 1000
    finally:
        channel.remove()
