"""The lazy command line: ``main`` registers only the family of the command named, so
the table it goes by must say exactly what the families register, and a command run
through a one-family app must behave as through the whole one."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
import typer
from typer.main import get_command

from benchguard.cli import _FAMILY_ORDER, COMMAND_FAMILIES, build_app, families_for

SRC = Path(__file__).resolve().parents[2] / "src"


def _names(app: typer.Typer) -> list[str]:
    return list(get_command(app).commands)  # type: ignore[attr-defined]


@pytest.mark.parametrize("family", _FAMILY_ORDER)
def test_each_family_registers_what_the_table_says(family: str) -> None:
    registered = set(_names(build_app((family,)))) - {"version"}
    assert registered == {name for name, owner in COMMAND_FAMILIES.items() if owner == family}


def test_the_whole_app_lists_every_command_in_table_order() -> None:
    names = _names(build_app())
    assert [n for n in names if n != "version"] == [
        n for n in COMMAND_FAMILIES if n != "redaction"
    ] + ["redaction"]


def test_argv_picks_the_family() -> None:
    assert families_for(["scan", "x.json"]) == ("scan_cmds",)
    assert families_for(["score", "dir"]) == ("results_cmds",)
    assert families_for(["--version"]) == ()
    assert families_for(["version"]) == ()
    # No command, a help request or an unknown word: everything, so Click lists all
    # commands or suggests the closest one as before.
    for argv in ([], ["--help"], ["-h"], ["--version", "--help"], ["scna"]):
        assert families_for(argv) == _FAMILY_ORDER


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(SRC), "COLUMNS": "200", "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "benchguard", *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_the_entry_point_behaves_as_the_whole_app() -> None:
    version = _cli("--version")
    assert version.returncode == 0 and version.stdout.startswith("benchguard ")
    typo = _cli("scna")
    assert typo.returncode == 2 and "Did you mean 'scan'?" in typo.stderr
    assert _cli("scan", "--help").returncode == 0
    listing = _cli("--help").stdout
    assert all(name in listing for name in COMMAND_FAMILIES)


def test_version_imports_no_family() -> None:
    probe = (
        "import sys; sys.argv = ['benchguard', '--version']\n"
        "from benchguard.cli import main\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print(sorted(m for m in sys.modules if m.startswith('benchguard.cli.')))"
    )
    env = {**os.environ, "PYTHONPATH": str(SRC)}
    out = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    ).stdout
    assert "_cmds" not in out.splitlines()[-1]
