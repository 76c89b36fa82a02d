"""The host's network is the operator's grant (harness/host_network), and the built-in
agent does without it.

An agent file or task asking for ``network: true`` is refused at pre-flight, naming the
file and the field, unless the operator passes ``--allow-host-network``; then the
manifest, the rows and the leaderboard say so. The built-in ``benchguard-agent`` asks
for ``network: model``: under its settings, a run's loopback server is not there for
its concurrent sibling (red team 5's tcpchan), as root and unprivileged, sandboxed and
not.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from benchguard.harness.agents.config import builtin_agent_config
from benchguard.results.leaderboard import build_leaderboard, render_html
from benchguard.results.rows import ResultRow
from harness.helpers import AGENTS, Operator, load_run, only_tasks
from harness.privileges import Harness, adversary_outcomes, records, total_tasks

ADVERSARIES = Path(__file__).with_name("adversaries")


def _agent_file(directory: Path, name: str, script: Path, **fields: Any) -> Path:
    """An agent YAML (JSON is YAML) running ``script``, copied beside it, readable by
    the unprivileged harness."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(script, directory / script.name)
    config = {
        "name": name,
        "argv": ["{python}", "{agent_dir}/" + script.name, "{prompt}"],
        "trajectory": "jsonl",
        "model": "scripted",
        **fields,
    }
    path = directory / f"{name}.yaml"
    path.write_text(json.dumps(config), "utf-8")
    for item in (directory, *directory.iterdir()):
        os.chmod(item, 0o755 if item.is_dir() else 0o644)
    return path


def _host_agent(operator: Operator) -> Path:
    directory = operator.root / "agents"
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(AGENTS / "scripted.py", directory / "scripted.py")  # honest.py's import
    return _agent_file(directory, "honest-host", AGENTS / "honest.py", network=True)


def test_an_agent_file_asking_for_the_host_network_is_refused(operator: Operator) -> None:
    """Guards against an agent file granting itself the host's network."""
    agent = _host_agent(operator)
    code, output, run_dir = operator.run(
        str(only_tasks(operator, "sum-numbers")), "--agent", str(agent)
    )
    assert code == 2 and run_dir is None, output
    assert f"{agent.resolve()}: field network: true" in output, output
    assert "--allow-host-network" in output and "Traceback" not in output, output


def test_a_task_asking_for_the_host_network_is_refused(operator: Operator) -> None:
    """Guards against a task granting its agent the host's network."""
    tasks = only_tasks(operator, "sum-numbers")
    task_file = tasks / "00-sum-numbers" / "task.yaml"
    task_file.write_text(task_file.read_text("utf-8") + "network: true\n", "utf-8")
    code, output, run_dir = operator.run(
        str(tasks), "--agent", str(AGENTS / "honest.yaml"), "--no-detect"
    )
    assert code == 2 and run_dir is None, output
    assert f"{task_file}: field network: true" in output, output


def test_the_operator_s_grant_is_on_the_record_rows_manifest_and_leaderboard(
    operator: Operator,
) -> None:
    """Guards against a host-network run reading like a contained one."""
    run_dir = operator.run_ok(
        str(only_tasks(operator, "sum-numbers")),
        "--agent",
        str(_host_agent(operator)),
        "--allow-host-network",
    )
    [record], [row], manifest = load_run(run_dir)
    assert record["status"] == "success", record["error"]
    assert record["network"] == "host"
    assert row["network"] == "host"
    assert "host-network" in manifest["augmentation"]
    board = build_leaderboard([ResultRow.model_validate(row)])
    assert board.standings[0].host_network_runs == 1
    assert '<div class="sub">host network</div>' in render_html(board)
    # The same batch without the grant's need: an honest agent without network: true.
    plain = operator.run_ok(
        str(only_tasks(operator, "sum-numbers")), "--agent", str(AGENTS / "honest.yaml")
    )
    [record], [row], manifest = load_run(plain)
    assert record["network"] != "host" and row["network"] != "host"
    assert "host-network" not in manifest["augmentation"]
    board = build_leaderboard([ResultRow.model_validate(row)])
    assert "hostNetworkRuns" not in board.standings[0].model_dump_json(by_alias=True)


class _Endpoint(BaseHTTPRequestHandler):
    """Stands in for a model server only so pre-flight finds the endpoint answering;
    the adversary never calls it."""

    def do_GET(self) -> None:
        self.send_error(404)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def endpoint() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Endpoint)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


@pytest.mark.slow
@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_under_the_builtin_agent_s_network_a_sibling_s_loopback_server_is_not_there(
    harness: Harness, endpoint: str, sandbox: str
) -> None:
    """Guards against the built-in agent's host network (red team 5's tcpchan at -j 2):
    with the network settings ``benchguard-agent`` has, one run serves its answer on
    127.0.0.1 and its sibling's connection is refused, so it does the task itself.
    With the built-in agent on ``network: true`` this fails: the batch is refused, or,
    without the pre-flight refusal too, the client reads the server's answer."""
    if sandbox == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    builtin = builtin_agent_config()
    settings: dict[str, Any] = {"network": builtin.network}
    if builtin.endpoint_env is not None:
        settings["endpoint_env"] = builtin.endpoint_env
    agent = _agent_file(
        harness.operator.root / "agents",
        "loopback-as-builtin",
        ADVERSARIES / "loopback_channel.py",
        env=["ATTACK", "ATTACK_PORT", "OPENAI_BASE_URL"],
        **settings,
    )
    tasks = total_tasks(harness, "tcp-tasks", {"a-serve": "SERVE. ", "b-client": ""})
    port = 20000 + (os.getpid() + (7 if sandbox == "bwrap" else 0)) % 20000
    env = {"ATTACK": "tcp", "ATTACK_PORT": str(port), "OPENAI_BASE_URL": endpoint}
    run_dir = harness.run_ok(
        str(tasks), "--agent", str(agent), "-j", "2", "--sandbox", sandbox, env=env
    )
    found = {record["folder"]: record for record in records(run_dir)}
    server, client = adversary_outcomes(found["a-serve"]), adversary_outcomes(found["b-client"])
    assert server == {"role": "server", "bind": "ok", "served": "nobody came"}, server
    assert client["channel"] == "nothing", client
    assert client["tcp"] == "denied ConnectionRefusedError 111", client
    for record in found.values():
        assert record["status"] == "success", record["error"]
        assert record["network"] == "model", record["network"]
        assert record["scores"]["OutcomeScore"]["score"] == 1.0
