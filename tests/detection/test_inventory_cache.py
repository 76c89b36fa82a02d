"""The per-task re-inventory's cache, the generated patterns' relaxed forms, prompt names.

Each shortcut here must give exactly what the slow path gives; these tests compare the
two and check that a change on disk is always seen.
"""

from __future__ import annotations

import os
import random
import re
import time
from pathlib import Path
from typing import Any

import pytest

from benchguard.detection import inventory
from benchguard.detection._patterns import is_trusted, pattern_problem
from benchguard.detection._relax import relax, remembered_relaxed
from benchguard.detection.detector import annotate_records, scan_record
from benchguard.detection.inventory import (
    BatchInventory,
    PromptNames,
    build_inventory_rules,
    filter_rules_for_prompt,
)
from benchguard.record.rules import ruleset_digest
from benchguard.record.rulesets import RulesetTable

LINE_A = "the previous run concluded that item 7 needs no further action"
LINE_B = "the previous run concluded that item 8 needs a fresh restart!!"
assert len(LINE_A) == len(LINE_B)


def _home(root: Path, files: int = 5) -> Path:
    home = root / "home"
    home.mkdir()
    for index in range(files):
        (home / f"note-{index}.md").write_text(f"{LINE_A} ({index})\n", encoding="utf-8")
    (home / "old-dir").mkdir()
    return home


def _settled(monkeypatch: pytest.MonkeyPatch) -> None:
    """Treat every file as settled, as in a home whose leftovers are old."""
    monkeypatch.setattr(inventory, "RACY_WINDOW_NS", 0)


def _content(rules: tuple[Any, ...], name: str) -> Any:
    return next((r for r in rules if r.id == f"prior-run-artifact/{name}/content"), None)


def _wait_for_new_timestamp(path: Path) -> None:
    # File timestamps come from a coarse clock; a later write must land on a later tick.
    previous = os.lstat(path).st_ctime_ns
    while time.time_ns() < previous + 50_000_000:
        time.sleep(0.01)


