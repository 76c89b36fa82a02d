"""``benchguard run --engine dask`` on a real cluster: a ``dask scheduler`` and ``dask
worker`` processes on 127.0.0.1, the real ``benchguard`` command as a subprocess.

Each test says what the cluster must not lose: a run that did not cheat, the evidence
of one that did, a record when a worker dies, the agents when the client is stopped."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from benchguard.workflows.run import INSECURE_SCHEDULER_ENV

from .cluster_helpers import Cluster, Tree, make_tree, results, running_cluster, start_worker

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
# Only bounds a broken build; the agents the tests wait for start within seconds.
WAIT_S = 90.0
# What the issue promises: the client's stop kills the workers' agents within 5 s.
STOP_WITHIN_S = 5.0
# Fields that differ between two runs of the same batch (timings, places, the worker).
VOLATILE = {
    *("started_at", "finished_at", "duration_s", "worker", "scan_context", "runId", "t"),
    *("events", "log_bytes"),  # the audit counts syscalls, which vary run to run
    "cgroup",  # the run's own cgroup: a place, named per harness process
    # The default memory limit per run (harness.memory_limit) is the machine's memory
    # over the runs at once where they run: a worker's threads, a local batch's -j.
    "memory_limit",
    "marks",  # the mounts the fanotify audit watched: places
    # The harness's own mounts the audit left unwatched: each run's scratch is a tmpfs
    # of its own (harness.disk_budget), so the count holds whichever runs were live.
    "ignored_harness_mounts",
    # How many events of other processes on those mounts the audit dropped: two workers
    # on one machine read the same file system at once; a count, like events.
    "attributed_by",
    # Metadata changes of processes already gone that the FAN_ATTRIB group could not
    # attribute (a neighbour's as often as not): a count, like events.
    "metadata_dropped",
    # Inodes the fanotify audit marked ignored: which recur depends on what the
    # machine's other processes opened first (a count, like events).
    "ignored_inodes",
}


@pytest.fixture(autouse=True)
def _plain_scheduler_accepted(monkeypatch: pytest.MonkeyPatch) -> None:
    """The test clusters speak plain TCP on 127.0.0.1 with agents of the tests' own: the
    operator's acceptance of that risk, which every client these tests start inherits."""
    monkeypatch.setenv(INSECURE_SCHEDULER_ENV, "1")


