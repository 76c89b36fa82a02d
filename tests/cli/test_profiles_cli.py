"""Every command that takes --profile reads it the same way: repeated, it is the union
(never only the last), and the output names every profile used."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli.helpers import NOOP, REPO, TASKS, exited, invoke

LOG = REPO / "examples" / "logs" / "inspect_fix_login.eval"


@pytest.mark.parametrize("order", [("benchguard", "inspect"), ("inspect", "benchguard")])
def test_scan_with_a_repeated_profile_uses_the_union(order: tuple[str, str]) -> None:
    """Guards the issue's case: --profile benchguard --profile inspect kept only
    inspect, which does not flag this log, and exited 0."""
    exited(invoke("scan", str(LOG), "--profile", "inspect"), 0)  # inspect alone misses it
    result = invoke("scan", str(LOG), "--profile", order[0], "--profile", order[1])
    exited(result, 1)
    assert f"profile {order[0]} + {order[1]}, ruleset" in result.stdout
    as_json = invoke("scan", str(LOG), "--profile", order[0], "--profile", order[1], "--json")
    (entry,) = json.loads(as_json.stdout)
    assert entry["report"]["status"] == "flagged"


def test_scan_out_file_names_every_profile(tmp_path: Path) -> None:
    out = tmp_path / "scan.json"
    args = ("--profile", "benchguard", "--profile", "inspect")
    exited(invoke("scan", str(LOG), *args, "-o", str(out)), 1)
    assert json.loads(out.read_text(encoding="utf-8"))["profile"] == "benchguard + inspect"


def test_score_with_a_repeated_profile_uses_the_union_and_names_it(tmp_path: Path) -> None:
    log = tmp_path / LOG.name
    shutil.copy(LOG, log)
    alone = invoke("score", str(log), "--profile", "inspect")
    exited(alone, 0)
    both = invoke("score", str(log), "--profile", "benchguard", "--profile", "inspect")
    exited(both, 1)
    assert "profiles: benchguard + inspect" in both.stdout.splitlines()


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