def test_unchanged_entries_are_not_read_again_and_keep_their_rule_objects(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache's point: a second snapshot of an unchanged home reads no file and
    returns the very same rule objects (the detector's compiled plan keys on them)."""
    _settled(monkeypatch)
    home = _home(tmp_path)
    batch = BatchInventory(home)
    first = batch.before_task("a")
    refreshed = batch.cache.refreshed
    second = batch.before_task("b")
    assert batch.cache.refreshed == refreshed
    assert len(first) == len(second) and all(x is y for x, y in zip(first, second, strict=True))
    assert second == build_inventory_rules(home)


def test_a_changed_file_is_read_again_even_when_its_mtime_is_put_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Adversarial: rewriting a leftover with same-size content and restoring its mtime
    (touch -d) must not keep the old fingerprint; the ctime gives it away."""
    _settled(monkeypatch)
    home = _home(tmp_path)
    target = home / "note-1.md"
    batch = BatchInventory(home)
    before = _content(batch.before_task("a"), "note-1.md")
    assert before is not None and re.escape(f"{LINE_A} (1)") in before.patterns
    old = os.lstat(target)
    _wait_for_new_timestamp(target)
    target.write_text(f"{LINE_B} (1)\n", encoding="utf-8")
    assert os.lstat(target).st_size == old.st_size
    os.utime(target, ns=(old.st_atime_ns, old.st_mtime_ns))
    after = _content(batch.before_task("b"), "note-1.md")
    assert after is not None and after.patterns == (re.escape(f"{LINE_B} (1)"),)
    report = scan_record(
        {"input": "x", "output": f"{LINE_B} (1)", "trajectory": []}, (), dynamic_rules=(after,)
    )
    assert report.status == "flagged"


def test_a_file_changed_within_the_racy_window_is_read_every_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards against a same-tick rewrite (same size, same timestamps on a coarse
    clock) hiding behind a cached fingerprint: a recently changed file is not cached."""
    # A window of a year: the files written below are inside it however slow the run.
    monkeypatch.setattr(inventory, "RACY_WINDOW_NS", 365 * 24 * 3600 * 10**9)
    home = _home(tmp_path, files=2)
    batch = BatchInventory(home)
    batch.before_task("a")
    refreshed = batch.cache.refreshed
    batch.before_task("b")
    assert batch.cache.refreshed == refreshed + 2  # both files were written just now
    (home / "note-0.md").write_text(f"{LINE_B} (0)\n", encoding="utf-8")
    rules = batch.before_task("c")
    assert _content(rules, "note-0.md").patterns == (re.escape(f"{LINE_B} (0)"),)


def test_a_file_swapped_for_a_symlink_never_gets_the_targets_fingerprint(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Adversarial: pattern exfiltration through the cache. Replacing a fingerprinted
    file by a link to a secret must drop the fingerprint, not keep or refresh it."""
    _settled(monkeypatch)
    secret = tmp_path / "secret.txt"
    secret.write_text("JUDGE_API_KEY=sk-live-very-secret-value-0123456789\n", encoding="utf-8")
    home = _home(tmp_path, files=1)
    batch = BatchInventory(home)
    assert _content(batch.before_task("a"), "note-0.md") is not None
    (home / "note-0.md").unlink()
    os.symlink(secret, home / "note-0.md")
    rules = batch.before_task("b")
    assert _content(rules, "note-0.md") is None
    assert not any("sk-live" in p for r in rules for p in r.patterns)


def test_removed_and_new_entries_follow_the_disk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _settled(monkeypatch)
    home = _home(tmp_path, files=2)
    batch = BatchInventory(home)
    batch.before_task("a")
    (home / "note-0.md").unlink()
    (home / "fresh.md").write_text(f"{LINE_B}\n", encoding="utf-8")
    rules = batch.before_task("b")
    assert {r.source for r in rules if r.source} == {"fresh.md", "note-1.md", "old-dir"}
    assert batch.mid_batch_entries == {"fresh.md": ("a",)}
    assert _content(rules, "fresh.md") is not None  # credited to another task
    assert _content(batch.before_task("a"), "fresh.md") is None  # its own repeat


NAME_ALPHABET = "ab.-_~ /+é1İſKk"


def _random_name(rng: random.Random) -> str:
    return "".join(rng.choice(NAME_ALPHABET) for _ in range(rng.randint(1, 6))).strip() or "x"


def test_generated_patterns_carry_exactly_the_relaxed_form_the_parser_would_give(
    tmp_path: Path,
) -> None:
    """Guards against the prefilter shortcut changing a candidate set: the remembered
    form of every inventory pattern equals relaxing the pattern itself."""
    rng = random.Random(5)
    home = tmp_path / "h o~me+é"
    home.mkdir()
    extra = tmp_path / "shared tmp"
    extra.mkdir()
    names = {_random_name(rng) for _ in range(60)} - {".", ".."}
    for name in sorted(names):
        if "/" in name:
            continue
        (home / name).write_text(f"line long enough: {name} İstanbul ſ K {name}\n", "utf-8")
        (extra / name).write_text(f"{name} another line long enough to count\n", "utf-8")
    rules = build_inventory_rules(home, extra_roots=[extra])
    patterns = [p for r in rules for p in r.patterns]
    assert len(patterns) > 100
    for pattern in patterns:
        assert remembered_relaxed(pattern) == relax(pattern), pattern


def test_a_trusted_pattern_only_skips_a_check_it_passes(tmp_path: Path) -> None:
    """``_patterns``' process-wide trust set (generated patterns skip the load-time
    check) cannot change a verdict: every pattern the inventory marks trusted passes
    that check, so a detector that meets it after the set was cleared (at its bound)
    runs it exactly as one that trusted it. Lines of escapable characters longer than
    a fingerprint give the longest patterns it generates (fails when the fingerprint
    length lets a generated pattern past the check's length limit)."""
    rng = random.Random(11)
    home = tmp_path / "h o~me+é"
    home.mkdir()
    punctuation = "\\.^$*+?{}[]|()-#&~ "
    for index in range(40):
        line = "".join(rng.choice(punctuation + "aé") for _ in range(1000))
        name = f"notes+[{index}] (é).md"
        (home / name).write_text(f"{line}\nplain line long enough {index}: ſ K\n", "utf-8")
    rules = build_inventory_rules(home)
    patterns = [p for r in rules for p in r.patterns]
    assert len(patterns) > 80 and all(is_trusted(p) for p in patterns)
    for pattern in patterns:
        assert pattern_problem(pattern) is None, pattern


def _regex_names(text: str, name: str) -> bool:
    return re.search(rf"(?<![\w.-]){re.escape(name)}(?![\w-])(?!\.\w)", text) is not None


def test_prompt_names_match_the_whole_token_regex_exactly() -> None:
    """Guards against the token-set shortcut authorizing more or less than the
    documented whole-token rule, on random prompts full of dots, dashes and spaces."""
    rng = random.Random(11)
    alphabet = "ab.-_ é/,k"
    for _ in range(400):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 30)))
        named = PromptNames(text)
        candidates = {text[i:j] for i in range(len(text)) for j in range(i + 1, len(text) + 1)}
        for name in candidates | {"a.b", "a b", ".a", "a-"}:
            assert named(name) == _regex_names(text, name), (text, name)


