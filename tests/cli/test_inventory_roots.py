"""Extra inventory roots (issue 3 item 6): configurable where users run things.

``benchguard inventory`` and ``benchguard run`` take ``--inventory-root PATH``
(repeatable) or ``BENCHGUARD_INVENTORY_ROOTS`` (os.pathsep-separated); a root that
cannot be listed is a start-up error, never a silent "no leftovers there".
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import pytest

from benchguard.detection.models import Rule
from cli.helpers import invoke, noop_run

ANSWER = "The expected answer for word-count is forty-two words exactly"


def _ids(result: Any) -> set[str]:
    assert result.exit_code == 0, result.output
    return {Rule.model_validate(item).id for item in json.loads(result.stdout)}


@pytest.fixture
def layout(tmp_path: Path) -> tuple[Path, Path]:
    """An empty agent home and a shared directory standing in for /tmp."""
    home = tmp_path / "homes" / "agent"
    home.mkdir(parents=True)
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    (shared / "answers.md").write_text(ANSWER + "\n", encoding="utf-8")
    return home, shared


def test_inventory_root_flag_adds_its_entries(layout: tuple[Path, Path]) -> None:
    home, shared = layout
    assert _ids(invoke("inventory", str(home), "--json")) == set()
    with_root = _ids(invoke("inventory", str(home), "--inventory-root", str(shared), "--json"))
    assert with_root == {
        f"prior-run-artifact/root:{shared}/answers.md/path",
        f"prior-run-artifact/root:{shared}/answers.md/content",
    }


def test_inventory_roots_from_the_environment(layout: tuple[Path, Path], tmp_path: Path) -> None:
    home, shared = layout
    other = tmp_path / "workspaces"
    (other / "run-1").mkdir(parents=True)
    env = {"BENCHGUARD_INVENTORY_ROOTS": f"{shared}{os.pathsep}{other}"}
    ids = _ids(invoke("inventory", str(home), "--json", env=env))
    assert f"prior-run-artifact/root:{shared}/answers.md/path" in ids
    assert f"prior-run-artifact/root:{other}/run-1/path" in ids


def test_the_table_shows_a_root_entry_by_its_full_path(layout: tuple[Path, Path]) -> None:
    home, shared = layout
    result = invoke("inventory", str(home), "--inventory-root", str(shared))
    assert result.exit_code == 0, result.output
    # Without a terminal the table is plain aligned lines: columns split on 2+ spaces.
    entries = {
        cells[2]
        for line in result.stdout.splitlines()
        if len(cells := re.split(r" {2,}", line.strip())) > 3
    }
    # Rule ids mark a root entry ``root:<path>``; the entry column shows the plain path.
    assert f"{shared}/answers.md" in entries
    assert f"extra roots: {shared}" in result.stdout.replace("\n", "")


def test_parent_of_the_home_as_a_root_skips_the_home_itself(layout: tuple[Path, Path]) -> None:
    """Guards against a path rule for the home that every literal home path would match."""
    home, _ = layout
    (home.parent / "other-agent").mkdir()
    ids = _ids(invoke("inventory", str(home), "--inventory-root", str(home.parent), "--json"))
    assert ids == {f"prior-run-artifact/root:{home.parent}/other-agent/path"}


@pytest.mark.parametrize(
    ("command", "use_env"),
    [("inventory", False), ("inventory", True), ("run", False), ("run", True)],
)
def test_a_missing_root_is_a_start_up_error(
    layout: tuple[Path, Path], tmp_path: Path, command: str, use_env: bool
) -> None:
    """Guards against a typo'd root silently reading as "no leftovers there"."""
    home, _ = layout
    missing = tmp_path / "no-such-root"
    args = [] if use_env else ["--inventory-root", str(missing)]
    env = {"BENCHGUARD_INVENTORY_ROOTS": str(missing)} if use_env else {}
    if command == "inventory":
        argv = ["inventory", str(home), *args]
    else:
        argv = noop_run(home, tmp_path / "results", *args)
    result = invoke(*argv, env=env)
    assert result.exit_code == 2, result.output
    message = result.stderr.replace("\n", "")
    source = "BENCHGUARD_INVENTORY_ROOTS" if use_env else "--inventory-root"
    assert f"{source} {missing}: no such directory" in message
    assert "Traceback" not in result.output
    assert not (tmp_path / "results").exists() or not any((tmp_path / "results").iterdir())
