"""The per-run memory limit's pieces (harness/memory_limit): the option's sizes and its
default, what is written for a v2 and a v1 host, how an OOM kill is read back and put
on the record (the end-to-end attack: test_adversary_memory_hog.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from benchguard.errors import BadInputError
from benchguard.harness import cgroup, memory_limit
from benchguard.harness.containment import RunContainment
from benchguard.harness.job import _over_memory
from benchguard.harness.memory_limit import (
    MIN_MEMORY_BUDGET,
    default_memory_budget,
    parse_memory_budget,
)

GIB = 1 << 30


@pytest.mark.parametrize(
    ("text", "expected"),
    [("512M", 512 << 20), ("4G", 4 * GIB), ("1536MiB", 1536 << 20), (None, None), ("", None)],
)
def test_sizes_are_read_with_their_units_and_none_is_the_default(
    text: str | None, expected: int | None
) -> None:
    assert parse_memory_budget(text) == expected


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("lots", "--memory-budget 'lots': not a size"),
        ("4 GB", "--memory-budget '4 GB': not a size"),
        ("-1G", "--memory-budget '-1G': not a size"),
        ("16M", "--memory-budget '16M': below the smallest budget, 64 MiB"),
    ],
)
def test_a_bad_size_names_the_option_and_the_value(text: str, message: str) -> None:
    with pytest.raises(BadInputError) as raised:
        parse_memory_budget(text)
    assert str(raised.value).startswith(message)


def test_the_default_is_three_quarters_of_the_machine_over_the_runs_at_once(
    tmp_path: Path,
) -> None:
    """Guards against a default that lets the runs at once take the whole machine
    (the harness and the rest of it keep a quarter), or one below the minimum."""
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       25165824 kB\nMemFree:  1 kB\n", "ascii")
    assert default_memory_budget(1, meminfo) == 18 * GIB
    assert default_memory_budget(2, meminfo) == 9 * GIB
    assert default_memory_budget(10_000, meminfo) == MIN_MEMORY_BUDGET
    assert default_memory_budget(2, tmp_path / "missing") == 4 * GIB


def test_a_v2_host_enables_memory_down_to_the_batch_and_limits_each_run(
    tmp_path: Path,
) -> None:
    """Guards against a v2 run cgroup without the memory controller (each level down to
    the batch must enable it), and a limit that swap could carry past."""
    own = tmp_path / "own"
    parent = own / "benchguard"
    batch = parent / "h1-2-0"
    run = batch / "run-0-x"
    run.mkdir(parents=True)
    (own / "cgroup.controllers").write_text("cpuset cpu io memory pids\n", "ascii")
    for directory in (own, parent, batch):
        (directory / "cgroup.subtree_control").write_text("cpu", "ascii")
    (run / "memory.swap.max").write_text("max\n", "ascii")
    memory = memory_limit._enable_v2(own, parent, batch)
    assert isinstance(memory, memory_limit.BatchMemory), memory
    for directory in (own, parent, batch):
        assert (directory / "cgroup.subtree_control").read_text("ascii") == "+memory"
    limit = memory.new_run(run, 128 << 20)
    assert limit.join == [] and limit.limit == 128 << 20
    assert (run / "memory.max").read_text("ascii") == str(128 << 20)
    assert (run / "memory.swap.max").read_text("ascii") == "0"
    (run / "memory.events").write_text("low 0\nhigh 0\nmax 9\noom 2\noom_kill 2\n", "ascii")
    assert limit.oom_kills() == 2


def test_a_v2_hierarchy_without_memory_says_so(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("cpu pids\n", "ascii")
    reason = memory_limit._enable_v2(tmp_path, tmp_path, tmp_path)
    assert isinstance(reason, str) and "no memory controller" in reason


def test_a_v1_run_is_limited_in_its_own_directory_that_its_first_process_joins(
    tmp_path: Path,
) -> None:
    """Guards against a v1 limit that no process joins, or a run directory left
    behind; the OOM count is memory.oom_control's."""
    batch = tmp_path / "h1-2-0"
    batch.mkdir()
    memory = memory_limit.BatchMemory("cgroup1", batch)
    run = memory.new_run(tmp_path / "unified" / "run-0-x", 256 << 20)
    directory = batch / "run-0-x"
    assert run.join == [directory / "cgroup.procs"] and run.directory == directory
    assert (directory / "memory.limit_in_bytes").read_text("ascii") == str(256 << 20)
    assert not (directory / "memory.memsw.limit_in_bytes").exists()  # no swap accounting
    (directory / "memory.oom_control").write_text(
        "oom_kill_disable 0\nunder_oom 0\noom_kill 3\n", "ascii"
    )
    assert run.oom_kills() == 3
    for name in ("memory.limit_in_bytes", "memory.oom_control"):
        (directory / name).unlink()
    run.remove()
    assert not directory.exists()


