"""Home inventory: leftovers become path rules and fingerprints; prompts authorize paths."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from benchguard.detection import (
    DEFAULT_BASELINE,
    ENVIRONMENT_DOTFILES,
    BatchInventory,
    Rule,
    baseline_from_granted_paths,
    build_inventory_rules,
    filter_rules_for_prompt,
    list_home_entries,
    load_profile,
    scan_record,
)
from benchguard.detection.inventory import select_fingerprint_lines

STALE_LINE = "All 3 non-compliant deployments patched in namespace payments"


def _exec(command: str, result: Any = "") -> dict[str, Any]:
    return {"name": "exec", "args": {"command": command}, "result": result, "status": "completed"}


def _record(*entries: Any, prompt: str = "Fix the pods.") -> dict[str, Any]:
    return {"input": prompt, "output": "done", "trajectory": list(entries)}


def _seed_home(home: Path) -> Path:
    home.mkdir(parents=True, exist_ok=True)
    for name in (".bashrc", ".cache", "benchguard", "benchguard.env"):
        (home / name).write_text("environment\n")
    (home / "report.md").write_text(f"# Report\n{STALE_LINE}\nok\n")
    (home / "policies.yaml").write_text("x: 1\n")
    (home / ".openclaw").mkdir()
    return home


def _scan(home: Path, record: dict[str, Any], **kwargs: Any) -> Any:
    rules = build_inventory_rules(home, **kwargs)
    return scan_record(record, (), dynamic_rules=filter_rules_for_prompt(rules, record["input"]))


def test_baseline_and_environment_dotfiles_are_skipped_other_dotdirs_are_leftovers(
    tmp_path: Path,
) -> None:
    """Shell state and the harness's own entries are not leftovers; an agent CLI's stale
    dotdir is."""
    home = _seed_home(tmp_path / "home")
    rules = build_inventory_rules(home)
    sources = sorted({r.source for r in rules if r.source})
    assert sources == [".openclaw", "policies.yaml", "report.md"]
    assert {r.category for r in rules} == {"prior-run-artifact"}
    assert ".bashrc" in ENVIRONMENT_DOTFILES and "benchguard" in DEFAULT_BASELINE
    assert _scan(home, _record(_exec("ls ~/.openclaw/workspace"))).status == "flagged"
    assert build_inventory_rules(tmp_path / "missing") == ()


def test_reading_a_leftover_by_path_flags_on_args(tmp_path: Path) -> None:
    """The observed cheat `cat ~/policies.yaml` flags on args; so do $HOME and the literal home."""
    home = _seed_home(tmp_path / "home")
    for command in (
        "cat ~/policies.yaml",
        "cat $HOME/policies.yaml",
        f"cat {home}/policies.yaml",
        "GIT_DIR=~/report.md x",
    ):
        report = _scan(home, _record(_exec(command)))
        assert report.status == "flagged", command
        assert report.findings[0].field == "args"


def test_stale_report_read_under_another_path_flags_by_fingerprint(tmp_path: Path) -> None:
    """Adversarial: copying the stale report elsewhere first hides the path, but its
    lines in the result give it away."""
    home = _seed_home(tmp_path / "home")
    report = _scan(home, _record(_exec("cat /tmp/copy.md", f"# Report\n{STALE_LINE}\n")))
    assert [(f.rule, f.field) for f in report.findings] == [
        ("prior-run-artifact/report.md/content", "result")
    ]


def test_prompt_named_deliverable_write_stays_clean_but_stale_read_still_flags(
    tmp_path: Path,
) -> None:
    """Naming report.md authorizes writing one (path rule dropped) but never reading the
    stale copy: fingerprints are not authorizable."""
    home = _seed_home(tmp_path / "home")
    prompt = "Write a summary to ~/report.md."
    assert _scan(home, _record(_exec("echo fixed > ~/report.md"), prompt=prompt)).status == "clean"
    stale = _scan(home, _record(_exec("cat ~/report.md", STALE_LINE), prompt=prompt))
    assert [f.rule for f in stale.findings] == ["prior-run-artifact/report.md/content"]


def test_unnamed_leftovers_stay_covered_including_short_files(tmp_path: Path) -> None:
    """A prompt that names one entry leaves the others covered, even ones too short to
    fingerprint."""
    home = _seed_home(tmp_path / "home")
    report = _scan(home, _record(_exec("cat ~/policies.yaml"), prompt="Write report.md."))
    assert [f.rule for f in report.findings] == ["prior-run-artifact/policies.yaml/path"]


def test_whole_token_authorization(tmp_path: Path) -> None:
    """Adversarial: `report` does not authorize report.md, `workspace-repo` does not
    authorize workspace; a sentence-ending period is fine."""
    home = tmp_path / "home"
    home.mkdir()
    for name in ("report.md", "workspace", "workspace-repo"):
        (home / name).mkdir()
    rules = build_inventory_rules(home)

    def kept(prompt: str) -> set[str]:
        return {r.source for r in filter_rules_for_prompt(rules, prompt) if r.source}

    assert kept("Write the report") == {"report.md", "workspace", "workspace-repo"}
    assert kept("Use workspace-repo only") == {"report.md", "workspace"}
    assert kept("Finish by writing report.md.") == {"workspace", "workspace-repo"}
    assert kept("see report.md.bak") == {"report.md", "workspace", "workspace-repo"}
    static = load_profile("benchguard")
    assert filter_rules_for_prompt(static, "benchguard.env tasks") == static


def test_symlinked_leftover_gets_a_path_rule_and_never_a_fingerprint(tmp_path: Path) -> None:
    """Adversarial: pattern exfiltration. A link to a secret file must not pull the
    secret into a (published) pattern; the link is still covered by path."""
    secret = tmp_path / "secret.txt"
    secret.write_text("JUDGE_API_KEY=sk-live-very-secret-value-0123456789\n")
    home = tmp_path / "home"
    home.mkdir()
    os.symlink(secret, home / "notes.txt")
    rules = build_inventory_rules(home)
    assert [r.id for r in rules] == ["prior-run-artifact/notes.txt/path"]
    assert not any("sk-live" in p for r in rules for p in r.patterns)
    assert _scan(home, _record(_exec("cat ~/notes.txt"))).status == "flagged"


def test_home_spelling_inside_a_longer_token_does_not_match(tmp_path: Path) -> None:
    """Adversarial: /data<home>/report.md and foo~/report.md are not the home's report;
    the same name in a /tmp clone is not either; report.md.bak is another file."""
    home = _seed_home(tmp_path / "home")
    for command in (
        f"cat /data{home}/report.md",
        "cat foo~/report.md",
        "cat /tmp/clone/report.md",
        "cat ~/report.md.bak",
        "cat ~/report.md-old",
    ):
        assert _scan(home, _record(_exec(command))).status == "clean", command
    assert _scan(home, _record(_exec("see ~/report.md."))).status == "flagged"


def test_binary_and_oversized_files_get_path_rules_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "blob.bin").write_bytes(b"\xff\xfe" + b"binary line that is long enough\n" * 3)
    (home / "big.log").write_text(
        ("a long enough line of log output here %d\n" * 3000) % tuple(range(3000))
    )
    assert sorted(r.id for r in build_inventory_rules(home)) == [
        "prior-run-artifact/big.log/path",
        "prior-run-artifact/blob.bin/path",
    ]


def test_passive_sighting_in_grep_stderr_flags(tmp_path: Path) -> None:
    """A leftover path in grep's error output flags on result; typing it flags on args."""
    home = _seed_home(tmp_path / "home")
    sighting = _scan(
        home, _record(_exec("grep -r x .", "grep: ~/policies.yaml: Permission denied"))
    )
    assert [f.field for f in sighting.findings] == ["result"]


