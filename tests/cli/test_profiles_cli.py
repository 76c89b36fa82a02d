"""Every command that takes --profile reads it the same way: repeated, it is the union
(never only the last), and the output names every profile used."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli.helpers import NOOP, REPO, TASKS, exited, invoke

LOG = REPO / "examples" / "logs" / "inspect_fix_login.eval"


# Rules only profile benchguard holds: the log reads the harness checkout's task file.
# Profile inspect alone still flags the read (detector v12's generic harness-checkout
# rule, in every profile), but only the union holds these.
BENCHGUARD_ONLY = {"task-definition/path", "harness-repo/path"}


def _rules(findings: list[dict[str, object]]) -> set[str]:
    return {str(finding["rule"]) for finding in findings}


def _scanned_rules(*profiles: str) -> set[str]:
    args = [arg for profile in profiles for arg in ("--profile", profile)]
    (entry,) = json.loads(invoke("scan", str(LOG), *args, "--json").stdout)
    return _rules(entry["report"]["findings"])


@pytest.mark.parametrize("order", [("benchguard", "inspect"), ("inspect", "benchguard")])
def test_scan_with_a_repeated_profile_uses_the_union(order: tuple[str, str]) -> None:
    """Guards the issue's case: --profile benchguard --profile inspect kept only
    inspect, whose rules miss what benchguard's name in this log."""
    assert not _scanned_rules("inspect") & BENCHGUARD_ONLY
    result = invoke("scan", str(LOG), "--profile", order[0], "--profile", order[1])
    exited(result, 1)
    assert f"profile {order[0]} + {order[1]}, ruleset" in result.stdout
    assert _scanned_rules(*order) >= BENCHGUARD_ONLY


def test_scan_out_file_names_every_profile(tmp_path: Path) -> None:
    out = tmp_path / "scan.json"
    args = ("--profile", "benchguard", "--profile", "inspect")
    exited(invoke("scan", str(LOG), *args, "-o", str(out)), 1)
    assert json.loads(out.read_text(encoding="utf-8"))["profile"] == "benchguard + inspect"


def _scored_rules(tmp_path: Path, *profiles: str) -> tuple[str, set[str]]:
    folder = tmp_path / "-".join(profiles)
    folder.mkdir()
    log = folder / LOG.name
    shutil.copy(LOG, log)
    args = [arg for profile in profiles for arg in ("--profile", profile)]
    result = invoke("score", str(log), *args)
    exited(result, 1)
    written = folder / f"{LOG.name}.benchguard" / "results.json"
    document = json.loads(written.read_text(encoding="utf-8"))
    records = document["records"] if isinstance(document, dict) else document
    return result.stdout, _rules(records[0]["cheating_report"]["findings"])


def test_score_with_a_repeated_profile_uses_the_union_and_names_it(tmp_path: Path) -> None:
    _, alone = _scored_rules(tmp_path, "inspect")
    assert not alone & BENCHGUARD_ONLY
    stdout, both = _scored_rules(tmp_path, "benchguard", "inspect")
    assert "profiles: benchguard + inspect" in stdout.splitlines()
    assert both >= BENCHGUARD_ONLY


def test_the_coverage_hint_is_satisfied_by_adding_the_profile(tmp_path: Path) -> None:
    """The hint says to add a profile; adding it (a union) silences the hint."""
    hinted = invoke("scan", str(LOG), "--profile", "benchguard")
    assert "add --profile inspect (repeated profiles are a union)" in hinted.stderr
    added = invoke("scan", str(LOG), "--profile", "benchguard", "--profile", "inspect")
    assert "add --profile" not in added.stderr


def test_inventory_takes_the_union_of_baselines(tmp_path: Path) -> None:
    home = tmp_path / "home"
    home.mkdir()
    result = invoke("inventory", str(home), "--profile", "benchguard", "--profile", "swe-bench")
    exited(result, 0)
    assert "profile benchguard + swe-bench;" in result.stdout


def test_run_refuses_several_profiles_naming_them(tmp_path: Path) -> None:
    result = invoke(
        "run", str(TASKS), "--agent", NOOP, "--home", str(tmp_path / "h"),
        "--out", str(tmp_path / "out"), "--profile", "benchguard", "--profile", "inspect",
    )  # fmt: skip
    exited(result, 2)
    assert "--profile given 2 times (benchguard, inspect)" in result.stderr
    assert not (tmp_path / "out").exists()


def test_every_profile_option_has_the_same_help() -> None:
    helps = {c: invoke(c, "-h").stdout for c in ("scan", "score", "run", "inventory")}
    for text in helps.values():
        assert "--profile NAME|PATH" in text and "union" in text
