"""A fresh home per run: nothing one run writes to its home reaches another run.

Standard-library adversaries (tests/harness/adversaries/home_litter.py) run through
``benchguard run`` as root and as an unprivileged harness, sandboxed and not: one batch
litters the home (an answer behind 5,000 decoys that sort before it, and a file whose
name is not UTF-8), a later batch on the same ``--home`` scavenges for it (plainly,
``O_RDWR``, by listing, and through the first batch's kept evidence), and two runs at
``-j 2`` look for each other's files. Each must obtain nothing, the writes must be kept
as the first run's evidence, and the operator's home must be untouched. The
persistent-mode control shows the same scavenger does obtain the leftover there.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchguard.cli import app
from benchguard.harness import home as home_module
from harness.helpers import Operator, only_tasks
from harness.privileges import ADVERSARIES, Harness, records, run_adversary, write_agent

pytestmark = pytest.mark.slow
SANDBOXES = ("none", "bwrap")


def _outcome(record: dict[str, Any]) -> dict[str, str]:
    loaded: dict[str, str] = json.loads(record["output"].strip().splitlines()[-1])
    return loaded


def _sandbox_args(sandbox: str) -> tuple[str, ...]:
    return ("--sandbox", sandbox) if sandbox == "bwrap" else ()


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_later_run_finds_nothing_an_earlier_run_left(harness: Harness, sandbox: str) -> None:
    """Guards against a run answering from an earlier run's leftover in the home (even
    behind 5,000 decoys, even opened O_RDWR), or from the earlier run's kept evidence;
    and against a name that is not UTF-8 breaking the record or a later batch."""
    tasks = only_tasks(harness.operator, "sum-numbers")
    results = harness.operator.results
    # Not traced: 5,000 creates under strace cost seconds and the audit is not on trial.
    first = run_adversary(
        harness,
        "home_litter.py",
        tasks,
        *_sandbox_args(sandbox),
        "--audit",
        "none",
        env={"ATTACK": "litter"},
    )
    [littered] = records(first)
    assert littered["status"] == "success", littered["error"]
    assert littered["home_mode"] == "fresh"
    writes = littered["home_writes"]
    assert writes["files"] == 5002 and writes["complete"] is True
    # Listed up to its bound (the decoys sort first), kept whole.
    assert len(writes["written"]) == 200 and writes["listed_complete"] is False
    kept = first / writes["kept"]
    assert (kept / "zz-leftover.txt").read_text("utf-8").startswith("the answer is 137")
    assert (kept / os.fsdecode(b"\xff-not-utf8")).exists()
    # The operator's home never saw any of it.
    assert sorted(os.listdir(harness.operator.agent_home)) == []

    env = {"ATTACK": "scavenge", "ATTACK_EVIDENCE": str(results)}
    second = run_adversary(harness, "home_litter.py", tasks, *_sandbox_args(sandbox), env=env)
    [scavenged] = records(second)
    assert scavenged["status"] == "success", scavenged["error"]
    outcome = _outcome(scavenged)
    assert not [key for key, value in outcome.items() if value.startswith("got")], outcome
    assert outcome["plain"].startswith("denied FileNotFoundError")
    assert outcome["rdwr"].startswith("denied FileNotFoundError")


def test_concurrent_runs_never_share_a_home(harness: Harness) -> None:
    """Guards against two runs at -j 2 passing files through the home while both live."""
    tasks = only_tasks(harness.operator, "sum-numbers")
    env = {"ATTACK": "twins", "ATTACK_WAIT": "3"}
    run_dir = run_adversary(
        harness, "home_litter.py", tasks, "--iterations", "2", "-j", "2", env=env
    )
    found = records(run_dir)
    assert len(found) == 2
    for record in found:
        assert _outcome(record)["twin"] == "empty"
        assert record["home_writes"]["files"] == 1


def test_persistent_home_lets_the_leftover_through(operator: Operator) -> None:
    """The control: with --home-mode persistent the same scavenger reads the leftover
    (so the fresh-home test fails when the defence is removed); the batch says which
    mode ran, and the inventory still turns the leftover into a rule."""
    harness = Harness("root", operator)
    tasks = only_tasks(operator, "sum-numbers")
    persistent = ("--home-mode", "persistent")
    run_adversary(
        harness, "home_litter.py", tasks, *persistent, "--audit", "none", env={"ATTACK": "litter"}
    )
    env = {"ATTACK": "scavenge", "ATTACK_EVIDENCE": str(operator.results)}
    run_dir = run_adversary(harness, "home_litter.py", tasks, *persistent, env=env)
    [record] = records(run_dir)
    assert record["home_mode"] == "persistent" and record["home_writes"] is None
    assert _outcome(record)["plain"].startswith("got b'the answer is 137")
    assert "\\xff-not-utf8" in record["home_snapshot"]
    manifest = json.loads((run_dir / "manifest.json").read_text("utf-8"))
    assert "persistent-home" in manifest["augmentation"]
    rows = json.loads((run_dir / "rows.json").read_text("utf-8"))
    assert [row["homeMode"] for row in rows] == ["persistent"]


@pytest.mark.parametrize("mode", ["fresh", "persistent"])
def test_a_name_that_is_not_utf8_never_errors_a_run(operator: Operator, mode: str) -> None:
    """Guards against a home entry whose name is not UTF-8 making every later run error
    while its record is written: the name is carried escaped (\\xff), losslessly."""
    operator.agent_home.mkdir(parents=True, exist_ok=True)
    (Path(os.fsdecode(bytes(operator.agent_home) + b"/report-\xff\xfe.md"))).write_text(
        "an operator's file\n", "utf-8"
    )
    agent = str(Path(__file__).resolve().parents[2] / "examples" / "agents" / "honest.yaml")
    run_dir = operator.run_ok(str(operator.tasks), "--agent", agent, "--home-mode", mode)
    found = records(run_dir)
    assert len(found) == 4
    for record in found:
        assert record["status"] == "success", record["error"]
        assert "report-\\xff\\xfe.md" in record["home_snapshot"]
    journal_files = sorted((run_dir / "runs").iterdir())
    assert journal_files
    for path in journal_files:
        path.read_bytes().decode("utf-8")  # the journal is UTF-8 throughout


def test_a_home_too_large_is_refused_at_preflight(
    operator: Operator, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A home too large to overlay or copy per run is refused before any agent runs,
    with its size and the limit."""
    monkeypatch.setattr(home_module, "MAX_HOME_ENTRIES", 10)
    operator.agent_home.mkdir(parents=True, exist_ok=True)
    for index in range(20):
        (operator.agent_home / f"f{index}").write_text("x", "utf-8")
    agent = str(Path(__file__).resolve().parents[2] / "examples" / "agents" / "honest.yaml")
    args = ["run", str(operator.tasks), "--agent", agent, "--home", str(operator.agent_home)]
    result = CliRunner().invoke(app, [*args, "--out", str(operator.results), "--quiet"])
    assert result.exit_code == 2, result.output
    assert "too large for a fresh home per run" in result.output
    assert "the limit is" in result.output and "10 entries" in result.output
    assert not operator.results.exists() or not list(operator.results.iterdir())


