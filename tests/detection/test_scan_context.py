"""The scan context a harness record stores: bounded, read back by every later scan."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchguard.detection.context import (
    MAX_KNOWN_PATHS,
    SCAN_CONTEXT_KEY,
    ScanContext,
    list_known_paths,
)
from benchguard.detection.detector import Detector
from benchguard.detection.knowledge import gather, run_context, run_rules
from benchguard.detection.rules import load_ruleset
from benchguard.detection.shell import ShellReader
from benchguard.record.rules import ScanRulesets
from benchguard.records import parse_record


def _record(*commands: str, context: Any = None) -> dict[str, Any]:
    steps = [{"name": "bash", "args": {"command": c}, "result": "ok"} for c in commands]
    record: dict[str, Any] = {"input": "do the task", "output": "done", "trajectory": steps}
    if context is not None:
        record[SCAN_CONTEXT_KEY] = context
    return record


def test_a_stored_context_resolves_relative_cds_and_globs() -> None:
    """Guards against a rescan that reads `cd ..; cd tasks/x; cat task.yaml` without
    the run's working directory: the stored context alone makes it the task file."""
    context = ScanContext(
        home="/work/agent-home",
        workdir="/work/runs/bg-run-1/workspace",
        known_paths=("/work/runs/tasks", "/work/runs/tasks/x", "/work/runs/tasks/x/task.yaml"),
    )
    record = _record("cd ../..", "cd tasks/x", "cat task.yaml", context=context.model_dump())
    rules = load_ruleset()
    flagged = Detector().scan(record, ScanRulesets.of(rules))
    assert "task-definition/path" in {f.rule for f in flagged.findings}
    bare = Detector().scan(
        _record("cd ../..", "cd tasks/x", "cat task.yaml"), ScanRulesets.of(rules)
    )
    assert "task-definition/path" not in {f.rule for f in bare.findings}
    globbed = _record("cd /work/runs", "cat t?sks/*/t*.yaml", context=context.model_dump())
    assert "task-definition/path" in {
        f.rule for f in Detector().scan(globbed, ScanRulesets.of(rules)).findings
    }


def test_an_unreadable_stored_context_fails_closed() -> None:
    """Guards against a tampered or damaged context silently reading clean."""
    report = Detector().scan(
        _record("ls", context={"home": "relative/path"}), ScanRulesets.of(load_ruleset())
    )
    assert report.status == "flagged" and report.incomplete
    assert "scan context" in (report.incomplete_reason or "")


def test_the_edge_parser_keeps_a_valid_context_and_drops_an_oversized_one() -> None:
    good = parse_record(_record("ls", context={"home": "/h", "workdir": "/h/w"}))
    assert good.scan_context == ScanContext(home="/h", workdir="/h/w")
    assert good.to_json()[SCAN_CONTEXT_KEY]["workdir"] == "/h/w"
    paths = [f"/p/{i}" for i in range(MAX_KNOWN_PATHS + 1)]
    big = parse_record(_record("ls", context={"home": "/h", "known_paths": paths}))
    assert big.scan_context is None
    assert any(SCAN_CONTEXT_KEY in note for note in big.record_errors)


def test_known_paths_are_bounded_sorted_and_say_when_incomplete(tmp_path: Path) -> None:
    for index in range(30):
        (tmp_path / "tasks" / f"t{index:02d}").mkdir(parents=True)
        (tmp_path / "tasks" / f"t{index:02d}" / "task.yaml").write_text("x", "utf-8")
    paths, complete = list_known_paths([tmp_path / "tasks"], limit=20)
    assert not complete and len(paths) == 20 and list(paths) == sorted(paths)
    # Breadth first: the upper level is in before any file below it.
    assert sum(p.endswith("task.yaml") for p in paths) == 0
    whole, complete = list_known_paths([tmp_path / "tasks"])
    assert complete and len(whole) == 61
    seen, _ = list_known_paths([tmp_path / "tasks"], seen_as={str(tmp_path): "/home/agent"})
    assert seen[0] == "/home/agent/tasks"


def test_run_rules_never_fingerprint_the_prompt_or_the_expected_answers(tmp_path: Path) -> None:
    """Guards against an honest run flagged for reading back its own deliverable (the
    expected output is in it by definition) or for text its prompt dictates."""
    tasks = tmp_path / "tasks" / "t"
    tasks.mkdir(parents=True)
    (tasks / "task.yaml").write_text(
        "prompt: Write the sentence 'the quarterly numbers were reconciled today'.\n"
        "expected_output: the final reconciled balance is 4410 credits\n"
        "rubric: Full marks only when the ledger checksum QX-7741-ALPHA matches\n",
        "utf-8",
    )
    knowledge = gather(home=tmp_path / "home", material=[tmp_path / "tasks"])
    prompt = "Write the sentence 'the quarterly numbers were reconciled today'."
    rules = run_rules(
        knowledge, (), prompt=prompt, answers=("the final reconciled balance is 4410 credits",)
    )
    # Only the rubric is left: the prompt line and the expected output are given text.
    [pattern] = [p for rule in rules for p in rule.patterns]
    assert "QX" in pattern
    everything = run_rules(knowledge, (), prompt="", answers=())
    assert len([p for rule in everything for p in rule.patterns]) == 3

    workdir = str(tmp_path / "w")
    assert run_context(knowledge, workdir=workdir) == ScanContext(
        home=str(tmp_path / "home"), workdir=workdir
    )


