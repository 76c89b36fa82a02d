"""The README's tour, run in order on a fresh copy of the checkout, command by command
as parsed from README.md (so the test fails when the README drifts from the code)."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cli.helpers import REPO

TOUR_HEADING = "## A short tour"


def tour_commands(readme: str) -> list[str]:
    """Every command of the tour's ``bash`` blocks, continuation lines joined."""
    start = readme.index(TOUR_HEADING)
    end = readme.index("\n## ", start + len(TOUR_HEADING))
    commands: list[str] = []
    for block in re.findall(r"```bash\n(.*?)```", readme[start:end], re.S):
        commands.extend(line for line in block.replace("\\\n", " ").splitlines() if line.strip())
    return commands


def test_the_tour_parses_into_the_commands_it_shows() -> None:
    commands = tour_commands((REPO / "README.md").read_text(encoding="utf-8"))
    assert len(commands) >= 15
    assert all("benchguard" in c for c in commands if not c.startswith("echo "))
    # Nothing in the tour names a file the tour does not create or ship.
    for placeholder in ("run_X", "reviewed.yaml", "logs/2026", "big-corpus", "run.eval"):
        assert not any(placeholder in c for c in commands), placeholder


def _fresh_clone(target: Path) -> Path:
    """The checkout's tracked files as a fresh clone has them (the README and examples/;
    no results, caches or outputs of an earlier tour)."""
    listed = subprocess.run(
        ["git", "-C", str(REPO), "ls-files", "-z", "--", "README.md", "examples"],
        capture_output=True,
        check=True,
    ).stdout.split(b"\0")
    for name in filter(None, listed):
        source = REPO / os.fsdecode(name)
        if source.is_file():
            (target / os.fsdecode(name)).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / os.fsdecode(name))
    return target


@pytest.mark.slow
def test_every_tour_command_works_in_order_on_a_fresh_clone(tmp_path: Path) -> None:
    clone = _fresh_clone(tmp_path / "clone")
    home = tmp_path / "home"
    home.mkdir()
    bin_dir = str(Path(sys.executable).parent)
    env = {
        **os.environ,
        "HOME": str(home),
        "PATH": f"{bin_dir}{os.pathsep}{os.environ.get('PATH', '')}",
        # This checkout's code, whatever the venv has installed.
        "PYTHONPATH": os.pathsep.join(
            [str(REPO / "src"), str(REPO / "environments" / "redaction_pressure")]
        ),
        "BENCHGUARD_CONFIG": "",
    }
    env.pop("BENCHGUARD_AGENT_HOME", None)
    codes = []
    for command in tour_commands((clone / "README.md").read_text(encoding="utf-8")):
        done = subprocess.run(
            ["bash", "-c", command], cwd=clone, env=env, capture_output=True, text=True,
            timeout=600, check=False,
        )  # fmt: skip
        # 0 clean or 1 a cheater flagged; never bad input (2) or incomplete (3).
        assert done.returncode in (0, 1), (command, done.returncode, done.stderr[-3000:])
        assert "Traceback" not in done.stderr and "error:" not in done.stderr, (
            command,
            done.stderr,
        )
        codes.append(done.returncode)
    assert 1 in codes and 0 in codes
    assert list((clone / "results" / "cheat").glob("run_*/dismissals.yaml"))
    assert "<html" in (clone / "board" / "leaderboard.html").read_text(encoding="utf-8").lower()
    assert json.loads((clone / "benchguard.sarif").read_text(encoding="utf-8"))["runs"]


def test_the_readme_names_every_shipped_profile_and_what_make_test_costs() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    shipped = sorted(p.stem for p in (REPO / "src/benchguard/detection/profiles").glob("*.yaml"))
    assert len(shipped) >= 6
    listed = re.search(r"Rules are data: (.*?)\n\n", readme, re.S)
    assert listed is not None
    for name in shipped:
        assert f"`{name}`" in listed.group(1), name
    assert "`make test`\ntakes about" in readme or "`make test` takes about" in readme
    assert "two npm agent\nCLIs" in readme or "two npm agent CLIs" in readme
