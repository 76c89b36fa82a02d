"""A real ``distributed`` cluster for the tests: a scheduler and worker processes started
with the ``dask`` command on 127.0.0.1, and stopped (killed) when the test is done; plus
a small operator tree (tasks, a standard-library agent, a home) to run on it."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DASK = Path(sys.executable).parent / "dask"
# Generous bounds that only keep a broken build from hanging the suite.
START_WITHIN_S = 60.0

AGENT_SCRIPT = '''"""A standard-library agent: sleeps as long as its directory's sleep_s file says
(read at every run), then writes the answer its prompt asks for through a real shell."""
import json, os, subprocess, sys, time
here = os.path.dirname(os.path.abspath(__file__))
with open(os.path.join(here, "sleep_s")) as handle:
    time.sleep(float(handle.read().strip() or 0))
prompt = sys.argv[1]
answer = prompt.rsplit(" ", 1)[-1].strip(".")
command = f"printf '%s\\\\n' {answer} > answer.txt"
done = subprocess.run(["/bin/sh", "-c", command], capture_output=True, text=True)
with open(os.environ["BENCHGUARD_TRAJECTORY"], "a") as log:
    log.write(json.dumps({"name": "shell", "args": {"command": command},
                          "result": done.stdout + done.stderr, "status": "completed"}) + "\\n")
print("wrote", answer)
'''


@dataclass
class Tree:
    """Tasks, an agent directory (``sleepy.yaml``) and a home, under ``root``."""

    root: Path
    tasks: Path
    agent: Path
    home: Path
    results: Path

    def set_sleep(self, seconds: float) -> None:
        (self.agent.parent / "sleep_s").write_text(f"{seconds}\n")


def make_tree(root: Path, tasks: int, *, sleep_s: float = 0.0, check_env: str = "") -> Tree:
    """``tasks`` tasks asking for a number in answer.txt, and the sleepy agent. With
    ``check_env``, the agent's pre-flight check passes only where that variable is set."""
    tasks_dir = root / "tasks"
    for index in range(tasks):
        folder = tasks_dir / f"t{index:02d}"
        folder.mkdir(parents=True)
        (folder / "task.yaml").write_text(
            f"name: task {index}\n"
            f"prompt: 'Write this number to answer.txt, alone on its line: {100 + index}.'\n"
            "timeout: 120\n"
            "verification:\n"
            "  - name: answer\n"
            "    role: correctness\n"
            "    file: answer.txt\n"
            f"    matches: '^\\s*{100 + index}\\s*$'\n"
        )
    agents = root / "agents"
    agents.mkdir()
    (agents / "sleepy.py").write_text(AGENT_SCRIPT)
    check = ""
    env = ""
    if check_env:
        check = (
            'check_argv: ["{python}", "-c", "import os, sys; '
            f"sys.exit(0 if os.environ.get('{check_env}') else 1)\"]\n"
        )
        env = f"env: [{check_env}]\n"
    (agents / "sleepy.yaml").write_text(
        "name: sleepy\n"
        'argv: ["{python}", "{agent_dir}/sleepy.py", "{prompt}"]\n'
        "trajectory: jsonl\n"
        "model: scripted\n" + env + check
    )
    tree = Tree(root, tasks_dir, agents / "sleepy.yaml", root / "home", root / "results")
    tree.home.mkdir()
    tree.set_sleep(sleep_s)
    return tree


@dataclass
class Cluster:
    """A running scheduler and its workers (``workers``: name -> process)."""

    address: str
    scheduler: subprocess.Popen[bytes]
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def kill_worker(self, name: str) -> None:
        process = self.workers[name]
        process.send_signal(signal.SIGKILL)
        process.wait(timeout=30)


def _wait_for_workers(address: str, count: int) -> None:
    from distributed import Client

    with Client(address, timeout=START_WITHIN_S) as client:  # type: ignore[no-untyped-call, unused-ignore]
        client.wait_for_workers(count, timeout=START_WITHIN_S)


def start_worker(
    cluster: Cluster, name: str, root: Path, env: Mapping[str, str] | None = None
) -> None:
    """One single-slot worker process without a nanny (the agents are its children; a
    SIGKILL takes the worker down for good, as a lost machine would)."""
    log = (root / f"worker-{name}.log").open("wb")
    cluster.workers[name] = subprocess.Popen(
        [
            *(str(DASK), "worker", cluster.address, "--nthreads", "1", "--no-nanny"),
            *("--name", name, "--no-dashboard", "--host", "127.0.0.1"),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )


@contextmanager
def running_cluster(
    root: Path, workers: int, env: Mapping[str, Mapping[str, str]] | None = None
) -> Iterator[Cluster]:
    """A scheduler and ``workers`` workers named w0, w1, ...; ``env`` adds variables to
    the named workers' environments."""
    root.mkdir(parents=True, exist_ok=True)
    scheduler_file = root / "scheduler.json"
    log = (root / "scheduler.log").open("wb")
    scheduler = subprocess.Popen(
        [
            *(str(DASK), "scheduler", "--host", "127.0.0.1", "--port", "0", "--no-dashboard"),
            *("--scheduler-file", str(scheduler_file)),
        ],
        stdout=log,
        stderr=subprocess.STDOUT,
        start_new_session=True,
    )
    cluster: Cluster | None = None
    try:
        deadline = time.monotonic() + START_WITHIN_S
        while not scheduler_file.exists() or not scheduler_file.read_text().strip():
            if time.monotonic() > deadline or scheduler.poll() is not None:
                raise RuntimeError(
                    f"scheduler did not start: {(root / 'scheduler.log').read_text()}"
                )
            time.sleep(0.1)
        address = json.loads(scheduler_file.read_text())["address"]
        cluster = Cluster(address, scheduler)
        for index in range(workers):
            name = f"w{index}"
            start_worker(cluster, name, root, (env or {}).get(name))
        _wait_for_workers(address, workers)
        yield cluster
    finally:
        for process in [*(cluster.workers.values() if cluster else []), scheduler]:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait(timeout=30)


def results(run_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]], dict[str, Any]]:
    """(records, rows, manifest) of a published batch."""
    document = json.loads((run_dir / "results.json").read_text())
    rows = json.loads((run_dir / "rows.json").read_text())
    manifest = json.loads((run_dir / "manifest.json").read_text())
    return document["records"], rows, manifest
