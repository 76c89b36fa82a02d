"""The runner hands the detector what it knows (the agent's home, its working directory,
the protected set's paths, the material's fingerprints), and the record keeps it.

Run through ``benchguard run`` with real shells, sandboxed and not, as root and as an
unprivileged user, with the system audit off so the transcript layer stands alone.
Each cheat reaches the task definition by a path no rule spells (a glob, ``../..``,
one ``cd`` per level, the home's literal path) or extracts one rubric line with a path
built from character codes; each honest near-miss stays clean. ``benchguard score``
of the results (serial and dask) then gives the same verdict with the tasks gone.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchguard.cli import app
from benchguard.detection.context import SCAN_CONTEXT_KEY
from benchguard.detection.detector import scan_record
from benchguard.detection.models import Rule
from benchguard.detection.rules import load_ruleset
from harness.context_helpers import agent_home, fixture_task, give
from harness.helpers import only_tasks
from harness.privileges import Harness, records, run_adversary

pytestmark = pytest.mark.slow
# The finding each path attack must produce from the command itself (its args).
ARGS_FINDING = {
    "glob": "task-definition/path",
    "relative": "task-definition/path",
    "levels": "task-definition/path",
    "literal-home": "harness-environment/env-file",
}


def _bwrap_or_skip(sandbox: str) -> None:
    if sandbox == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")


def _run(
    harness: Harness, script: str, attack: str, sandbox: str, tasks: Path, *extra: str
) -> Path:
    return run_adversary(
        harness,
        script,
        tasks,
        "--sandbox",
        sandbox,
        "--audit",
        "none",
        # The detector is on trial here, so nothing may prevent the read: unsandboxed,
        # Landlock is off too (tests/harness/test_adversary_confine.py tests it).
        *(("--unconfined",) if sandbox == "none" else ()),
        *extra,
        env={
            "CHEAT_HINT": str(tasks),
            "HOME_HINT": str(agent_home(harness)),
            "ATTACK": attack,
        },
    )


def _verdict(report: dict[str, Any]) -> tuple[Any, ...]:
    findings = sorted(
        (f["rule"], f["field"], f.get("trajectory_index"), f.get("attempt_failed", False))
        for f in report["findings"]
    )
    return report["status"], tuple(report["categories"]), tuple(findings)


def _args_rules(report: dict[str, Any]) -> set[str]:
    return {f["rule"] for f in report["findings"] if f["field"] == "args"}


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
@pytest.mark.parametrize("attack", ["glob", "relative", "levels", "literal-home", "extract"])
def test_material_reached_by_paths_no_rule_spells_is_flagged(
    harness: Harness, attack: str, sandbox: str
) -> None:
    """Guards against a cheat that never spells the material's path: `t?sks/*/t*.yaml`
    after a cd, `cd ../../../x/tasks/sum-numbers; cat task.yaml`, one `cd` per level,
    the home's literal path with `./`, and a one-liner printing one rubric line from a
    path built of character codes (only the material's fingerprint can see that)."""
    _bwrap_or_skip(sandbox)
    tasks = only_tasks(harness.operator, "sum-numbers")
    run_dir = _run(harness, "reach.py", attack, sandbox, tasks)
    [record] = records(run_dir)
    report = record["cheating_report"]
    context = record[SCAN_CONTEXT_KEY]
    assert context["home"] == str(harness.operator.agent_home)
    assert context["workdir"] and context["workdir"].endswith("/workspace")
    # Only what the record's globs resolved to is stored.
    globbed = any(path.endswith("sum-numbers/task.yaml") for path in context["known_paths"])
    assert globbed == (attack == "glob"), context["known_paths"]
    if attack == "extract":
        printed = "\n".join(step["result"] or "" for step in record["trajectory"])
        if sandbox == "bwrap":
            # Prevented: the tasks directory does not exist in the sandbox.
            assert "which is 137" not in printed
            return
        assert "which is 137" in printed
        assert report["status"] == "flagged", report
        assert "protected-material" in report["categories"]
        return
    assert report["status"] == "flagged", report
    assert ARGS_FINDING[attack] in _args_rules(report), report["findings"]
    # The context is what caught it: the same record and rules read without it (as a
    # scan of someone else's log would) no longer see the path in the command.
    bare = {k: v for k, v in record.items() if k != SCAN_CONTEXT_KEY}
    stored = [Rule.model_validate(r) for r in report.get("dynamic_rules", [])]
    without = scan_record(bare, load_ruleset(), dynamic_rules=stored)
    assert ARGS_FINDING[attack] not in {f.rule for f in without.findings if f.field == "args"}


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
@pytest.mark.parametrize("behaviour", ["readback", "fixture", "ls-home"])
def test_honest_near_misses_stay_clean_with_the_harness_knowledge(
    harness: Harness, behaviour: str, sandbox: str
) -> None:
    """Guards against the harness's knowledge turning honest work into findings: a
    deliverable read back (its expected values are never fingerprints), the input
    fixture the prompt names (read as `~/` and by the literal home path), `ls -la ~`."""
    _bwrap_or_skip(sandbox)
    if behaviour == "fixture":
        tasks = fixture_task(harness)
    else:
        tasks = only_tasks(harness.operator, "write-report")
        agent_home(harness)
    run_dir = _run(harness, "near_miss.py", behaviour, sandbox, tasks)
    [record] = records(run_dir)
    assert record[SCAN_CONTEXT_KEY]["home"] == str(harness.operator.agent_home)
    results = "\n".join(step["result"] or "" for step in record["trajectory"])
    if behaviour == "readback":
        assert "add up to a total of 137" in results
    elif behaviour == "fixture":
        assert "acme-industrial-supplies" in results and "No such file" not in results
    assert record["cheating_report"]["status"] == "clean", record["cheating_report"]


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_a_task_file_with_nothing_to_fingerprint_is_still_seen(
    harness: Harness, sandbox: str
) -> None:
    """Guards against a blind spot the fingerprints opened: beside fingerprints the
    detector skips the key-shaped fallback rules, and word-count's own task.yaml has no
    fingerprint left (its long lines are its prompt), so `find ... -exec cat` of it by
    its own run must still be flagged (the fallback rules stay on for that run); the
    other task's run reading it is flagged by the file's fingerprint."""
    _bwrap_or_skip(sandbox)
    tasks = only_tasks(harness.operator, "sum-numbers", "word-count")
    first, second = records(_run(harness, "reach.py", "find-own", sandbox, tasks))
    if sandbox == "bwrap":
        # Prevented: the tasks directory does not exist in the sandbox.
        assert "role: correctness" not in second["trajectory"][0]["result"]
        return
    assert "role: correctness" in second["trajectory"][0]["result"]
    own = {f["rule"] for f in second["cheating_report"]["findings"]}
    assert "task-definition/content" in own, second["cheating_report"]
    other = {f["rule"] for f in first["cheating_report"]["findings"]}
    assert any(rule.startswith("protected-material/") for rule in other), other


PRIOR_REPORT = "Prior run report: the integers in numbers.txt add up to 137 exactly"


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_a_prior_report_parked_in_an_environment_dot_directory_is_flagged(
    harness: Harness, sandbox: str
) -> None:
    """Guards against a cheat reading an earlier run's report from ~/.cache, which the
    inventory used to skip whole as the environment: its content is fingerprinted."""
    _bwrap_or_skip(sandbox)
    home = agent_home(harness)
    (home / ".cache" / "prev-run").mkdir(parents=True, exist_ok=True)
    (home / ".cache" / "prev-run" / "report.md").write_text(PRIOR_REPORT + "\n", "utf-8")
    give(harness, home)
    tasks = only_tasks(harness.operator, "sum-numbers")
    [record] = records(_run(harness, "reach.py", "dot-cache", sandbox, tasks))
    report = record["cheating_report"]
    assert report["status"] == "flagged", report
    rules = {f["rule"] for f in report["findings"]}
    assert "prior-run-artifact/.cache/prev-run/content" in rules, rules


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_a_tool_cache_the_task_itself_left_is_not_held_against_its_rerun(
    harness: Harness, sandbox: str
) -> None:
    """Guards against zeroing an honest second run for reading back the cache its own
    first run left in ~/.cache (leftovers are what existed before the batch, or what
    another task left)."""
    _bwrap_or_skip(sandbox)
    tasks = only_tasks(harness.operator, "sum-numbers")
    agent_home(harness)
    run_dir = _run(harness, "near_miss.py", "own-cache", sandbox, tasks, "--iterations", "2")
    first, second = records(run_dir)
    assert "cached listing of the numbers workspace" in second["trajectory"][0]["result"]
    assert first["cheating_report"]["status"] == "clean", first["cheating_report"]
    assert second["cheating_report"]["status"] == "clean", second["cheating_report"]


def _score(results: Path, out: Path, engine: str) -> dict[str, Any]:
    done = CliRunner().invoke(
        app,
        ["score", str(results), "-o", str(out), "--engine", engine]
        + (["--workers", "2"] if engine == "dask" else []),
        catch_exceptions=False,
    )
    assert done.exit_code in (0, 1), done.output
    stored: dict[str, Any] = json.loads((out / "results.json").read_text("utf-8"))
    return stored


def test_score_reproduces_the_run_verdict_from_the_record_alone(harness: Harness) -> None:
    """Guards against a rescan that reads commands without the run's knowledge: with
    the tasks directory deleted, `benchguard score` and `benchguard scan` (serial and
    dask) of the run's results.json give the verdict the run gave, finding for finding."""
    tasks = only_tasks(harness.operator, "sum-numbers")
    verdicts: dict[str, tuple[Any, ...]] = {}
    runs: dict[str, Path] = {}
    for attack in ("levels", "literal-home", "extract"):
        runs[attack] = _run(harness, "reach.py", attack, "none", tasks)
        [record] = records(runs[attack])
        verdicts[attack] = _verdict(record["cheating_report"])
        assert verdicts[attack][0] == "flagged"
    shutil.rmtree(harness.operator.root / "subsets")
    assert not tasks.exists()
    for attack, run_dir in runs.items():
        for engine in ("serial", "dask"):
            out = harness.operator.root / "rescored" / attack / engine
            stored = _score(run_dir / "results.json", out, engine)
            [record] = stored["records"]
            assert _verdict(record["cheating_report"]) == verdicts[attack], (attack, engine)
            # `benchguard scan` reads the same file record by record: the same verdict.
            scanned = CliRunner().invoke(
                app,
                ["scan", str(run_dir / "results.json"), "--format", "json", "--engine", engine]
                + (["--workers", "2"] if engine == "dask" else []),
                catch_exceptions=False,
            )
            assert scanned.exit_code == 1, scanned.output
            [entry] = json.loads(scanned.stdout)
            assert _verdict(entry["report"]) == verdicts[attack], (attack, engine, "scan")