def test_filter_keeps_the_documented_examples(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    for name in ("report.md", "report", "my notes.txt", "a+b"):
        (home / name).mkdir()
    rules = build_inventory_rules(home)

    def dropped(prompt: str) -> set[str]:
        kept = {r.source for r in filter_rules_for_prompt(rules, prompt)}
        return {r.source for r in rules if r.source} - kept  # type: ignore[misc]

    assert dropped("Write report.md.") == {"report.md"}
    assert dropped("see report.md.bak or report-2") == set()
    assert dropped("update my notes.txt and a+b") == {"my notes.txt", "a+b"}
    assert dropped("") == set()


def test_annotated_reports_equal_a_full_dump_and_name_one_shared_ruleset(tmp_path: Path) -> None:
    """Guards against storing by reference changing a stored report: without a table
    each equals the model's own dump; with one, the same dump with the rules named by
    digest in their place (key order included), the table holding them once."""
    home = _home(tmp_path)
    rules = build_inventory_rules(home)
    records: list[dict[str, Any]] = [
        {"input": "x", "output": "ok", "trajectory": [{"name": "sh", "args": "cat ~/note-2.md"}]},
        {"input": "x", "output": f"{LINE_A} (3)", "trajectory": []},
        {"input": "x", "output": "ok", "trajectory": []},
    ]
    assert annotate_records(records, (), dynamic_rules_for=lambda i, r: rules) == []
    for record in records:
        expected = scan_record(record, (), dynamic_rules=rules).model_dump(mode="json")
        assert record["cheating_report"] == expected
        assert list(record["cheating_report"]) == list(expected)
    table = RulesetTable()
    assert annotate_records(records, (), dynamic_rules_for=lambda i, r: rules, rulesets=table) == []
    digest = ruleset_digest(rules)
    for record in records:
        expected = scan_record(record, (), dynamic_rules=rules).model_dump(mode="json")
        named = {
            ("dynamic_rules_ref" if k == "dynamic_rules" else k): (
                digest if k == "dynamic_rules" else v
            )
            for k, v in expected.items()
        }
        assert record["cheating_report"] == named
        assert list(record["cheating_report"]) == list(named)
    assert len(table) == 1 and table.rules(digest) == rules


def test_an_extended_prefilter_names_the_same_candidates_as_a_fresh_one(tmp_path: Path) -> None:
    """Guards against the incremental prefilter (a home that grows between tasks keeps
    its compiled Sets and adds the new patterns) missing or inventing a candidate."""
    from benchguard.detection._prefilter import build_prefilter

    home = _home(tmp_path)
    base = tuple(p for r in build_inventory_rules(home) for p in r.patterns)
    (home / "fresh.md").write_text(f"{LINE_B}\n", encoding="utf-8")
    grown = [p for r in build_inventory_rules(home) for p in r.patterns if p not in set(base)]
    extra = (*grown, r"kubectl\s+get\s+secrets?", r"(?i)answer[_-]key")
    extended = build_prefilter(base).extended(extra)
    fresh = build_prefilter(base + extra)
    assert extended.patterns == fresh.patterns and extended.index == fresh.index
    texts = [
        "cat ~/fresh.md",
        f"{LINE_B}",
        "kubectl get secret",
        "ANSWER-KEY in $HOME/note-1.md",
        f"{LINE_A} (2) and ~/old-dir",
        "nothing here",
    ]
    for text in texts:
        assert extended.candidates(text) == fresh.candidates(text), text