def test_an_oom_kill_is_the_runs_own_error_with_its_limit() -> None:
    assert _over_memory({"memory_oom_kills": 1, "memory_limit": 128 << 20}) == (
        "memory limit reached: the kernel killed 1 process of this run at its memory "
        "limit of 128 MiB (--memory-budget)"
    )
    assert _over_memory({"memory_oom_kills": 0, "memory_limit": 128 << 20}) is None
    assert _over_memory({"memory_oom_kills": None, "memory_limit": None}) is None
    assert _over_memory(None) is None


def test_a_root_run_on_this_host_is_oom_killed_within_its_limit() -> None:
    """Guards against a limit made but never joined (or left behind): a process of the
    run that touches more than its limit is killed by the kernel, the run's facts say
    so, and its v1 directory is gone with the run."""
    if os.geteuid() != 0:
        pytest.skip("memory cgroups need root here")
    batch = cgroup.BatchCgroups.open()
    assert isinstance(batch, cgroup.BatchCgroups), batch
    if isinstance(batch.memory, str):
        batch.close()
        pytest.skip(f"no memory controller on this host: {batch.memory}")
    run = RunContainment.start(batch, "memory", memory=MIN_MEMORY_BUDGET)
    try:
        assert run.cgroup is not None and run.cgroup.memory is not None
        for traced in (False, True):
            done = subprocess.run(
                run.outer(["python3", "-c", "x = b'x' * (256 << 20)"], traced=traced),
                capture_output=True,
                check=False,
            )
            assert done.returncode == -9, done
        facts = run.facts()
        directory = run.cgroup.memory.directory
    finally:
        run.end()
        assert run.cgroup is not None
        run.cgroup.remove()
        batch.close()
    assert facts["memory_limit"] == MIN_MEMORY_BUDGET, facts
    assert facts["memory_limit_reached"] is True and facts["memory_oom_kills"] == 2, facts
    assert directory is None or not directory.exists()


def test_budgets_past_the_machine_are_warned_of(tmp_path: Path) -> None:
    meminfo = tmp_path / "meminfo"
    meminfo.write_text("MemTotal:       4194304 kB\n", "ascii")
    assert memory_limit.memory_overcommit(2 * GIB, 2, meminfo) is None
    assert memory_limit.memory_overcommit(None, 64, meminfo) is None
    assert memory_limit.memory_overcommit(3 * GIB, 2, meminfo) == (
        "--memory-budget 3 GiB x -j 2 is more than this machine's memory (4 GiB): runs at "
        "their limits together can still exhaust it"
    )


def test_a_memory_budget_below_the_disk_budget_is_warned_of() -> None:
    assert memory_limit.below_disk_budget(4 * GIB, 2 * GIB) is None
    assert memory_limit.below_disk_budget(None, 2 * GIB) is None
    warning = memory_limit.below_disk_budget(128 << 20, 2 * GIB)
    assert warning is not None and warning.startswith(
        "--memory-budget 128 MiB is below --disk-budget 2 GiB"
    )