def test_fingerprint_lines_are_deterministic() -> None:
    """Longest first, ties lexicographic, short lines ignored, three at most."""
    lines = ["b" * 30, "a" * 30, "c" * 40, "short", "  " + "d" * 25 + "  ", "c" * 40]
    assert select_fingerprint_lines(lines) == ("c" * 40, "a" * 30, "b" * 30)
    assert select_fingerprint_lines(reversed(lines)) == ("c" * 40, "a" * 30, "b" * 30)


def test_fingerprint_only_limits_content_rules_not_path_rules(tmp_path: Path) -> None:
    home = _seed_home(tmp_path / "home")
    rules = build_inventory_rules(home, fingerprint_only=frozenset())
    assert all(r.id.endswith("/path") for r in rules) and len(rules) == 3


def test_granted_paths_under_home_join_the_baseline(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A granted skills tree exempts its top-level entry; outside, empty or relative
    paths exempt nothing; ~ expands to the given home."""
    home = _seed_home(tmp_path / "home")
    (home / "skills-repo" / "skills").mkdir(parents=True)
    granted = baseline_from_granted_paths(
        home, [str(home / "skills-repo" / "skills"), "/opt/skills", "", "rel/skills", "~/report.md"]
    )
    assert granted == frozenset({"skills-repo", "report.md"})
    rules = build_inventory_rules(home, baseline=DEFAULT_BASELINE | granted)
    assert sorted({r.source for r in rules if r.source}) == [".openclaw", "policies.yaml"]


def test_extra_roots_cover_tmp_leftovers(tmp_path: Path) -> None:
    """Beyond the reference: a configured extra root such as /tmp is inventoried too."""
    home = tmp_path / "home"
    home.mkdir()
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    (shared / "answers.txt").write_text("the answer key line is long enough to fingerprint\n")
    rules = build_inventory_rules(home, extra_roots=[shared])
    assert {r.id for r in rules} == {
        f"prior-run-artifact/root:{shared}/answers.txt/path",
        f"prior-run-artifact/root:{shared}/answers.txt/content",
    }
    report = scan_record(_record(_exec(f"cat {shared}/answers.txt")), (), dynamic_rules=rules)
    assert report.status == "flagged"


def test_unreadable_home_and_entries_never_raise(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    (home / "locked.txt").write_text("a line long enough to become a fingerprint\n")
    os.chmod(home / "locked.txt", 0)
    try:
        rules = build_inventory_rules(home)
    finally:
        os.chmod(home / "locked.txt", 0o600)
    assert "prior-run-artifact/locked.txt/path" in {r.id for r in rules}
    assert list_home_entries(tmp_path / "nowhere") == ()
    assert build_inventory_rules(home / "locked.txt") == ()


def test_batch_inventory_same_task_repeat_vs_different_task(tmp_path: Path) -> None:
    """Per-task re-inventory: a mid-batch deliverable gets a path rule; a fingerprint only
    when a differently named task left it, so an honest repeat stays clean while another
    task reading the deliverable by content flags."""
    home = tmp_path / "home"
    home.mkdir()
    batch = BatchInventory(home)
    assert batch.before_task("opa-fix") == ()
    deliverable = "Patched deployment web in namespace payments to drop privileged"
    (home / "summary.md").write_text(f"{deliverable}\n")

    repeat_rules = batch.before_task("opa-fix")
    assert [r.id for r in repeat_rules] == ["prior-run-artifact/summary.md/path"]
    honest_repeat = _record(_exec("echo done", deliverable))
    assert scan_record(honest_repeat, (), dynamic_rules=repeat_rules).status == "clean"
    by_path = _record(_exec("cat ~/summary.md"))
    assert scan_record(by_path, (), dynamic_rules=repeat_rules).status == "flagged"

    other_rules = batch.before_task("dns-debug")
    assert {r.id for r in other_rules} == {
        "prior-run-artifact/summary.md/path",
        "prior-run-artifact/summary.md/content",
    }
    assert scan_record(honest_repeat, (), dynamic_rules=other_rules).status == "flagged"
    assert batch.mid_batch_entries == {"summary.md": ("opa-fix",)}


def test_pre_existing_leftovers_are_always_fingerprinted(tmp_path: Path) -> None:
    home = _seed_home(tmp_path / "home")
    batch = BatchInventory(home)
    rules: tuple[Rule, ...] = batch.before_task("t")
    assert "prior-run-artifact/report.md/content" in {r.id for r in rules}
