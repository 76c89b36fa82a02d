"""`benchguard run --resume RUN_DIR` alone reads the command from the run directory;
the full command plus --resume still works; progress counts resumed runs as done."""

from __future__ import annotations

import json
from pathlib import Path

from benchguard.workflows.resume import COMMAND_FILE, runs_done
from cli.helpers import NOOP, exited, invoke, noop_run


def _interrupted(tmp_path: Path) -> Path:
    """A finished batch whose journal then lost one run: as if it stopped before it."""
    first = invoke(*noop_run(tmp_path / "home", tmp_path / "out"))
    run_dir = Path(first.stdout.strip().splitlines()[-1])
    assert (run_dir / COMMAND_FILE).is_file()
    (run_dir / "runs" / "000002.json").unlink()
    return run_dir


def test_resume_with_the_run_directory_alone(tmp_path: Path) -> None:
    run_dir = _interrupted(tmp_path)
    assert runs_done(run_dir) == 3
    stored = json.loads((run_dir / COMMAND_FILE).read_text(encoding="utf-8"))
    assert stored["agent"] == NOOP and Path(stored["tasks_dir"]).is_absolute()
    result = invoke("run", "--resume", str(run_dir))  # --quiet is not stored: progress shows
    exited(result, 0)
    assert result.stdout.strip().splitlines()[-1] == str(run_dir)
    assert (run_dir / "runs" / "000002.json").is_file()
    rows = json.loads((run_dir / "rows.json").read_text(encoding="utf-8"))
    assert len(rows) == 4
    # Progress started at the three runs already done, and counted the fourth.
    assert "4/4" in result.stderr and "5/4" not in result.stderr


def test_the_full_command_plus_resume_still_works(tmp_path: Path) -> None:
    run_dir = _interrupted(tmp_path)
    args = noop_run(tmp_path / "home", tmp_path / "out", "--resume", str(run_dir))
    exited(invoke(*args), 0)
    assert len(json.loads((run_dir / "rows.json").read_text(encoding="utf-8"))) == 4


def test_half_a_command_with_resume_is_refused(tmp_path: Path) -> None:
    run_dir = _interrupted(tmp_path)
    result = invoke("run", "--resume", str(run_dir), "--agent", NOOP)
    exited(result, 2)
    assert "give both TASKS_DIR and --agent" in result.stderr
    exited(invoke("run", "--agent", NOOP), 2)


def test_a_run_directory_without_its_command_says_what_to_do(tmp_path: Path) -> None:
    run_dir = _interrupted(tmp_path)
    (run_dir / COMMAND_FILE).unlink()
    result = invoke("run", "--resume", str(run_dir))
    exited(result, 2)
    assert "command.json is missing" in result.stderr and "give the original command" in (
        result.stderr
    )
