"""One run never reaches another, by the kernel: in an unsandboxed confined run's mount
namespace the harness's temp directory holds only that run's scratch (a tmpfs with its
own scratch bound back) and ``/dev/shm`` is a tmpfs of its own (harness/separate_exec).

Landlock (ABI 7) mediates no ``chmod``, ``chown`` or ``utime``: red team 4 chmodded a
concurrent run's workspace to 000 (the honest victim lost its grade), flipped the exec
bit of its deliverable (framed it), and kept an answer between runs as the mtime of
``/dev/shm``. Each attack here is a standard-library agent through ``benchguard run``,
as root and as an unprivileged harness; each fails when the separation is removed
(``separate=None`` in harness/job.py).
"""

from __future__ import annotations

import os
from typing import Any

import pytest

from harness.privileges import (
    Harness,
    adversary_outcomes,
    records,
    run_adversary,
    total_tasks,
)

pytestmark = pytest.mark.slow
ENOENT = "denied FileNotFoundError 2"


def _score(record: dict[str, Any]) -> float:
    score: float = record["scores"]["OutcomeScore"]["score"]
    return score


def test_a_concurrent_run_s_workspace_does_not_exist_for_a_saboteur(harness: Harness) -> None:
    """Guards against red team 4's sibsab and sibflip at -j 2: the saboteur learns the
    victim's exact workspace path (the victim names it, alive, in an abstract socket)
    and tries ``chmod 000``, an exec-bit flip and ``utime`` by three spellings. Every
    one is ENOENT (the path is not in the saboteur's namespace); the victim, which
    waits until the saboteur is done, scores 1.0 clean and is not charged with
    anything."""
    # The two meet through abstract socket names: on the host network, which the tasks
    # ask for (a run without it has its own namespace, and would not see the victim).
    tasks = total_tasks(harness, "sep-tasks", {"a-sab": "SABOTAGE. ", "b-total": ""}, network=True)
    env = {"ATTACK_TOKEN": f"bg-sep-{os.getpid()}-{harness.identity}"}
    run_dir = run_adversary(
        harness, "sibling_sabotage.py", tasks, "-j", "2", "--allow-host-network", env=env
    )
    found = {record["folder"]: record for record in records(run_dir)}
    saboteur, victim = found["a-sab"], found["b-total"]
    tried = adversary_outcomes(saboteur)
    assert tried["role"] == "saboteur" and tried["victim"] == "seen", tried
    attacks = {key: value for key, value in tried.items() if ":" in key or key == "stat"}
    assert len(attacks) == 13, attacks
    assert set(attacks.values()) == {ENOENT}, attacks
    assert saboteur["containment"]["separated"] is True, saboteur["containment"]
    assert saboteur["containment"]["network"] == "host", saboteur["containment"]
    suffered = adversary_outcomes(victim)
    assert suffered == {"role": "victim", "saboteur-done": "seen", "own-task": "ok"}, suffered
    assert victim["status"] == "success", victim["error"]
    assert victim["cheating_report"]["status"] == "clean", victim["cheating_report"]
    assert victim["tampering"]["events"] == [], victim["tampering"]
    assert _score(victim) == 1.0


def test_dev_shm_times_carry_nothing_to_the_next_run(harness: Harness) -> None:
    """Guards against red team 4's metachan: a run sets the mtime of ``/dev/shm`` (the
    directory: Landlock grants nothing there, but utime is not mediated, and a uid-0
    agent owns it) and the next run reads it. Each run's /dev/shm is a tmpfs of its
    own: the second run never sees the first one's value."""
    tasks = total_tasks(harness, "shm-tasks", {"a-total": ""})
    env = {"ATTACK": "shm", "ATTACK_TOKEN": "unused"}
    before = os.stat("/dev/shm").st_mtime_ns
    try:
        run_dir = run_adversary(
            harness, "shm_channel.py", tasks, "--iterations", "2", "-j", "1", env=env
        )
    finally:
        if os.stat("/dev/shm").st_mtime_ns != before:
            os.utime("/dev/shm")  # without the defence the host's was changed
    found = sorted(records(run_dir), key=lambda r: r["iteration"])
    assert len(found) == 2
    first, second = (adversary_outcomes(record) for record in found)
    assert first["set"] in ("ok", "denied PermissionError 1"), first
    assert second["read"] != "4711", second
    for record in found:
        assert record["containment"]["separated"] is True, record["containment"]
