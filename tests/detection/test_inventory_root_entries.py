"""Extra-root entries are named by their full path: ids, sources and authorization."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchguard.detection import (
    BatchInventory,
    Rule,
    build_inventory_rules,
    filter_rules_for_prompt,
    scan_record,
)

ANSWER = "The expected answer for word-count is forty-two words exactly"


def _record(command: str, prompt: str) -> dict[str, Any]:
    step = {"name": "exec", "args": {"command": command}, "result": "", "status": "completed"}
    return {"input": prompt, "output": "done", "trajectory": [step]}


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """A home and an extra root that both hold a ``report.md``."""
    home = tmp_path / "home"
    shared = tmp_path / "shared-tmp"
    for root in (home, shared):
        root.mkdir()
        (root / "report.md").write_text(f"# Report\n{ANSWER}\n", encoding="utf-8")
    return home, shared


def _path_rules(rules: tuple[Rule, ...]) -> dict[str, Rule]:
    return {rule.id: rule for rule in rules if rule.id.endswith("/path")}


def test_root_entries_have_clean_ids_and_full_path_sources(layout: tuple[Path, Path]) -> None:
    """Guards against ids with a double slash (``prior-run-artifact//tmp/...``) and a root
    entry sharing its ``source`` with a home entry of the same name."""
    home, shared = layout
    rules = build_inventory_rules(home, extra_roots=[shared])
    assert sorted(r.id for r in rules) == sorted(
        [
            "prior-run-artifact/report.md/path",
            "prior-run-artifact/report.md/content",
            f"prior-run-artifact/root:{shared}/report.md/path",
            f"prior-run-artifact/root:{shared}/report.md/content",
        ]
    )
    assert all("//" not in r.id for r in rules)
    by_id = _path_rules(rules)
    assert by_id["prior-run-artifact/report.md/path"].source == "report.md"
    assert by_id[f"prior-run-artifact/root:{shared}/report.md/path"].source == (
        f"{shared}/report.md"
    )


def test_a_prompt_naming_the_bare_name_does_not_authorize_the_root_entry(
    layout: tuple[Path, Path],
) -> None:
    """Guards against a task that names its own ``report.md`` (in the home) also clearing
    a read of another run's ``/tmp/.../report.md``: the two share a name, not a file."""
    home, shared = layout
    rules = build_inventory_rules(home, extra_roots=[shared])
    prompt = "Write report.md in your home directory."
    kept = _path_rules(filter_rules_for_prompt(rules, prompt))
    assert "prior-run-artifact/report.md/path" not in kept  # the home entry is authorized
    assert f"prior-run-artifact/root:{shared}/report.md/path" in kept

    record = _record(f"cat {shared}/report.md", prompt)
    report = scan_record(record, (), dynamic_rules=filter_rules_for_prompt(rules, prompt))
    assert report.status == "flagged"
    assert [f.rule for f in report.findings] == [f"prior-run-artifact/root:{shared}/report.md/path"]


@pytest.mark.parametrize(
    ("prompt", "authorized"),
    [
        ("Write the summary to {shared}/report.md.", True),
        ("Write the summary to {shared}/report.md and stop", True),
        ("Write the summary to {shared}/report.md.bak", False),
        ("Write the summary to {shared}/report.mdx", False),
        ("Write the summary to /elsewhere{shared}/report.md", False),
        ("Write the summary to {shared}", False),
    ],
)
def test_only_the_full_path_authorizes_a_root_entry(
    layout: tuple[Path, Path], prompt: str, authorized: bool
) -> None:
    """Guards against a partial or longer path authorizing a root entry: the prompt must
    name its full path (as the root was configured) as a whole token."""
    home, shared = layout
    rules = build_inventory_rules(home, extra_roots=[shared])
    kept = _path_rules(filter_rules_for_prompt(rules, prompt.format(shared=shared)))
    rule_id = f"prior-run-artifact/root:{shared}/report.md/path"
    assert (rule_id not in kept) is authorized
    # Content fingerprints are never authorized, whatever the prompt names.
    assert f"prior-run-artifact/root:{shared}/report.md/content" in {
        r.id for r in filter_rules_for_prompt(rules, prompt.format(shared=shared))
    }


def test_the_batch_inventory_tracks_root_entries_by_the_same_full_path(
    layout: tuple[Path, Path],
) -> None:
    """Guards against the mid-batch attribution key and the rule's source drifting
    apart for root entries."""
    home, shared = layout
    batch = BatchInventory(home, extra_roots=[shared])
    batch.before_task("first")
    (shared / "notes.md").write_text("new\n", encoding="utf-8")
    rules = batch.before_task("second")
    assert batch.mid_batch_entries == {f"{shared}/notes.md": ("first",)}
    assert f"{shared}/notes.md" in {r.source for r in rules}


def test_the_filesystem_root_as_a_root_gives_single_slash_ids(tmp_path: Path) -> None:
    """Guards against ``/`` (stripped to nothing) producing ``root:`` ids without a path
    or with a double slash."""
    home = tmp_path / "home"
    home.mkdir()
    rules = build_inventory_rules(home, extra_roots=[Path("/")])
    assert rules, "the file-system root always has entries"
    for rule in rules:
        assert rule.id.startswith("prior-run-artifact/root:/")
        assert "//" not in rule.id
        assert rule.source is None or (rule.source.startswith("/") and "//" not in rule.source)
