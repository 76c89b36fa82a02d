"""Output and home paths that cannot be directories or files are bad input (exit 2).

``run`` checks --home and --out before any agent starts; -o/--out/--html outputs
create missing parent directories (as their --help says) and refuse a path that is a
directory. None of these may end in a traceback.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli.helpers import NOOP, TASKS, exited, invoke, one_line


@pytest.fixture
def a_file(tmp_path: Path) -> Path:
    path = tmp_path / "a-regular-file"
    path.write_text("not a directory\n", encoding="utf-8")
    return path


# ---- run --home / --out ----------------------------------------------------------------


def test_run_home_that_is_a_regular_file_exits_2_before_any_agent(
    tmp_path: Path, a_file: Path
) -> None:
    """Guards against `run --home FILE` crashing with a FileExistsError traceback, and
    against it being found only after agents have run (no run directory is made)."""
    out = tmp_path / "out"
    result = invoke("run", str(TASKS), "--agent", NOOP, "--home", str(a_file), "--out", str(out))
    exited(result, 2)
    assert f"--home {a_file}: exists and is not a directory" in one_line(result.output)
    assert not out.exists()


def test_run_home_from_the_environment_is_named_as_such(tmp_path: Path, a_file: Path) -> None:
    """Guards against an error blaming --home when the operator never passed it."""
    result = invoke(
        "run", str(TASKS), "--agent", NOOP, "--out", str(tmp_path / "out"),
        env={"BENCHGUARD_AGENT_HOME": str(a_file)},
    )  # fmt: skip
    exited(result, 2)
    assert f"BENCHGUARD_AGENT_HOME {a_file}: exists and is not a directory" in one_line(
        result.output
    )


def test_run_out_that_is_a_regular_file_exits_2_before_any_agent(
    tmp_path: Path, a_file: Path
) -> None:
    """Guards against `run --out FILE` crashing with a FileExistsError traceback when the
    runner makes its run directory."""
    home = tmp_path / "agent-home"
    result = invoke("run", str(TASKS), "--agent", NOOP, "--home", str(home), "--out", str(a_file))
    exited(result, 2)
    assert f"--out {a_file}: exists and is not a directory" in one_line(result.output)
    assert a_file.read_text(encoding="utf-8") == "not a directory\n"


@pytest.mark.parametrize("flag", ["--home", "--out"])
def test_run_directory_under_a_regular_file_cannot_be_created(
    tmp_path: Path, a_file: Path, flag: str
) -> None:
    """Guards against an OSError traceback when a directory's parent is a regular file."""
    other = "--out" if flag == "--home" else "--home"
    below = a_file / "sub"
    result = invoke(
        "run", str(TASKS), "--agent", NOOP, flag, str(below), other, str(tmp_path / "ok"),
    )  # fmt: skip
    exited(result, 2)
    assert f"{flag} {below}: cannot create the directory" in one_line(result.output)


@pytest.mark.slow
def test_run_creates_missing_out_and_home_with_parents(tmp_path: Path) -> None:
    """Guards against the up-front check refusing a path that merely does not exist yet."""
    tasks = tmp_path / "tasks"
    shutil.copytree(TASKS / "word-count", tasks / "word-count")
    out = tmp_path / "deep" / "out"
    home = tmp_path / "deep" / "agent-home"
    result = invoke(
        "run", str(tasks), "--agent", NOOP, "--home", str(home), "--out", str(out), "--quiet"
    )
    exited(result, 0)
    assert home.is_dir()
    assert Path(result.stdout.strip().splitlines()[-1]).parent == out


# ---- -o / --html outputs ---------------------------------------------------------------


def _rows(tmp_path: Path) -> Path:
    """A rows.json written by `score` from a one-record results.json."""
    run = tmp_path / "run"
    run.mkdir()
    record = {"name": "t", "folder": "t", "iteration": 0, "status": "success",
              "validated": True, "trajectory": [], "scores": {}, "cheating_report": {}}  # fmt: skip
    (run / "results.json").write_text(json.dumps([record]), encoding="utf-8")
    exited(invoke("score", str(run / "results.json")), 0)
    return run / "rows.json"


def test_leaderboard_html_creates_missing_parents(tmp_path: Path) -> None:
    """Guards the documented behaviour: --html makes its missing parent directories."""
    target = tmp_path / "new" / "dir" / "board.html"
    result = invoke("leaderboard", str(_rows(tmp_path)), "--html", str(target))
    exited(result, 0)
    assert "<html" in target.read_text(encoding="utf-8").lower()
    assert "missing parent directories are created" in " ".join(
        invoke("leaderboard", "--help").output.split()
    )


def test_leaderboard_html_onto_a_directory_or_under_a_file_exits_2(
    tmp_path: Path, a_file: Path
) -> None:
    """Guards against a traceback when the HTML target cannot be a file."""
    rows = str(_rows(tmp_path))
    on_dir = invoke("leaderboard", rows, "--html", str(tmp_path))
    exited(on_dir, 2)
    assert f"{tmp_path}: cannot write" in one_line(on_dir.output)
    under_file = invoke("leaderboard", rows, "--html", str(a_file / "x.html"))
    exited(under_file, 2)
    assert f"{a_file / 'x.html'}: cannot write" in one_line(under_file.output)


def test_scan_out_creates_missing_parents_and_refuses_a_directory(tmp_path: Path) -> None:
    """Guards against scan -o failing on a missing parent (every other output creates
    its parents) and against a traceback when -o names a directory."""
    log = tmp_path / "results.json"
    log.write_text("[]", encoding="utf-8")
    target = tmp_path / "new" / "dir" / "scan.json"
    created = invoke("scan", str(log), "-o", str(target))
    # A log without records is an input gap: exit 3, never 0.
    assert created.exit_code == 3, created.output
    written = json.loads(target.read_text(encoding="utf-8"))
    assert written["profile"] == "auto"
    assert written["profiles"][str(log)][0]["profile"] == "benchguard"
    on_dir = invoke("scan", str(log), "-o", str(tmp_path))
    exited(on_dir, 2)
    assert f"{tmp_path}: cannot write" in one_line(on_dir.output)
