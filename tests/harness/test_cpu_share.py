"""The per-run CPU share's pieces (harness/cpu_share): where the controller is found,
what is written for a v2 host, and that a run never starts outside a share it failed
to join (the end-to-end attack: test_adversary_cpu_starve.py)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from benchguard.harness import cgroup, cpu_share
from benchguard.harness.cgroup_controllers import v1_mounts
from benchguard.harness.containment import JOIN_NAME, JOIN_SCRIPT, SHELL
from benchguard.harness.launcher_build import native_launcher

HYBRID = (
    "31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755\n"
    "32 31 0:29 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu\n"
    "33 31 0:30 / /sys/fs/cgroup/cpuacct rw,relatime - cgroup cgroup rw,cpuacct\n"
    "34 31 0:31 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids\n"
    "41 31 0:38 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw\n"
)


def test_the_v1_cpu_and_pids_hierarchies_are_found_by_controller(tmp_path: Path) -> None:
    """Guards against taking cpuacct or cpuset for cpu, and against missing a combined
    ``cpu,cpuacct`` mount (other distributions mount them together)."""
    hybrid = tmp_path / "hybrid"
    hybrid.write_text(HYBRID, "utf-8")
    combined = tmp_path / "combined"
    combined.write_text(
        "32 31 0:29 /lxc /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n", "utf-8"
    )
    unified = tmp_path / "unified"
    unified.write_text("30 23 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n", "utf-8")
    assert v1_mounts(cpu_share.V1_CONTROLLERS, hybrid) == {
        "cpu": (Path("/sys/fs/cgroup/cpu"), "/"),
        "pids": (Path("/sys/fs/cgroup/pids"), "/"),
    }
    assert v1_mounts(cpu_share.V1_CONTROLLERS, combined) == {
        "cpu": (Path("/sys/fs/cgroup/cpu,cpuacct"), "/lxc")
    }
    assert v1_mounts(cpu_share.V1_CONTROLLERS, unified) == {}


def test_a_v2_host_enables_cpu_down_to_the_batch_and_weighs_every_run_alike(
    tmp_path: Path,
) -> None:
    """Guards against a v2 host whose run cgroups have no cpu controller (each level
    down to the batch must enable it) or unequal weights."""
    own = tmp_path / "own"
    parent = own / "benchguard"
    batch = parent / "h1-2-0"
    run = batch / "run-0-x"
    run.mkdir(parents=True)
    (own / "cgroup.controllers").write_text("cpuset cpu io memory pids\n", "ascii")
    for directory in (own, parent, batch):
        (directory / "cgroup.subtree_control").write_text("", "ascii")
    share = cpu_share._enable_v2(own, parent, batch)
    assert isinstance(share, cpu_share.BatchShare), share
    assert share.kind == "cgroup2" and share.pids
    for directory in (own, parent, batch):
        assert (directory / "cgroup.subtree_control").read_text("ascii") == "+cpu +pids"
    assert share.new_run(run).join == []
    assert (run / "cpu.weight").read_text("ascii") == str(cpu_share.WEIGHT)
    assert (run / "pids.max").read_text("ascii") == str(cpu_share.PIDS_MAX)


def test_a_v2_hierarchy_without_cpu_says_so(tmp_path: Path) -> None:
    (tmp_path / "cgroup.controllers").write_text("", "ascii")
    reason = cpu_share._enable_v2(tmp_path, tmp_path, tmp_path)
    assert isinstance(reason, str) and "no cpu controller" in reason


def test_the_join_script_never_runs_the_command_outside_a_cgroup_it_cannot_join(
    tmp_path: Path,
) -> None:
    """Guards against a run started outside its share: a join that fails is exit 125
    naming the file, and the command never runs."""
    ran = tmp_path / "ran"
    missing = tmp_path / "no-such-cgroup" / "cgroup.procs"
    done = subprocess.run(
        [SHELL, "-c", JOIN_SCRIPT, JOIN_NAME, str(missing), "--", "touch", str(ran)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 125, done
    assert str(missing) in done.stderr and JOIN_NAME in done.stderr
    assert not ran.exists()


def test_the_native_spawner_never_runs_the_command_outside_a_cgroup_it_cannot_join(
    tmp_path: Path,
) -> None:
    """As the join script: the spawner's child exits 125 when a ``--join`` fails."""
    native = native_launcher()
    if native is None or os.geteuid() != 0:
        pytest.skip("needs the native launcher and a run cgroup (root)")
    batch = cgroup.BatchCgroups.open()
    assert isinstance(batch, cgroup.BatchCgroups), batch
    run = batch.new_run("join")
    ran = tmp_path / "ran"
    missing = tmp_path / "no-such-cgroup" / "cgroup.procs"
    try:
        done = subprocess.run(
            [
                str(native),
                "--spawn",
                str(run.directory),
                f"--join={missing}",
                "--",
                "touch",
                str(ran),
            ],
            capture_output=True,
            text=True,
            check=False,
        )
    finally:
        run.remove()
        batch.close()
    assert done.returncode == 125, done
    assert str(missing) in done.stderr
    assert not ran.exists()


def test_a_root_run_on_this_host_joins_its_share_and_leaves_no_directory() -> None:
    """Guards against a share made but never joined (or left behind): the run's first
    process is in its v1 cpu cgroup, and the directory is gone with the run."""
    if os.geteuid() != 0:
        pytest.skip("v1 cgroups need root here")
    batch = cgroup.BatchCgroups.open()
    assert isinstance(batch, cgroup.BatchCgroups), batch
    if isinstance(batch.share, str):
        batch.close()
        pytest.skip(f"no cpu share on this host: {batch.share}")
    from benchguard.harness.containment import RunContainment

    run = RunContainment.start(batch, "share")
    try:
        assert run.cgroup is not None and run.facts()["cpu_share"] in ("cgroup1", "cgroup2")
        for traced in (False, True):
            done = subprocess.run(
                run.outer(["cat", "/proc/self/cgroup"], traced=traced),
                capture_output=True,
                text=True,
                check=True,
            )
            if batch.share.kind == "cgroup1":
                cpu = [line for line in done.stdout.splitlines() if ":cpu:" in line]
                assert cpu == [cpu[0]] and cpu[0].endswith("/" + run.cgroup.directory.name), cpu
        directories = list(run.cgroup.share.directories) if run.cgroup.share else []
    finally:
        run.end()
        assert run.cgroup is not None
        run.cgroup.remove()
        batch.close()
    assert directories and not any(path.exists() for path in directories)