def test_a_record_stores_only_the_known_paths_its_globs_resolve_to(tmp_path: Path) -> None:
    """Guards against a context too big to store per record, and against one that
    reads a record differently from the whole listing it was cut from."""
    for name in ("alpha", "beta", "gamma"):
        (tmp_path / "tasks" / name).mkdir(parents=True)
        (tmp_path / "tasks" / name / "task.yaml").write_text(f"rubric: {name} " * 5, "utf-8")
    knowledge = gather(home=tmp_path / "home", material=[tmp_path / "tasks"])
    assert len(knowledge.protected_paths) == 7
    workdir = str(tmp_path / "tasks" / "alpha")
    commands = ("cat ../b*/t?sk.yaml", "ls", "cd ..", "cat g*/*.yaml")
    record = _record(*commands)
    context = run_context(knowledge, workdir=workdir, record=record)
    tasks = str(tmp_path / "tasks")
    assert context.known_paths == (f"{tasks}/beta/task.yaml", f"{tasks}/gamma/task.yaml")
    rules = load_ruleset()
    stored = Detector().scan(
        {**record, SCAN_CONTEXT_KEY: context.model_dump()}, ScanRulesets.of(rules)
    )
    whole = Detector().scan(
        record,
        ScanRulesets.of(rules),
        reader=ShellReader(home=context.home, known_paths=knowledge.protected_paths),
        workdir=workdir,
    )
    assert stored.status == whole.status == "flagged"
    assert stored.findings == whole.findings
    assert run_context(knowledge, workdir=workdir, record=_record("ls")).known_paths == ()


def test_material_skips_excluded_trees_and_says_when_it_stopped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards against a task's big workspace seed (a repository the agent is given)
    using up the material bounds before the task definitions are read, and against a
    bound that is hit silently."""
    from benchguard.detection import material

    tasks = tmp_path / "tasks"
    seed = tasks / "a" / "workspace"
    seed.mkdir(parents=True)
    for index in range(30):
        (seed / f"f{index:02d}.py").write_text(f"value = 'seed file number {index:02d} here'\n")
    (tasks / "a" / "task.yaml").write_text("rubric: the hidden rubric text for task a\n")
    monkeypatch.setattr(material, "MAX_MATERIAL_FILES", 5)
    knowledge = gather(home=tmp_path / "home", material=[tasks], exclude=[seed])
    assert knowledge.material_complete and knowledge.material_files == 1
    unbounded = gather(home=tmp_path / "home", material=[tasks])
    assert not unbounded.material_complete and unbounded.material_files == 5


def test_a_run_whose_own_task_file_has_no_fingerprint_keeps_the_fallback_rules(
    tmp_path: Path,
) -> None:
    """Guards against the fingerprints of other tasks switching off the key-shaped
    fallback rules for a run whose own task file has nothing left to fingerprint."""
    for name, rubric in (("a", "the secret rubric of task a, long enough"), ("b", "")):
        (tmp_path / "tasks" / name).mkdir(parents=True)
        text = f"prompt: Count the words of poem.txt into count.txt for {name}\n"
        text += "verification:\n  - name: c\n    role: correctness\n    file: x\n"
        (tmp_path / "tasks" / name / "task.yaml").write_text(
            text + (f"rubric: {rubric}\n" if rubric else ""), "utf-8"
        )
    knowledge = gather(home=tmp_path / "home", material=[tmp_path / "tasks"])
    own_b = (str(tmp_path / "tasks" / "b" / "task.yaml"),)
    prompt_b = "Count the words of poem.txt into count.txt for b"
    rules = load_ruleset()
    cat_b = _record("find . -exec cat {} +", context=None)
    cat_b["input"] = prompt_b
    cat_b["trajectory"][0]["result"] = (tmp_path / "tasks" / "b" / "task.yaml").read_text()
    with_own = run_rules(knowledge, (), prompt=prompt_b, own=own_b)
    assert with_own == ()
    report = Detector().scan(cat_b, ScanRulesets.of(rules, with_own))
    assert "task-definition/content" in {f.rule for f in report.findings}
    without = run_rules(knowledge, (), prompt=prompt_b)
    assert without
    assert Detector().scan(cat_b, ScanRulesets.of(rules, without)).status == "clean"
