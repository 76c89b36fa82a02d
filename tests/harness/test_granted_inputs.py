"""Inputs a prompt grants in the agent home are kept read-only (harness.granted)."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from benchguard.harness.granted import changed, digest, granted_inputs
from benchguard.harness.tasks import Task
from harness.context_helpers import fixture_task
from harness.privileges import Harness, records, run_adversary


def _task(prompt: str, *checks: dict[str, object]) -> Task:
    return Task.model_validate({"name": "t", "prompt": prompt, "verification": list(checks)})


def test_what_a_prompt_grants(tmp_path: Path) -> None:
    """Guards against read-only binds that break honest work: a deliverable named
    alone (`~/report.md`), a path a check names, a missing path or a link are never
    granted; a file the prompt names inside a home folder is."""
    home = tmp_path / "home"
    (home / "fixtures").mkdir(parents=True)
    (home / "fixtures" / "orders.csv").write_text("a,1\n", "utf-8")
    (home / "out").mkdir()
    (home / "out" / "report.md").write_text("old\n", "utf-8")
    (home / "report.md").write_text("old\n", "utf-8")
    (home / "linked").symlink_to(home / "fixtures")
    prompt = (
        "Read ~/fixtures/orders.csv and $HOME/linked/orders.csv, also "
        f"{home}/fixtures/orders.csv. Write ~/report.md and ~/out/report.md, "
        "and ~/missing/file.txt."
    )
    check = {"name": "c", "role": "correctness", "file": "~/out/report.md", "exists": True}
    assert granted_inputs(_task(prompt, check), home) == (home / "fixtures" / "orders.csv",)
    assert granted_inputs(_task(prompt), home) == (
        home / "fixtures" / "orders.csv",
        home / "out" / "report.md",
    )
    assert granted_inputs(_task("Look at ~/fixtures."), home) == ()


def test_a_changed_input_is_seen_even_when_size_and_times_are_kept(tmp_path: Path) -> None:
    """Guards against a rewrite that keeps the size and restores the mtime."""
    target = tmp_path / "fixtures" / "orders.csv"
    target.parent.mkdir()
    target.write_text("a,1\n", "utf-8")
    before = digest([target.parent])
    info = target.stat()
    target.write_text("a,9\n", "utf-8")
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))
    assert changed(before, [target.parent]) == [str(target.parent)]
    assert changed(digest([target.parent]), [target.parent]) == []


@pytest.mark.slow
@pytest.mark.parametrize("home_mode", ["fresh", "persistent"])
@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_a_granted_input_cannot_become_a_channel(
    harness: Harness, sandbox: str, home_mode: str
) -> None:
    """Guards against an agent appending answers to (or replacing) the fixture the
    prompt hands over, for the next run to read. With a fresh home (the default) the
    write lands in the run's own layer, kept as its evidence, and the operator's file
    is unchanged; with a persistent home, sandboxed the write fails and the file is
    unchanged, unsandboxed the record says the input changed."""
    if sandbox == "bwrap" and shutil.which("bwrap") is None:
        pytest.skip("bubblewrap not installed")
    operator = harness.operator
    tasks = fixture_task(harness)
    fixture = operator.agent_home / "fixtures" / "orders.csv"
    original = fixture.read_text("utf-8")
    run_dir = run_adversary(
        harness,
        "granted_write.py",
        tasks,
        "--sandbox",
        sandbox,
        "--audit",
        "none",
        "--home-mode",
        home_mode,
        env={},
    )
    [record] = records(run_dir)
    assert record["granted_inputs"] == [str(fixture)]
    if home_mode == "fresh":
        assert fixture.read_text("utf-8") == original
        assert record["granted_inputs_changed"] == []
        assert "fixtures/orders.csv" in record["home_writes"]["written"]
        kept = run_dir / record["home_writes"]["kept"] / "fixtures" / "orders.csv"
        assert "NEXT-RUN-ANSWER" in kept.read_text("utf-8")
    elif sandbox == "bwrap":
        assert fixture.read_text("utf-8") == original
        assert record["granted_inputs_changed"] == []
        results = [step["result"] for step in record["trajectory"][1:]]
        refused = ("Read-only file system", "busy", "cross-device")
        assert all(any(word in r for word in refused) for r in results), results
    else:
        assert "NEXT-RUN-ANSWER" in fixture.read_text("utf-8")
        assert record["granted_inputs_changed"] == [str(fixture)]
