"""`benchguard inventory HOME`: the prior-run rules a home would generate."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from benchguard.detection.models import Rule
from benchguard.harness.integrity import HomeSnapshots
from cli.helpers import invoke

REPORT_LINES = [
    "## Findings for the log-rotation task, iteration three",
    "The rotation keeps fourteen compressed generations of syslog",
    "Verification passed: logrotate -d reports no errors at all",
    "short line",
]


def _rules(*args: str) -> list[Rule]:
    result = invoke("inventory", *args, "--json")
    assert result.exit_code == 0, result.output
    return [Rule.model_validate(item) for item in json.loads(result.stdout)]


@pytest.fixture
def home(tmp_path: Path) -> Path:
    """A home with a previous run's leftovers beside ordinary environment state."""
    home = tmp_path / "home" / "agent"
    home.mkdir(parents=True)
    (home / "report.md").write_text("\n".join(REPORT_LINES) + "\n", encoding="utf-8")
    (home / ".claude-workspace").mkdir()  # a stale agent-CLI dotdir is a leftover
    # Environment and harness entries, with long lines that would make fingerprints.
    (home / ".bashrc").write_text("export PATH=$HOME/bin:$PATH  # a long enough line\n" * 3)
    (home / ".config").mkdir()
    (home / "benchguard").mkdir()  # the default profile's own checkout
    (home / "benchguard.env").write_text("BENCHGUARD_SECRET_SETTING=a-long-enough-value-here\n")
    return home


def test_leftovers_get_path_rules_and_small_files_get_fingerprints(home: Path) -> None:
    rules = {rule.id: rule for rule in _rules(str(home))}
    assert sorted(rules) == [
        "prior-run-artifact/.claude-workspace/path",
        "prior-run-artifact/report.md/content",
        "prior-run-artifact/report.md/path",
    ]
    path_rule = rules["prior-run-artifact/report.md/path"]
    assert path_rule.source == "report.md"
    (pattern,) = path_rule.patterns
    assert re.search(pattern, "cat ~/report.md") and re.search(pattern, f"cat {home}/report.md")
    assert not re.search(pattern, "cat ~/report.md.bak")
    fingerprint = rules["prior-run-artifact/report.md/content"]
    assert fingerprint.fields == ("result", "output") and fingerprint.source is None
    assert [p.replace("\\", "") for p in fingerprint.patterns] == [
        REPORT_LINES[1],
        REPORT_LINES[2],
        REPORT_LINES[0],
    ]


def test_baseline_dotfiles_and_profile_entries_generate_nothing(home: Path) -> None:
    """Guards against flagging a run for reading its own shell setup or the harness
    files the profile owns: those are the environment, not leftovers."""
    sources = {rule.id.split("/")[1] for rule in _rules(str(home))}
    assert sources.isdisjoint({".bashrc", ".config", "benchguard", "benchguard.env"})


def test_another_profile_uses_its_own_baseline(home: Path) -> None:
    """Guards against the baseline being fixed to the default profile: under
    devops-bench, this project's checkout is an ordinary leftover."""
    (home / "devops-bench").mkdir()
    ids = {rule.id for rule in _rules(str(home), "--profile", "devops-bench")}
    assert "prior-run-artifact/benchguard/path" in ids
    assert "prior-run-artifact/devops-bench/path" not in ids


def test_a_symlinked_leftover_gets_a_path_rule_but_no_fingerprint(
    home: Path, tmp_path: Path
) -> None:
    """Guards against a link pulling an arbitrary file's content into published
    patterns: a symlink is a leftover by name only."""
    secret = tmp_path / "outside.txt"
    secret.write_text("a private line that must never become a published pattern\n" * 2)
    (home / "notes.md").symlink_to(secret)
    ids = {rule.id for rule in _rules(str(home))}
    assert "prior-run-artifact/notes.md/path" in ids
    assert "prior-run-artifact/notes.md/content" not in ids