def test_a_plain_scheduler_is_refused_while_agents_have_the_network(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards against a named cluster without TLS taking a batch whose agents can reach
    it (a red team's agent had a worker run its code there and forged 4/4): refused
    before anything runs, saying what to do."""
    monkeypatch.delenv(INSECURE_SCHEDULER_ENV)
    tree = make_tree(tmp_path / "op", tasks=1)
    done = benchguard(*run_args(tree, "--engine", "dask", "--scheduler", "tcp://127.0.0.1:9"))
    assert done.returncode == 2, done.stdout + done.stderr
    assert "is not a tls:// address" in done.stderr and INSECURE_SCHEDULER_ENV in done.stderr
    assert "Traceback" not in done.stderr
    assert not tree.results.exists() or not any(tree.results.iterdir())


def benchguard(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "benchguard", "run", *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
        **kwargs,
    )


def run_args(tree: Tree, *extra: str) -> list[str]:
    return [
        str(tree.tasks),
        "--agent",
        str(tree.agent),
        "--home",
        str(tree.home),
        "--out",
        str(tree.results),
        "--quiet",
        *extra,
    ]


def run_dir_of(done: subprocess.CompletedProcess[str]) -> Path:
    last = done.stdout.strip().splitlines()[-1]
    assert Path(last).is_dir(), done.stdout + done.stderr
    return Path(last)


def _parent(pid: int) -> int:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, IndexError, ValueError):
        return 0


def agents_running(cluster: Cluster) -> list[int]:
    """Pids of the sleepy test agent below this cluster's live workers, read from the
    kernel's process table (an agent orphaned by an earlier test's dead worker is not)."""
    workers = {p.pid for p in cluster.workers.values() if p.poll() is None}
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if b"sleepy.py" not in cmdline:
            continue
        pid = ancestor = int(entry.name)
        while ancestor > 1 and ancestor not in workers:
            ancestor = _parent(ancestor)
        if ancestor in workers:
            found.append(pid)
    return found


def wait_for_agents(cluster: Cluster, count: int) -> list[int]:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        pids = agents_running(cluster)
        if len(pids) >= count:
            return pids
        time.sleep(0.1)
    raise AssertionError(f"{count} agent(s) did not start within {WAIT_S}s")


def stable(value: Any) -> Any:
    """``value`` without the fields two identical batches may differ in."""
    if isinstance(value, dict):
        return {k: stable(v) for k, v in sorted(value.items()) if k not in VOLATILE}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


def test_honest_batch_runs_on_the_workers_and_publishes_what_a_local_batch_does(
    tmp_path: Path,
) -> None:
    """The records say they ran on the cluster's workers (both of them), every run is
    there once, and results, rows and manifest equal a local batch's but for timings
    and the worker."""
    tree = make_tree(tmp_path / "op", tasks=4, sleep_s=0.5)
    with running_cluster(tmp_path / "cluster", workers=2) as cluster:
        done = benchguard(
            *run_args(tree, "--iterations", "2", "--engine", "dask"),
            "--scheduler",
            cluster.address,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        from distributed import Client

        with Client(cluster.address) as client:  # type: ignore[no-untyped-call, unused-ignore]
            addresses = set(client.scheduler_info()["workers"])
    records, rows, manifest = results(run_dir_of(done))
    assert [(r["folder"], r["iteration"]) for r in records] == [
        (f"t{i:02d}", it) for it in (1, 2) for i in range(4)
    ]
    ran_on = {r["worker"]["address"] for r in records}
    assert ran_on == addresses, (ran_on, addresses)
    assert {r["worker"]["name"] for r in records} == {"w0", "w1"}
    assert all(r["status"] == "success" for r in records)
    assert all(row["outcomeScore"] == 1.0 for row in rows)
    # Each worker confined its agents with its own kernel's Landlock, in a fresh home.
    assert all(r["confined"] and r["landlock_abi"] >= 2 for r in records)
    assert {r["home_mode"] for r in records} == {"fresh"}
    assert manifest["cluster"]["refusedWorkers"] == []
    assert sorted(w["name"] for w in manifest["cluster"]["workers"]) == ["w0", "w1"]

    local = benchguard(*run_args(tree, "--iterations", "2", "-j", "2"))
    assert local.returncode == 0, local.stdout + local.stderr
    local_records, local_rows, local_manifest = results(run_dir_of(local))
    assert stable(rows) == stable(local_rows)
    assert stable(records) == stable(local_records)
    assert stable({k: v for k, v in manifest.items() if k != "cluster"}) == stable(local_manifest)


def test_cheating_batch_under_the_sandbox_is_flagged_on_the_workers(tmp_path: Path) -> None:
    """A cheat that reads its task's definition is flagged and zeroed on the cluster as
    it is locally: the workers run the same sandbox and detection."""
    home = tmp_path / "home"
    home.mkdir()
    with running_cluster(tmp_path / "cluster", workers=2) as cluster:
        done = benchguard(
            str(EXAMPLES / "tasks"),
            "--agent",
            str(EXAMPLES / "agents" / "cheat-task-yaml.yaml"),
            "--sandbox",
            "bwrap",
            "--home",
            str(home),
            "--out",
            str(tmp_path / "results"),
            "--quiet",
            "--engine",
            "dask",
            "--scheduler",
            cluster.address,
        )
    assert done.returncode == 1, done.stdout + done.stderr
    records, rows, _ = results(run_dir_of(done))
    assert records and all(r["sandboxed"] for r in records)
    assert all(r["worker"]["name"] in ("w0", "w1") for r in records)
    assert all(row["outcomeScore"] == 0.0 for row in rows)
    assert all(row["integrityStatus"] == "flagged" for row in rows)


def test_home_writes_kept_on_a_worker_come_back_to_the_client_run_directory(
    tmp_path: Path,
) -> None:
    """A fresh home's writes are evidence: what the honest agent wrote to ~/notes.md on
    the worker is kept in the client's run directory, where the record says it is."""
    home = tmp_path / "home"
    home.mkdir()
    with running_cluster(tmp_path / "cluster", workers=1) as cluster:
        done = benchguard(
            str(EXAMPLES / "tasks"),
            *("--agent", str(EXAMPLES / "agents" / "honest.yaml"), "--home", str(home)),
            *("--out", str(tmp_path / "results"), "--quiet", "--engine", "dask"),
            *("--scheduler", cluster.address),
        )
    assert done.returncode == 0, done.stdout + done.stderr
    run_dir = run_dir_of(done)
    records, _, _ = results(run_dir)
    [notes] = [r for r in records if r["folder"] == "write-notes"]
    kept = list((run_dir / "home-writes").glob("*write-notes*/**/notes.md"))
    assert kept and "next shift" in kept[0].read_text(), (notes.get("home_writes"), kept)
    assert not (home / "notes.md").exists()  # the operator's home template is untouched


def test_a_worker_that_fails_preflight_gets_no_work_and_the_manifest_says_why(
    tmp_path: Path,
) -> None:
    """w1 cannot run the agent (its pre-flight check fails there): no run lands on it,
    and the manifest names it with the reason."""
    tree = make_tree(tmp_path / "op", tasks=3, check_env="BG_TEST_WORKER_FIT")
    env = {"w0": {"BG_TEST_WORKER_FIT": "1"}}
    with running_cluster(tmp_path / "cluster", workers=2, env=env) as cluster:
        done = benchguard(*run_args(tree, "--engine", "dask"), "--scheduler", cluster.address)
    assert done.returncode == 0, done.stdout + done.stderr
    records, _, manifest = results(run_dir_of(done))
    assert len(records) == 3 and {r["worker"]["name"] for r in records} == {"w0"}
    refused = manifest["cluster"]["refusedWorkers"]
    assert [r["name"] for r in refused] == ["w1"]
    assert "pre-flight" in refused[0]["reason"] or "check" in refused[0]["reason"]
    assert "w1" in done.stderr


def test_a_batch_no_worker_can_run_stops_before_any_agent_and_leaves_no_run_dir(
    tmp_path: Path,
) -> None:
    """Every worker fails pre-flight: exit 2, each worker named with its reason, and no
    run directory (nothing was planned to run)."""
    tree = make_tree(tmp_path / "op", tasks=2, check_env="BG_TEST_WORKER_FIT")
    with running_cluster(tmp_path / "cluster", workers=1) as cluster:
        done = benchguard(*run_args(tree, "--engine", "dask"), "--scheduler", cluster.address)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "no worker of the cluster passed pre-flight" in done.stderr
    assert "BG_TEST_WORKER_FIT" in done.stderr and "Traceback" not in done.stderr
    assert not list(tree.results.glob("run_*"))


def test_a_worker_killed_mid_run_is_retried_once_elsewhere_and_recorded(tmp_path: Path) -> None:
    """SIGKILL of a worker while its agent runs: the job runs again on the other worker,
    the lost attempt is on the record, and no run is missing or doubled."""
    tree = make_tree(tmp_path / "op", tasks=2, sleep_s=4)
    with running_cluster(tmp_path / "cluster", workers=2) as cluster:
        client = subprocess.Popen(
            [
                *(sys.executable, "-m", "benchguard", "run"),
                *run_args(tree, "--engine", "dask", "--scheduler", cluster.address),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        wait_for_agents(cluster, 2)
        cluster.kill_worker("w1")
        out, err = client.communicate(timeout=300)
    assert client.returncode == 0, out + err
    records, _, _ = results(Path(out.strip().splitlines()[-1]))
    assert [r["folder"] for r in records] == ["t00", "t01"]
    assert all(r["status"] == "success" and r["worker"]["name"] == "w0" for r in records)
    retried = [r for r in records if r.get("lost_attempts")]
    assert len(retried) == 1, records
    assert [a["name"] for a in retried[0]["lost_attempts"]] == ["w1"]


def test_a_job_lost_twice_is_recorded_errored_and_resume_runs_it_again(tmp_path: Path) -> None:
    """Both workers die under the same job: when a third worker joins, the job is not
    run a third time but recorded errored, naming both workers; ``--resume`` then runs
    it again (a lost worker is not the agent's error)."""
    tree = make_tree(tmp_path / "op", tasks=1, sleep_s=30)
    with running_cluster(tmp_path / "cluster", workers=1) as cluster:
        client = subprocess.Popen(
            [
                *(sys.executable, "-m", "benchguard", "run"),
                *run_args(tree, "--engine", "dask", "--scheduler", cluster.address),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        first = wait_for_agents(cluster, 1)
        start_worker(cluster, "w1", tmp_path / "cluster")
        cluster.kill_worker("w0")
        _wait_for_new_agent(cluster, set(first))
        start_worker(cluster, "w2", tmp_path / "cluster")
        time.sleep(2)  # w2 joins and passes pre-flight before w1 is lost
        cluster.kill_worker("w1")
        out, err = client.communicate(timeout=300)
        assert client.returncode == 3, out + err
        # The jobs queued behind the killed ones launch nothing once the batch stopped.
        time.sleep(2.0)
        assert agents_running(cluster) == [], "an agent started after the stop"
        run_dir = Path(out.strip().splitlines()[-1])
        records, _, _ = results(run_dir)
        assert len(records) == 1 and records[0]["status"] == "error"
        assert "lost with its worker" in records[0]["error"]
        assert [a["name"] for a in records[0]["lost_attempts"]] == ["w0", "w1"]

        tree.set_sleep(0)
        resumed = benchguard(
            *run_args(tree, "--engine", "dask"),
            "--scheduler",
            cluster.address,
            "--resume",
            str(run_dir),
        )
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    records, _, _ = results(run_dir)
    assert len(records) == 1 and records[0]["status"] == "success"
    assert records[0]["worker"]["name"] == "w2"


def _wait_for_new_agent(cluster: Cluster, old: set[int]) -> None:
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if set(agents_running(cluster)) - old:
            return
        time.sleep(0.1)
    raise AssertionError("the retried job's agent did not start")


def test_sigint_on_the_client_kills_the_workers_agents_and_resume_finishes(
    tmp_path: Path,
) -> None:
    """SIGINT while agents run on the workers: they are gone within 5 s, the batch says
    it was interrupted (exit 3), and ``--resume RUN_DIR`` finishes every run once."""
    tree = make_tree(tmp_path / "op", tasks=4, sleep_s=60)
    with running_cluster(tmp_path / "cluster", workers=2) as cluster:
        args = [*run_args(tree, "--engine", "dask"), "--scheduler", cluster.address]
        client = subprocess.Popen(
            [sys.executable, "-m", "benchguard", "run", *args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        pids = wait_for_agents(cluster, 2)
        client.send_signal(signal.SIGINT)
        stopped = time.monotonic()
        while any(_alive(pid) for pid in pids) and time.monotonic() - stopped < WAIT_S:
            time.sleep(0.05)
        took = time.monotonic() - stopped
        out, err = client.communicate(timeout=120)
        assert not any(_alive(pid) for pid in pids)
        # Recorded, not asserted as a timing: the bound is the issue's, checked loosely
        # so a loaded machine cannot fail the suite; the bench prints the real figure.
        print(f"agents gone {took:.2f}s after SIGINT (promise: {STOP_WITHIN_S:g}s)")
        assert client.returncode == 3, out + err
        # No agent runs once the batch stopped. Here the client's cancel usually reaches
        # the queued jobs first; the worker's own refusal of a job that arrives after
        # the stop is held by test_a_job_that_reaches_a_stopped_worker_launches_nothing.
        time.sleep(2.0)
        assert agents_running(cluster) == [], "an agent started after the stop"
        run_dir = Path(out.strip().splitlines()[-1])
        manifest = json.loads((run_dir / "manifest.json").read_text())
        assert manifest["interruptedBy"] == "SIGINT"
        assert manifest["notRun"], manifest

        tree.set_sleep(0)
        resumed = benchguard(*args, "--resume", str(run_dir))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    records, _, manifest = results(run_dir)
    assert [r["folder"] for r in records] == ["t00", "t01", "t02", "t03"]
    assert all(r["status"] == "success" for r in records)
    assert manifest["notRun"] == [] and manifest["interruptedBy"] is None


def test_a_job_that_reaches_a_stopped_worker_launches_nothing(tmp_path: Path) -> None:
    """Guards the worker's own refusal: a job that reaches a worker after the batch was
    stopped there (it sat queued while the client's stop ran, and the client's cancel
    has not arrived) starts no agent and returns nothing. The client is frozen so the
    order is the test's: the client's stop on the worker (its agent killed), then the
    queued job, submitted by this test as the client would, with no cancel behind it."""
    from distributed import Client

    from benchguard.workflows.run_cluster import run_on_worker, stop_on_worker

    tree = make_tree(tmp_path / "op", tasks=2, sleep_s=60)
    with running_cluster(tmp_path / "cluster", workers=1) as cluster:
        args = [*run_args(tree, "--engine", "dask"), "--scheduler", cluster.address]
        batch = subprocess.Popen(
            [sys.executable, "-m", "benchguard", "run", *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            running = wait_for_agents(cluster, 1)
            batch.send_signal(signal.SIGSTOP)  # neither submits nor cancels from here on
            with Client(cluster.address, timeout=WAIT_S) as client:  # type: ignore[no-untyped-call, unused-ignore]
                # Pickled by value (the worker cannot import this test module).
                found = client.run(
                    lambda dask_worker: [
                        name for name in dask_worker.plugins if name.startswith("benchguard-run-")
                    ]
                )
                [plugin] = {name for names in found.values() for name in names}
                client.run(stop_on_worker, plugin)
                assert not any(_alive(pid) for pid in running), "the stop kills the agent"
                late = client.submit(run_on_worker, plugin, f"{plugin}-1", 1, "t01", 1, pure=False)
                assert late.result(timeout=WAIT_S) is None
                assert agents_running(cluster) == [], "an agent started after the stop"
        finally:
            batch.kill()
            batch.wait(timeout=60)


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def test_inputs_the_worker_received_are_checked_by_digest(tmp_path: Path) -> None:
    """A worker unpacks nothing whose digest is not the one the client sent."""
    from benchguard.harness.cluster_inputs import (
        InputsError,
        InputTrees,
        pack_inputs,
        unpack_inputs,
    )

    tree = make_tree(tmp_path / "op", tasks=1)
    inputs = pack_inputs(InputTrees(tree.tasks, tree.agent.parent, tree.home))
    assert inputs.bundle is not None
    forged = inputs.bundle.replace(b"100", b"999")
    with pytest.raises(InputsError, match="digest"):
        unpack_inputs(forged, inputs.digest, tmp_path / "w")
    assert not (tmp_path / "w").exists()
    trees = unpack_inputs(inputs.bundle, inputs.digest, tmp_path / "ok")
    assert (trees.tasks_dir / "t00" / "task.yaml").read_text() == (
        tree.tasks / "t00" / "task.yaml"
    ).read_text()
    assert os.listdir(trees.home) == []


def test_the_local_cluster_runs_the_batch_and_refuses_a_client_without_its_key(
    tmp_path: Path,
) -> None:
    """``--engine dask`` with no scheduler starts its own cluster on 127.0.0.1, where an
    agent on this machine can connect: a red team's agent found the port in
    /proc/net/tcp and had a worker (uid 0, outside Landlock) run its code. The local
    cluster speaks TLS with a key made for the batch, so a client without it is
    refused, and the batch itself still runs."""
    from distributed import Client

    from benchguard.engines.dask_jobs import cluster_client

    with cluster_client(None, 1) as client:
        address = str(client.scheduler.address)
        assert address.startswith("tls://127.0.0.1:")
        assert client.submit(sum, [1, 2]).result(timeout=60) == 3
        with pytest.raises(Exception):  # noqa: B017 - refused however distributed says it
            Client(address.replace("tls://", "tcp://"), timeout=5)  # type: ignore[no-untyped-call, unused-ignore]

    tree = make_tree(tmp_path / "op", tasks=2)
    done = benchguard(*run_args(tree, "--engine", "dask", "--workers", "2"))
    assert done.returncode == 0, done.stdout + done.stderr
    records, _, manifest = results(run_dir_of(done))
    assert manifest["cluster"]["scheduler"] == "local"
    assert all(r["worker"]["address"].startswith("tls://127.0.0.1:") for r in records)


def test_the_client_s_disk_budget_reaches_the_workers(tmp_path: Path) -> None:
    """Guards against a cluster batch running at the default 2 GiB whatever
    --disk-budget said: each worker enforces the client's budget on its runs (their
    records say 64 MiB), and refuses the batch at pre-flight, naming its own free space,
    when its disks cannot hold the client's budget."""
    tree = make_tree(tmp_path / "op", tasks=2)
    with running_cluster(tmp_path / "cluster", workers=1) as cluster:
        done = benchguard(
            *run_args(tree, "--engine", "dask", "--disk-budget", "64MiB"),
            "--scheduler",
            cluster.address,
        )
        assert done.returncode == 0, done.stdout + done.stderr
        records, _, _ = results(run_dir_of(done))
        assert [r["disk_budget"]["bytes"] for r in records] == [64 << 20] * 2
        refused = benchguard(
            *run_args(tree, "--engine", "dask", "--disk-budget", "1000TiB"),
            "--scheduler",
            cluster.address,
        )
    assert refused.returncode == 2, refused.stdout + refused.stderr
    assert "no worker of the cluster passed pre-flight" in refused.stderr
    assert "1000 TiB" in refused.stderr and "free" in refused.stderr, refused.stderr
    assert "Traceback" not in refused.stderr


def test_the_client_s_memory_budget_reaches_the_workers(tmp_path: Path) -> None:
    """Guards against a cluster batch whose workers limit each run to their own default
    whatever --memory-budget said (harness.memory_limit): a worker that can limit its
    runs limits them to the client's 256 MiB; one that cannot says why."""
    tree = make_tree(tmp_path / "op", tasks=1)
    with running_cluster(tmp_path / "cluster", workers=1) as cluster:
        done = benchguard(
            *run_args(tree, "--engine", "dask", "--memory-budget", "256M"),
            "--scheduler",
            cluster.address,
        )
    assert done.returncode == 0, done.stdout + done.stderr
    records, _, _ = results(run_dir_of(done))
    assert records
    for record in records:
        facts = record["containment"]
        if facts["memory_limit_unavailable"] is None:
            assert facts["memory_limit"] == 256 << 20, facts
        else:
            assert facts["memory_limit"] is None, facts
