"""The host's network is the operator's to grant, never an agent file's or a task's.

A run with the host's network shares it with every other run and with the host: a
sibling run's loopback server is reachable (red team 5's tcpchan: one run served its
answer on 127.0.0.1, its concurrent sibling connected), and so are the host's own
services. An agent file or a task could once ask for that with ``network: true`` and
get it; the file is written by whoever wrote the agent, so the grant was the agent's
own. Now pre-flight refuses a batch whose agent or task asks for it, naming each file
and its ``network`` field, unless the operator passes ``--allow-host-network``; such
a batch says ``host-network`` in its manifest's augmentation, and each run that had
the host network says ``network: host`` on its record and row.

An agent that talks only to its model asks for ``network: model`` instead (the
built-in ``benchguard-agent`` does): it reaches its endpoint through the model bridge
(harness.model_proxy), from a network namespace of its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from benchguard.harness.agents.config import AgentConfig
from benchguard.harness.tasks import Task

OPTION = "--allow-host-network"


def host_network_askers(agent: AgentConfig, tasks: Sequence[Task]) -> list[str]:
    """Each file asking for the host's network, as ``FILE: field network: true``, the
    agent's first, then the tasks' in the order given."""
    found: list[str] = []
    if agent.network is True:
        where = agent.source or f"agent {agent.name!r}"
        found.append(f"{where}: field network: true")
    found += [f"{task.path or task.folder}: field network: true" for task in tasks if task.network]
    return found


def host_network_refusal(agent: AgentConfig, tasks: Sequence[Task], *, allowed: bool) -> str | None:
    """Why the batch is refused for asking for the host's network; None when nothing
    asks for it or the operator allowed it."""
    askers = host_network_askers(agent, tasks)
    if allowed or not askers:
        return None
    return (
        "; ".join(askers)
        + ": network: true asks for the host's network, where a concurrent run's loopback "
        "servers and the host's services are reachable; an agent that only talks to its "
        "model uses network: model (with endpoint_env), or the operator grants the host "
        f"network with {OPTION} (the manifest, rows and leaderboard then say so)"
    )