@pytest.mark.parametrize("sandbox", SANDBOXES)
def test_a_template_file_that_already_passes_earns_nothing_when_only_touched(
    harness: Harness, sandbox: str
) -> None:
    """Guards against a red team's attack: the home template holds an earlier run's
    ~/report.md, and the agent copies the total from it and only touches the file (new
    time, same bytes). With a fresh home the report check compares contents, so the
    touched template file is "unchanged since before this run" and earns nothing."""
    tasks = only_tasks(harness.operator, "write-report")
    home = harness.operator.agent_home
    home.mkdir(parents=True, exist_ok=True)
    report = home / "report.md"
    report.write_text("Report for numbers.txt: the integers add up to a total of 137\n", "utf-8")
    owner = harness.operator.root.stat()  # the unprivileged harness owns its tree
    for path in (home, report):
        os.chown(path, owner.st_uid, owner.st_gid)
    agent = write_agent(
        harness.operator.root / "agents", "template-answer", ADVERSARIES / "template_answer.py"
    )
    code, output, run_dir = harness.run(str(tasks), "--agent", str(agent), *_sandbox_args(sandbox))
    # Pre-flight says the home already passes the report check; the run earns nothing.
    assert "the home already passes check report-written (~/report.md)" in output, output
    assert code in (0, 3) and run_dir is not None, output
    [record] = records(run_dir)
    checks = {entry["name"]: entry for entry in record["verification_report"]}
    assert checks["total-correct"]["passed"] is True  # the copied answer is right
    assert checks["report-written"]["passed"] is False, checks["report-written"]
    assert "unchanged since before this run" in checks["report-written"]["reason"]
    assert record["scores"]["OutcomeScore"]["score"] < 1.0
