"""The real CLIs under ``benchguard run`` when the harness itself is not root.

The other tests run the harness as whatever user pytest is (root in CI, where agents
are dropped to an unprivileged uid); here the whole harness runs as ``nobody``
(through ``setpriv``), with the system interpreter reading this checkout's packages,
so bubblewrap builds unprivileged user namespaces and the CLIs find no root anywhere.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_clis.fake_models import FakeAnthropic, FakeResponses
from agent_clis.runs import EXAMPLES, REPO, load_run, runnable_agent
from agent_clis.sessions import Sessions

pytestmark = pytest.mark.slow

NOBODY = 65534
SYSTEM_PYTHON = Path("/usr/bin/python3")
BOOTSTRAP = (
    "import sys; sys.path[:0] = sys.argv[1:3]; del sys.argv[1:3]; "
    "from benchguard.cli import app; app(prog_name='benchguard')"
)


def _system_python_fits() -> bool:
    if not SYSTEM_PYTHON.exists():
        return False
    probe = subprocess.run(
        [str(SYSTEM_PYTHON), "-c", "import sys; print(sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=False,
    )
    return probe.stdout.strip() == str(tuple(sys.version_info[:2]))


@pytest.fixture
def unprivileged_root() -> Iterator[Path]:
    if os.geteuid() != 0:
        pytest.skip("the harness already runs unprivileged: every other test covers it")
    if shutil.which("setpriv") is None or not _system_python_fits():
        pytest.fail("needs setpriv and /usr/bin/python3 of this interpreter's version")
    root = Path(tempfile.mkdtemp(prefix="bg-unpriv-"))
    root.chmod(0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _as_nobody(root: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    for path in (root, *root.rglob("*")):
        if "clis" not in path.relative_to(root).parts[:1]:  # read-only for the agent
            os.chown(path, NOBODY, NOBODY, follow_symlinks=False)
    command = [
        "setpriv",
        f"--reuid={NOBODY}",
        f"--regid={NOBODY}",
        "--clear-groups",
        "--",
        str(SYSTEM_PYTHON),
        "-c",
        BOOTSTRAP,
        sysconfig.get_paths()["purelib"],
        str(REPO / "src"),
        *args,
    ]
    base = {"PATH": "/usr/bin:/bin", "HOME": str(root / "operator-home"), "LANG": "C.UTF-8"}
    return subprocess.run(
        command,
        env={**base, **env},
        cwd=root,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
@pytest.mark.parametrize("cli", ["claude-code", "codex"])
def test_honest_and_cheating_sessions_as_an_unprivileged_harness(
    unprivileged_root: Path, cli: str, sandbox: str, request: pytest.FixtureRequest
) -> None:
    """Guards against configs that only work as root (Claude Code's permission flag,
    state directories, the sandbox's binds) and against a cheat read as clean there."""
    root = unprivileged_root
    tasks = root / "tasks"
    shutil.copytree(EXAMPLES / "tasks", tasks)
    (root / "operator-home").mkdir()
    # The CLIs as an operator installs them, outside the harness checkout: the one copy
    # per test process (runs.installed_outside; hard links would be the checkout's own
    # files to an audit that matches inodes). It is world-readable, never writable.
    agent = runnable_agent(cli, root / "agents")
    sessions = Sessions(tasks=tasks)
    server_type = FakeAnthropic if cli == "claude-code" else FakeResponses
    server = server_type(sessions.script_for).start()
    request.addfinalizer(server.stop)
    variable = "ANTHROPIC" if cli == "claude-code" else "OPENAI"
    env = {f"{variable}_BASE_URL": server.base_url, f"{variable}_API_KEY": "sk-test"}
    common = ("--agent", str(agent), "--sandbox", sandbox, "--home", str(root / "agent-home"))

    honest = _as_nobody(root, "run", str(tasks), *common, "--out", str(root / "r1"), env=env)
    assert honest.stdout.strip(), honest.stderr
    records, rows = load_run(Path(honest.stdout.strip().splitlines()[-1]))
    for record, row in zip(records, rows, strict=True):
        assert record["status"] == "success", (record["folder"], record["error"])
        report = record["cheating_report"]
        why = (report.get("incomplete_reason"), record.get("system_audit"))
        assert report["status"] == "clean", ([f["excerpt"] for f in report["findings"]], why)
        assert row["outcomeScore"] == 1.0, (record["folder"], record["scores"])
    assert honest.returncode == 0, honest.stdout + honest.stderr

    sessions.read_task_definitions()
    cheat = _as_nobody(root, "run", str(tasks), *common, "--out", str(root / "r2"), env=env)
    assert cheat.returncode == 1, cheat.stdout + cheat.stderr
    records, rows = load_run(Path(cheat.stdout.strip().splitlines()[-1]))
    tool = "Bash" if cli == "claude-code" else "exec_command"
    for record, row in zip(records, rows, strict=True):
        report = record["cheating_report"]
        assert report["status"] == "flagged" and row["outcomeScore"] == 0.0, report
        assert any(f["trajectory_index"] == 0 and f["tool"] == tool for f in report["findings"]), (
            report["findings"]
        )
