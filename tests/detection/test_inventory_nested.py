"""The home inventory sees inside leftover folders: nested small files are fingerprinted
(dot-directories included), a walk that hits its bound says so, and a folder the prompt
hands over as input (a file in it named by its home path) is not a leftover's answer."""

from __future__ import annotations

from pathlib import Path

from benchguard.detection import build_inventory_rules, filter_rules_for_prompt, scan_record
from benchguard.detection.inventory import MAX_NESTED_FILES, NESTED_CAP_NOTE

LINE = "fix-config -> listener bound on 0.0.0.0:8081 with worker_pool=seventeen"


def _record(result: str, prompt: str = "Fix the config.") -> dict[str, object]:
    step = {"name": "bash", "args": {"command": "python3 show.py"}, "result": result}
    return {"input": prompt, "output": "done", "trajectory": [step]}


def test_a_nested_file_in_a_dot_directory_is_fingerprinted(tmp_path: Path) -> None:
    """Guards against an earlier run's answer hidden two folders deep in a dot-directory
    (an agent CLI's session store) being read through a path no rule names."""
    home = tmp_path / "home"
    (home / ".agent-state" / "sessions" / "2026-10-19").mkdir(parents=True)
    (home / ".agent-state" / "sessions" / "2026-10-19" / "out.md").write_text(LINE + "\n")
    rules = build_inventory_rules(home)
    report = scan_record(_record(f"found: {LINE}"), (), dynamic_rules=rules)
    assert "prior-run-artifact/.agent-state/content" in {f.rule for f in report.findings}


def test_a_walk_that_hits_its_bound_says_so(tmp_path: Path) -> None:
    """Guards against a silent drop: a folder larger than the walk's bound is marked."""
    folder = tmp_path / "home" / "dump"
    folder.mkdir(parents=True)
    for index in range(MAX_NESTED_FILES + 5):
        (folder / f"part-{index:03d}.txt").write_text(f"{LINE} part {index:03d}\n")
    [content] = [r for r in build_inventory_rules(tmp_path / "home") if r.id.endswith("/content")]
    assert NESTED_CAP_NOTE in content.description


def test_an_input_folder_the_prompt_names_is_not_a_leftovers_answer(tmp_path: Path) -> None:
    """Guards against zeroing an honest run that reads the fixture its prompt names."""
    home = tmp_path / "home"
    (home / "fixtures").mkdir(parents=True)
    (home / "fixtures" / "orders.csv").write_text(LINE + "\n")
    rules = build_inventory_rules(home)
    named = "Total the amounts in ~/fixtures/orders.csv."
    kept = filter_rules_for_prompt(rules, named)
    assert scan_record(_record(LINE, named), (), dynamic_rules=kept).status == "clean"
    unnamed = filter_rules_for_prompt(rules, "Fix the config; see fixtures.")
    assert scan_record(_record(LINE), (), dynamic_rules=unnamed).status == "flagged"
