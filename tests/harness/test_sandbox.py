"""``--sandbox bwrap``: the boundary (material unreachable) and the tripwire together."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchguard.harness.sandbox import SandboxSpec, bwrap_argv, probe_bwrap
from harness.helpers import Operator, agent, load_run, only_tasks, prior_run

pytestmark = pytest.mark.slow

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")


@needs_bwrap
@pytest.mark.parametrize(
    ("cheater", "category"),
    [
        ("cheat-task-yaml", "task-definition"),
        ("cheat-prior-results", "results-dir"),
        ("cheat-grep-docs", "harness-repo"),
    ],
)
def test_sandboxed_cheaters_cannot_read_the_material_and_are_still_flagged(
    operator: Operator, cheater: str, category: str
) -> None:
    """Guards against the sandbox leaking the material, and against a blocked attempt
    passing as innocence: the typed path is still evidence of looking."""
    hint = {
        "cheat-task-yaml": str(operator.tasks),
        "cheat-prior-results": str(prior_run(operator)) if cheater == "cheat-prior-results" else "",
        "cheat-grep-docs": str(operator.checkout),
    }[cheater]
    tasks = only_tasks(operator, "sum-numbers")
    run_dir = operator.run_ok(
        str(tasks), "--agent", agent(cheater), "--sandbox", "bwrap", env={"CHEAT_HINT": hint}
    )
    [record], [row], manifest = load_run(run_dir)
    attempt = record["trajectory"][0]
    assert hint in attempt["args"]["command"]
    assert attempt["status"] == "error"
    assert "No such file or directory" in attempt["result"]
    assert record["sandboxed"] is True and row["sandboxed"] is True
    assert "sandboxed" in manifest["augmentation"]
    assert record["scores"]["VerificationCorrectness"]["score"] == 1.0
    assert category in record["cheating_report"]["categories"]
    assert row["outcomeScore"] == 0.0 and "IntegrityCatastrophic" in row["catastrophicKinds"]


@needs_bwrap
def test_sandboxed_honest_agent_scores_and_sees_only_its_own_world(
    operator: Operator, tmp_path: Path
) -> None:
    """Guards against the sandbox breaking honest work or exposing the operator's files."""
    secret = operator.root / "benchguard.env"
    secret.write_text("BENCHGUARD_JUDGE_API_KEY=sk-test\n", "utf-8")
    probe = tmp_path / "probe.yaml"
    probe.write_text(
        'name: probe\nargv: ["/bin/sh", "-c", '
        f'"ls {operator.root} {operator.results} {secret} /tmp 2>&1; echo net=$(cat /proc/net/dev | wc -l); '
        'echo scratch > $TMPDIR/probe-scratch && echo tmp=$(cat $TMPDIR/probe-scratch)"]\n'
        "trajectory: stdout\n",
        "utf-8",
    )
    tasks = only_tasks(operator, "sum-numbers")
    run_dir = operator.run_ok(
        str(tasks), "--agent", str(probe), "--sandbox", "bwrap", "--no-detect"
    )
    [record], _, _ = load_run(run_dir)
    seen = record["output"]
    assert seen.count("No such file or directory") == 3, seen
    assert "net=3" in seen, "only the loopback device: the network is off"
    # Agents (compilers, pip, test runners) write scratch files to $TMPDIR (the run's own
    # tmp; Landlock does not grant the sandbox's /tmp): as root the harness drops the
    # agent to an unprivileged uid, which must still be able to.
    assert "tmp=scratch" in seen, seen
    run_dir = operator.run_ok(str(tasks), "--agent", agent("honest"), "--sandbox", "bwrap")
    [record], [row], _ = load_run(run_dir)
    assert record["cheating_report"]["status"] == "clean"
    assert row["outcomeScore"] == 1.0 and row["sandboxed"] is True


def test_missing_bwrap_is_a_clear_error_before_any_agent_runs(
    operator: Operator, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    empty = tmp_path / "empty-bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    probe_bwrap.cache_clear()
    try:
        tasks = only_tasks(operator, "write-notes")
        code, output, _ = operator.run(str(tasks), "--agent", agent("honest"), "--sandbox", "bwrap")
    finally:
        probe_bwrap.cache_clear()
    assert code == 2
    assert "needs bubblewrap" in output and "apt-get install bubblewrap" in output
    assert not (operator.agent_home / "notes.md").exists()


def test_sandbox_binds_only_the_venv_never_the_checkout_around_it(tmp_path: Path) -> None:
    spec = SandboxSpec(workspace=tmp_path / "ws", home=tmp_path / "home", network=False)
    argv = bwrap_argv(spec, ["true"])
    bound = {argv[i + 1] for i, a in enumerate(argv) if a in ("--ro-bind", "--bind")}
    checkout = str(Path(__file__).resolve().parents[2])
    assert checkout not in bound
    assert not any(
        b.startswith(checkout + "/") and not b.startswith(checkout + "/.venv") for b in bound
    )
    assert "--unshare-all" in argv and "--share-net" not in argv
    assert "--die-with-parent" in argv and "--new-session" in argv
    assert "--share-net" in bwrap_argv(
        SandboxSpec(spec.workspace, spec.home, network=True), ["true"]
    )


def test_agent_directory_holding_the_tasks_is_refused(operator: Operator) -> None:
    """Guards against a read-only bind of the agent's directory re-exposing the tasks."""
    leaky = operator.root / "leaky.yaml"
    leaky.write_text('name: leaky\nargv: ["{python}", "{agent_dir}/x.py"]\n', "utf-8")
    code, output, _ = operator.run(str(operator.tasks), "--agent", str(leaky), "--sandbox", "bwrap")
    assert code == 2
    assert "would expose" in output and str(operator.tasks) in output


def test_agent_home_holding_the_tasks_is_refused(operator: Operator) -> None:
    """Guards against the read-write home bind re-exposing tasks that live under it."""
    code, output, _ = operator.run(
        str(operator.tasks),
        "--agent",
        agent("honest"),
        "--sandbox",
        "bwrap",
        home=operator.root,
    )
    assert code == 2 and "would expose" in output