def test_granted_paths_exempt_their_top_level_entry(home: Path) -> None:
    (home / "skills-repo" / "lint").mkdir(parents=True)
    assert "prior-run-artifact/skills-repo/path" in {r.id for r in _rules(str(home))}
    granted = _rules(str(home), "--granted", "~/skills-repo/lint")
    assert "prior-run-artifact/skills-repo/path" not in {r.id for r in granted}
    absolute = _rules(str(home), "--granted", str(home / "skills-repo"))
    assert "prior-run-artifact/skills-repo/path" not in {r.id for r in absolute}


def test_the_command_shows_what_the_harness_would_generate(home: Path) -> None:
    """Guards against the preview and the harness drifting apart (a different baseline,
    a different home spelling): the rules equal the harness's first pre-task snapshot."""
    (home / "skills-repo").mkdir()
    snapshots = HomeSnapshots(home, [home / "skills-repo"], enabled=True, profile="benchguard")
    snapshots.before_batch()
    expected = list(snapshots.start_task("log-rotate"))
    assert expected  # the comparison must not be between two empty lists
    assert _rules(str(home), "--granted", str(home / "skills-repo")) == expected


def test_the_table_names_each_rule_kind_and_entry(home: Path) -> None:
    result = invoke("inventory", str(home))
    assert result.exit_code == 0, result.output
    lines = [line for line in result.stdout.splitlines() if "prior-run-artifact/" in line]
    # Without a terminal the table is plain aligned lines: columns split on 2+ spaces.
    cells = [re.split(r" {2,}", line.strip())[0:3] for line in lines]
    assert cells == [
        ["prior-run-artifact/.claude-workspace/path", "path", ".claude-workspace"],
        ["prior-run-artifact/report.md/path", "path", "report.md"],
        ["prior-run-artifact/report.md/content", "content", "report.md"],
    ]
    assert "2 leftover(s), 1 content fingerprint(s)" in result.stdout
    assert "exempt: .bashrc, .config, benchguard, benchguard.env" in result.stdout
    assert "entries fingerprinted inside: ~/.config" in result.stdout


def test_an_empty_home_has_no_rules(tmp_path: Path) -> None:
    assert _rules(str(tmp_path)) == []


@pytest.mark.parametrize(
    ("make", "message"),
    [
        (lambda p: p / "missing", "no such directory"),
        (lambda p: p / "home" / "agent" / "report.md", "not a directory"),
    ],
)
def test_a_missing_or_non_directory_home_exits_2(home: Path, make: Any, message: str) -> None:
    """Guards against an empty rule list (which reads as "no leftovers") for a home
    that could not be inventoried at all."""
    target = make(home.parent.parent)
    result = invoke("inventory", str(target), "--json")
    assert result.exit_code == 2
    assert f"{target}: {message}" in result.stderr and result.stdout == ""


@pytest.mark.parametrize("where", ["home", "--inventory-root"])
def test_an_unlistable_home_or_root_exits_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    """Guards against an unlistable home or extra root silently reading as a clean one.

    Listing is refused through ``os.scandir`` (a real permission bit would not stop
    root, and the suite also runs as root), so the "cannot list" path runs for any user.
    """
    home = tmp_path / "home"
    locked = tmp_path / "locked"
    home.mkdir()
    locked.mkdir()
    real_scandir = os.scandir

    def scandir(path: Any = ".") -> Any:
        if os.fspath(path) == str(locked):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    args = [str(locked)] if where == "home" else [str(home), "--inventory-root", str(locked)]
    result = invoke("inventory", *args, "--json")
    assert result.exit_code == 2, result.output
    prefix = f"{locked}" if where == "home" else f"--inventory-root {locked}"
    assert f"{prefix}: cannot list (Permission denied)" in result.stderr.replace("\n", "")
    assert result.stdout == "" and "Traceback" not in result.output


def test_an_unknown_profile_exits_2_listing_the_profiles(home: Path) -> None:
    result = invoke("inventory", str(home), "--profile", "no-such-profile")
    assert result.exit_code == 2
    assert "no-such-profile" in result.stderr and "devops-bench" in result.stderr
    assert "Traceback" not in result.output
