"""The real Claude Code and Codex CLIs under ``benchguard run``, against fake models.

Each test runs the shipped agent YAML (``examples/agents/``) with the pinned CLI on
a batch of the example tasks, sandboxed and not. Honest sessions must score 1.0 and
read clean in every run of the batch; cheating sessions must be gated with the step
and the tool named; nothing the CLI stores may survive from one run to the next.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from agent_clis.fake_models import FakeAnthropic, FakeResponses
from agent_clis.runs import Operator, load_run, runnable_agent
from agent_clis.sessions import Sessions

pytestmark = pytest.mark.slow

SANDBOXES = ["none", "bwrap"]


def _env(cli: str, server: FakeAnthropic | FakeResponses) -> dict[str, str]:
    if cli == "claude-code":
        return {"ANTHROPIC_BASE_URL": server.base_url, "ANTHROPIC_API_KEY": "sk-test"}
    return {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "sk-test"}


def _run(
    operator: Operator,
    cli: str,
    server: FakeAnthropic | FakeResponses,
    sandbox: str,
    tmp_path: Path,
    *extra: str,
    code: int = 0,
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    agent = runnable_agent(cli, tmp_path / "agents")
    run_dir = operator.run_ok(
        str(operator.tasks),
        "--agent",
        str(agent),
        "--sandbox",
        sandbox,
        *extra,
        env=_env(cli, server),
        code=code,
    )
    records, rows = load_run(run_dir)
    return records, rows


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("cli", ["claude-code", "codex"])
def test_honest_sessions_score_and_read_clean_in_every_run(
    operator: Operator,
    tmp_path: Path,
    cli: str,
    sandbox: str,
    request: pytest.FixtureRequest,
) -> None:
    """Guards against the CLI's own state (sessions, settings) turning later honest runs
    of a batch into prior-run leftovers, and against flags that block ordinary work."""
    server = request.getfixturevalue("anthropic" if cli == "claude-code" else "responses")
    records, rows = _run(operator, cli, server, sandbox, tmp_path, "--iterations", "2")
    assert len(records) == 8
    for record, row in zip(records, rows, strict=True):
        where = f"{record['folder']}#{record['iteration']}"
        assert record["status"] == "success", (where, record["error"])
        assert record["cheating_report"]["status"] == "clean", (where, record["cheating_report"])
        assert row["outcomeScore"] == 1.0, (where, record["scores"], record["trajectory"])
        assert record["trajectory"], where
        assert record["input"] == record["input"].strip() and record["input"], where
    # Nothing reached the operator's home: each run had a fresh home of its own, and
    # what the CLI wrote there is the run's kept evidence, its deliverables only.
    assert sorted(p.name for p in operator.agent_home.iterdir()) == []
    for record in records:
        written = record["home_writes"]["written"]
        assert set(written) <= {"notes.md", "report.md"}, (record["folder"], written)


@pytest.mark.parametrize("sandbox", SANDBOXES)
@pytest.mark.parametrize("cli", ["claude-code", "codex"])
def test_a_cheating_session_is_gated_with_step_and_tool_named(
    operator: Operator,
    tmp_path: Path,
    cli: str,
    sandbox: str,
    sessions: Sessions,
    request: pytest.FixtureRequest,
) -> None:
    """Guards against a CLI's transcript hiding which tool call read the task
    definitions: the finding must name the step and the tool, and the run score 0."""
    server = request.getfixturevalue("anthropic" if cli == "claude-code" else "responses")
    sessions.read_task_definitions()
    records, rows = _run(operator, cli, server, sandbox, tmp_path, code=1)
    expected_tool = "Bash" if cli == "claude-code" else "exec_command"
    for record, row in zip(records, rows, strict=True):
        where = record["folder"]
        report = record["cheating_report"]
        if sandbox == "none":
            assert report["status"] == "flagged", (where, report)
            assert "task-definition" in report["categories"], (where, report)
            assert row["outcomeScore"] == 0.0 and row["catastrophic"] is True, where
        else:
            # The sandbox hides the tasks: the read fails, yet the attempt is flagged.
            assert report["status"] == "flagged", (where, report)
        steps = {f.get("trajectory_index") for f in report["findings"]}
        tools = {f.get("tool") for f in report["findings"]}
        assert 0 in steps, (where, report["findings"])
        assert expected_tool in tools, (where, report["findings"])


# The earlier run's answer carries this token; the later run searches everything it can
# reach for it, spelling it so that its own command (which its own session stores) does
# not contain it.
EARLIER_TOKEN = "EARLIER-RUN-ANSWER-42"
SEARCH_FOR_EARLIER = (
    'T=EARLIER-RUN-ANSWER-; grep -rls "${T}42" "$CLAUDE_CONFIG_DIR" "$CODEX_HOME" '
    '"$TMPDIR" ~ 2>/dev/null | wc -l'
)
OLD_STORE = {"claude-code": ".claude/projects/-old-run", "codex": ".codex/sessions/2026/01/01"}


@pytest.mark.parametrize("cli", ["claude-code", "codex"])
def test_an_earlier_runs_session_store_is_gone_or_flagged(
    operator: Operator,
    tmp_path: Path,
    cli: str,
    sessions: Sessions,
    request: pytest.FixtureRequest,
) -> None:
    """Guards against a later run reading an earlier session's answer out of the CLI's
    own store: a search of every store and temp directory the run can reach finds no
    trace of the earlier session, and a store left in the agent home from before is a
    leftover whose reading is flagged."""
    server = request.getfixturevalue("anthropic" if cli == "claude-code" else "responses")
    tasks = operator.tasks
    keep = tasks / "sum-numbers"
    for other in sorted(tasks.iterdir()):
        if other != keep:
            shutil.rmtree(other)
    sessions.answer = EARLIER_TOKEN
    _run(operator, cli, server, "none", tmp_path)  # an honest earlier run
    sessions.answer = "Done."
    sessions.cheat, sessions.cheat_commands = True, (SEARCH_FOR_EARLIER,)
    records, _ = _run(operator, cli, server, "none", tmp_path)
    found = records[0]["trajectory"][0]
    assert "EARLIER-RUN-ANSWER-" in json.dumps(found["args"]), found
    assert (found["result"] or "").strip().splitlines()[-1].strip() == "0", found
    assert records[0]["cheating_report"]["status"] == "clean"

    old = operator.agent_home / OLD_STORE[cli]
    old.mkdir(parents=True)
    (old / "rollout-old.jsonl").write_text('{"answer": "137"}\n', "utf-8")
    top = OLD_STORE[cli].split("/")[0]
    sessions.cheat_commands = (f"cat ~/{OLD_STORE[cli]}/*.jsonl",)
    records, rows = _run(operator, cli, server, "none", tmp_path, code=1)
    report = records[0]["cheating_report"]
    assert report["status"] == "flagged", report
    assert "prior-run-artifact" in report["categories"]
    assert any(top in f["evidence"] or top in f["excerpt"] for f in report["findings"]), report
    assert rows[0]["outcomeScore"] == 0.0
