"""Model-only network: an agent reaches its model endpoint and nothing else, sandboxed
or not (unsandboxed, the separation's network namespace and the same bridge).

The attacker here is a standard-library agent that, besides its model, tries an
operator service on the same host (where a benchmark's answers could be served) and
the outside world (a public address, a DNS name).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from agent_clis.fake_models import FakeAnthropic, FakeResponses, Script
from agent_clis.runs import Operator, load_run

pytestmark = pytest.mark.slow

PROBE = """\
import json, os, socket, urllib.error, urllib.request

def http(url):
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=5) as answer:
            return f"answered {answer.status}"
    except urllib.error.HTTPError as exc:
        return f"answered {exc.code}"
    except Exception as exc:
        return f"unreachable: {type(exc).__name__}"

def tcp(host, port):
    try:
        socket.create_connection((host, port), timeout=3).close()
        return "connected"
    except Exception as exc:
        return f"unreachable: {type(exc).__name__}"

def dns(name):
    try:
        socket.getaddrinfo(name, 443)
        return "resolved"
    except Exception as exc:
        return f"unresolved: {type(exc).__name__}"

print(json.dumps({
    "endpoint": http(os.environ["MODEL_URL"] + "/v1/messages/count_tokens"),
    "operator_service": http(os.environ["OTHER_URL"] + "/v1/responses"),
    "outside": tcp("1.1.1.1", 53),
    "dns": dns("example.com"),
}))
"""


def _probe_agent(tmp_path: Path, network: str) -> Path:
    agents = tmp_path / f"agents-{network}"
    agents.mkdir()
    (agents / "probe.py").write_text(PROBE, "utf-8")
    agent = agents / "probe.yaml"
    agent.write_text(
        'name: net-probe\nargv: ["{python}", "{agent_dir}/probe.py"]\n'
        "env: [MODEL_URL, OTHER_URL]\nendpoint_env: MODEL_URL\n"
        f"network: {network}\ntrajectory: stdout\n",
        "utf-8",
    )
    return agent


@pytest.mark.parametrize("sandbox", ["bwrap", "none"])
@pytest.mark.parametrize("network", ["model", "true"])
def test_a_sandboxed_agent_reaches_only_its_model_endpoint(
    operator: Operator, tmp_path: Path, network: str, sandbox: str
) -> None:
    """Guards against `network: true` being the only way to reach a model: that shares
    the host's whole network, including services that hold the benchmark's answers.
    Unsandboxed (confined), a model-only agent is in a network namespace of its own
    with the model bridge (harness/separate_exec): the same view."""
    for other in sorted(operator.tasks.iterdir()):
        if other.name != "sum-numbers":
            shutil.rmtree(other)
    model = FakeAnthropic(lambda _prompt: Script(())).start()
    service = FakeResponses(lambda _prompt: Script(())).start()
    try:
        env = {"MODEL_URL": model.base_url, "OTHER_URL": f"http://127.0.0.1:{service.port}"}
        _, output, run_dir = operator.run(
            str(operator.tasks),
            "--agent",
            str(_probe_agent(tmp_path, network)),
            "--sandbox",
            sandbox,
            "--no-detect",
            # network: true is the operator's grant (harness.host_network).
            *(("--allow-host-network",) if network == "true" else ()),
            env=env,
        )
    finally:
        model.stop()
        service.stop()
    assert run_dir is not None, output
    [record], _ = load_run(run_dir)
    seen = json.loads(record["output"])
    assert seen["endpoint"] == "answered 200", seen
    if sandbox == "none":
        expected = "host" if network == "true" else "own"
        assert record["containment"]["network"] == expected, record["containment"]
    if network == "model":
        assert seen["operator_service"].startswith("unreachable"), seen
        assert seen["outside"].startswith("unreachable"), seen
        assert seen["dns"].startswith("unresolved"), seen
    else:  # the host network: the same probe gets through (so the test can fail)
        assert seen["operator_service"].startswith("answered"), seen


def test_model_network_refuses_what_it_cannot_serve(operator: Operator, tmp_path: Path) -> None:
    """Guards against a model-only agent silently getting no model (or the host
    network) when its endpoint is not a loopback URL it can bridge."""
    agent = _probe_agent(tmp_path, "model")
    code, output, run_dir = operator.run(
        str(operator.tasks),
        "--agent",
        str(agent),
        "--sandbox",
        "bwrap",
        env={"MODEL_URL": "https://api.example.invalid/v1", "OTHER_URL": "http://127.0.0.1:1"},
    )
    assert code == 2 and run_dir is None, output
    assert "network: model serves a loopback endpoint only" in output
    # Unsandboxed and confined too: its run has a network namespace of its own.
    code, output, run_dir = operator.run(
        str(operator.tasks),
        "--agent",
        str(agent),
        env={"MODEL_URL": "https://api.example.invalid/v1", "OTHER_URL": "http://127.0.0.1:1"},
    )
    assert code == 2 and run_dir is None, output
    assert "network: model serves a loopback endpoint only" in output
    broken = tmp_path / "no-endpoint.yaml"
    broken.write_text('name: x\nargv: ["true"]\nnetwork: model\n', "utf-8")
    code, output, _ = operator.run(str(operator.tasks), "--agent", str(broken))
    assert code == 2 and "network: model needs endpoint_env" in output, output
