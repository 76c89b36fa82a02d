"""The private seed reaches no program the environment starts (issue 22, part 3).

Before: verifiers' subprocess runtime copies the host environment (dropping only names
with ``API_KEY``), so a tool-using agent read ``REDACTION_PRESSURE_PRIVATE_SEED`` from
its own environment or from ``/proc/<ppid>/environ`` and regenerated the private
evaluation records. Here a trainer process is started with the secret in its initial
environment, as an operator would; it builds the private_eval taskset through
verifiers' loader, scores a reply (which starts scoring workers) and then runs an
agent program through verifiers' real ``SubprocessRuntime``, the way a tool call runs.
The agent looks for the secret in its environment, its parent's, every process's
environment and command line it can read. It must find nothing, while it does find a
harmless marker the trainer started with (so the search itself works). A control run
with the initial-environment scrub disabled shows the parent's environ leaking it; one
that sets the variable again is refused before the agent starts.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

import redaction_pressure
from redaction_pressure.splits import PRIVATE_SEED_ENV

SECRET = hashlib.sha256(b"isolation test secret").hexdigest()
MARKER = "RP_ISOLATION_MARKER"
PACKAGE_PARENT = str(Path(redaction_pressure.__file__).resolve().parent.parent)

AGENT = textwrap.dedent(
    f"""
    import glob, json, os
    name = {PRIVATE_SEED_ENV!r}
    found, read, marker = [], 0, []
    if name in os.environ:
        found.append(("os.environ", os.environ[name]))
    for path in ["/proc/self/environ", f"/proc/{{os.getppid()}}/environ",
                 *sorted(glob.glob("/proc/[0-9]*/environ")),
                 *sorted(glob.glob("/proc/[0-9]*/cmdline"))]:
        try:
            with open(path, "rb") as handle:
                data = handle.read()
        except OSError:
            continue
        read += 1
        for entry in data.split(b"\\0"):
            if name.encode() + b"=" in entry:
                found.append((path, entry.decode(errors="replace")))
            if entry.startswith(b"{MARKER}=") and path.endswith(f"/{{os.getppid()}}/environ"):
                marker.append(path)
    print(json.dumps({{"found": found, "read": read, "marker_in_parent": marker}}))
    """
)

TRAINER = textwrap.dedent(
    """
    import asyncio, json, os, sys
    import verifiers.v1 as vf
    from verifiers.v1.graph import MessageNode
    from verifiers.v1.runtimes.subprocess import SubprocessConfig, SubprocessRuntime
    from verifiers.v1.types import AssistantMessage, UserMessage
    from redaction_pressure import splits

    mode, agent = sys.argv[1], sys.argv[2]
    if mode == "no_scrub":
        splits._scrub_initial_environment = lambda name: None
    cfg = vf.taskset_config_type("redaction-pressure")(
        id="redaction-pressure", split="private_eval", private_size=1, num_tasks=1
    )
    task = list(vf.load_taskset(cfg))[0]
    if mode == "set_again":
        os.environ[splits.PRIVATE_SEED_ENV] = splits.take_private_secret()
    trace = vf.Trace(
        agent=vf.AgentInfo(config=vf.AgentConfig()),
        task=vf.TraceTask(type=type(task).__name__, data=task.data, key=task.key, hash=task.hash),
        nodes=[
            MessageNode(parent=None, message=UserMessage(content="x"), sampled=False),
            MessageNode(parent=0, message=AssistantMessage(content='{"rules": []}'), sampled=True),
        ],
    )

    async def main():
        runtime = SubprocessRuntime(SubprocessConfig())
        await runtime.start()
        try:
            await task.setup(trace, runtime)
        except RuntimeError as error:
            print(json.dumps({"refused": str(error)}))
            return
        await task.score(trace)  # starts the scoring workers
        result = await runtime.run([sys.executable, "-c", agent], {})
        print(result.stdout.strip().splitlines()[-1])
        await runtime.teardown()

    asyncio.run(main())
    """
)


def _run_trainer(mode: str, tmp_path: Path) -> dict[str, Any]:
    env = {
        "PATH": os.environ["PATH"],
        "HOME": str(tmp_path),
        "PYTHONPATH": PACKAGE_PARENT,
        PRIVATE_SEED_ENV: SECRET,
        MARKER: "visible",
    }
    completed = subprocess.run(
        [sys.executable, "-c", TRAINER, mode, AGENT],
        capture_output=True,
        text=True,
        env=env,
        timeout=600,
        check=False,
    )
    assert completed.returncode == 0, completed.stderr[-3000:]
    report: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return report


@pytest.mark.slow
def test_agent_finds_the_secret_nowhere(tmp_path: Path) -> None:
    assert PRIVATE_SEED_ENV not in os.environ  # the test process itself never had it
    report = _run_trainer("normal", tmp_path)
    # Other processes of this user may carry the variable for their own reasons; what
    # must not appear anywhere is this trainer's secret.
    assert not any(SECRET in value for _, value in report["found"]), report
    assert SECRET not in json.dumps(report)
    assert report["read"] > 3  # its own, its parent's and others' files were readable
    assert report["marker_in_parent"], report  # the search does see the parent's environ


@pytest.mark.slow
def test_without_the_scrub_the_parents_environ_leaks_it(tmp_path: Path) -> None:
    """Guards the guard: removing the secret from os.environ alone is not enough."""
    report = _run_trainer("no_scrub", tmp_path)
    assert any(SECRET in value for _, value in report["found"]), report


@pytest.mark.slow
def test_secret_set_again_is_refused_before_the_agent_runs(tmp_path: Path) -> None:
    report = _run_trainer("set_again", tmp_path)
    assert "refusing private_eval" in report["refused"]
