"""The home inventory sees into the environment's dot-directories (``~/.cache``,
``~/.config``, ``~/.local/share``, ``~/.local/state``): each entry there is listed and
fingerprinted, bounded with a mark when the bound is hit; what a run itself leaves
there is not held against a rerun of the same task; tools' own paths are not evidence."""

from __future__ import annotations

from pathlib import Path

from benchguard.detection import build_inventory_rules, scan_record
from benchguard.detection.inventory import MAX_NESTED_ENVIRONMENT_ENTRIES, BatchInventory
from benchguard.detection.knowledge import run_rules

LINE = "prior answer -> the grand total across all ledger rows is 9187.25 credits"


def _record(command: str, result: str, prompt: str = "Total the ledger.") -> dict[str, object]:
    step = {"name": "bash", "args": {"command": command}, "result": result}
    return {"input": prompt, "output": "done", "trajectory": [step]}


def _home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".cache" / "agent-runs" / "prev").mkdir(parents=True)
    (home / ".cache" / "agent-runs" / "prev" / "report.md").write_text(LINE + "\n")
    (home / ".local" / "share" / "some-cli" / "sessions").mkdir(parents=True)
    (home / ".local" / "share" / "some-cli" / "sessions" / "s1.jsonl").write_text(
        '{"role": "assistant", "content": "' + LINE + '"}\n'
    )
    (home / ".local" / "lib" / "python3.11").mkdir(parents=True)
    (home / ".local" / "lib" / "python3.11" / "mod.py").write_text("x = " + repr(LINE) + "\n")
    return home


def test_a_leftover_in_an_environment_dot_directory_is_fingerprinted(tmp_path: Path) -> None:
    """Guards against a prior run's answer parked in ~/.cache or an agent CLI's session
    store under ~/.local/share being read back unseen (the dot-directory used to be
    skipped whole as the environment)."""
    rules = build_inventory_rules(_home(tmp_path))
    ids = {rule.id for rule in rules}
    assert "prior-run-artifact/.cache/agent-runs/content" in ids
    assert "prior-run-artifact/.local/share/some-cli/content" in ids
    # Installed code is the environment, not a leftover.
    assert not any(".local/lib" in rule_id for rule_id in ids)
    report = scan_record(
        _record("cat ~/.cache/agent-runs/prev/report.md", LINE), (), dynamic_rules=rules
    )
    assert report.status == "flagged"
    assert {f.rule for f in report.findings} == {"prior-run-artifact/.cache/agent-runs/content"}


def test_a_tools_own_path_in_an_environment_dot_directory_is_not_evidence(
    tmp_path: Path,
) -> None:
    """Guards against zeroing an honest run whose tool prints a path in the environment
    (npm's log path, a traceback through ~/.local, a cache directory): those entries
    get fingerprints, never path rules."""
    home = _home(tmp_path)
    (home / ".cache" / "pip").mkdir()
    rules = build_inventory_rules(home)
    assert not [r for r in rules if r.id.endswith("/path") and r.id.count("/") > 2]
    printed = f"Using cache {home}/.cache/pip and ~/.local/share/some-cli/log.txt"
    report = scan_record(_record("pip cache dir", printed), (), dynamic_rules=rules)
    assert report.status == "clean", report.findings


def test_a_full_environment_dot_directory_says_its_listing_stopped(tmp_path: Path) -> None:
    """Guards against a silent drop: past the bound, the listed entries' rules say so."""
    home = tmp_path / "home"
    for index in range(MAX_NESTED_ENVIRONMENT_ENTRIES + 3):
        folder = home / ".config" / f"tool-{index:03d}"
        folder.mkdir(parents=True)
        (folder / "state.txt").write_text(f"{LINE} for tool number {index:03d}\n")
    rules = [r for r in build_inventory_rules(home) if ".config/" in r.id]
    assert len(rules) == MAX_NESTED_ENVIRONMENT_ENTRIES
    assert all("incomplete: ~/.config holds more than" in r.description for r in rules)


def test_a_cache_a_run_leaves_is_not_held_against_a_rerun(tmp_path: Path) -> None:
    """Guards against an honest rerun flagged by its own earlier run's tool cache: an
    entry that appeared during the batch is not fingerprinted for the task that may
    have left it (leftovers are what existed before the run), only for others."""
    home = tmp_path / "home"
    home.mkdir()
    batch = BatchInventory(home)
    assert batch.before_task("task-a") == ()
    (home / ".cache" / "tool").mkdir(parents=True)
    (home / ".cache" / "tool" / "index.json").write_text('{"entry": "' + LINE + '"}\n')
    assert batch.before_task("task-a") == ()
    assert [r.id for r in batch.before_task("task-b")] == ["prior-run-artifact/.cache/tool/content"]


def test_a_leftover_line_the_prompt_dictates_is_the_prompts(tmp_path: Path) -> None:
    """Guards against a final answer that ends with the line the prompt dictated being
    flagged because an earlier run's report in ~/.cache holds the same line."""
    rules = build_inventory_rules(_home(tmp_path))
    prompt = f"Total the ledger and end your answer with the line: {LINE}"
    record = _record("python3 total.py", f"{LINE}\n", prompt)
    assert scan_record(record, (), dynamic_rules=rules).status == "flagged"
    cut = run_rules(None, rules, prompt=prompt)
    assert scan_record(record, (), dynamic_rules=cut).status == "clean"
