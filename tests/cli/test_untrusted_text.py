"""Untrusted text reaching the terminal prints as itself, never as Rich markup or emoji.

File names, record fields, setup ids, home entries and rule ids come from files the
operator does not control. Rich reads ``[/x]`` as a closing tag (an unmatched one
crashes with a traceback), swallows ``[bold]`` as a style, and turns ``:thumbs_up:``
into an emoji. Every table and error path must show such text literally.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from rich.console import Console

from benchguard.results.io import read_rows
from benchguard.results.leaderboard import build_leaderboard, render_table
from cli.helpers import NOOP, TASKS, exited, invoke, one_line, record, run_dir

CLOSING = "a[/x]"
OPENING = "b[bold]"
EMOJI = "c:thumbs_up:"
HOSTILE = (CLOSING, OPENING, EMOJI)
# A file or directory name cannot hold "/", so a closing tag reaches a path through a
# directory named "a[" holding "x]"; single names use opening tags and emoji codes.
NAMES = (OPENING, "y[red on blue]", EMOJI)


def _run_dir(parent: Path, name: str, model: str, folders: tuple[str, ...]) -> Path:
    return run_dir(parent, name, [record(folder) for folder in folders], model=model)


@pytest.fixture
def hostile_rows(tmp_path: Path) -> Path:
    """A scored run whose setup id and task folders are all markup-looking text."""
    results = _run_dir(tmp_path / "results", "run", f"m{CLOSING}{OPENING}", HOSTILE)
    exited(invoke("score", str(results)), 1)  # every record reads its task file
    return results.parent / "rows.json"


# ---- leaderboard -----------------------------------------------------------------------


def test_leaderboard_shows_markup_like_setup_ids_and_folders_literally(hostile_rows: Path) -> None:
    """Guards against a rows file whose setupId or folder holds "[/x]" crashing the
    leaderboard with a MarkupError traceback (it passed score, then broke publication)."""
    result = invoke("leaderboard", str(hostile_rows))
    exited(result, 0)
    assert f"m{CLOSING}{OPENING}-scripted" in result.stdout
    for folder in HOSTILE:
        assert f"{folder}#0" in result.stdout
    assert "👍" not in result.stdout


def test_render_table_is_literal_on_a_markup_enabled_console(hostile_rows: Path) -> None:
    """Guards against the library renderer relying on the CLI's console settings: the
    table must be safe on any console, including Rich's markup-and-emoji default."""
    board = build_leaderboard(read_rows(hostile_rows))
    console = Console(width=400, record=True, color_system=None)
    with console.capture() as capture:
        console.print(render_table(board))
    shown = capture.get()
    assert f"m{CLOSING}{OPENING}-scripted" in shown
    assert all(f"{folder}#0" in shown for folder in HOSTILE)


def test_leaderboard_error_names_a_markup_like_path_literally(tmp_path: Path) -> None:
    """Guards against the error path itself crashing while naming a bad file."""
    bad = tmp_path / f"rows{CLOSING}.json"
    bad.parent.mkdir()
    bad.write_text("{not json", encoding="utf-8")
    result = invoke("leaderboard", str(bad))
    exited(result, 2)
    assert f"rows{CLOSING}.json" in one_line(result.output)


# ---- scan ------------------------------------------------------------------------------


def test_scan_table_shows_markup_like_paths_and_record_names_literally(tmp_path: Path) -> None:
    """Guards against a file name or record name in the scan table being parsed as markup."""
    results = _run_dir(tmp_path / f"d{OPENING}", f"r{CLOSING}", "m", HOSTILE)
    result = invoke("scan", str(results))
    exited(result, 1)
    assert str(results) in result.stdout
    for name in HOSTILE:
        assert name in result.stdout
    assert "👍" not in result.stdout


def test_scan_missing_path_error_is_literal_and_prints_no_table(tmp_path: Path) -> None:
    """Guards against `scan 'x[/b].jsonl'` crashing while printing its own error, and
    against an empty results table after the only input was bad."""
    missing = tmp_path / f"x{CLOSING}{OPENING}.jsonl"
    result = invoke("scan", str(missing))
    exited(result, 2)
    assert f"{missing}: no such file or directory" in one_line(result.output)
    assert "benchguard scan" not in result.output
    assert "record(s)" not in result.output


def test_scan_unreadable_file_error_is_literal(tmp_path: Path) -> None:
    """Guards against a named file's read error (which quotes its path) crashing Rich."""
    bad = tmp_path / f"bad{CLOSING}.json"
    bad.parent.mkdir()
    bad.write_text("{not json", encoding="utf-8")
    result = invoke("scan", str(bad))
    exited(result, 2)
    assert f"bad{CLOSING}.json" in one_line(result.output)


def test_scan_bad_profile_path_is_literal_and_profiles_are_listed_once(tmp_path: Path) -> None:
    """Guards against a profile path with markup crashing the error, and against the
    built-in profile list being printed twice."""
    missing = tmp_path / f"p{CLOSING}.yaml"
    result = invoke("scan", "--profile", str(missing), str(tmp_path))
    exited(result, 2)
    assert f"p{CLOSING}.yaml" in one_line(result.output)
    unknown = invoke("scan", "--profile", f"n{OPENING}", str(tmp_path))
    exited(unknown, 2)
    assert f"n{OPENING}" in unknown.output
    assert one_line(unknown.output).count("swe-bench") == 1


# ---- inventory -------------------------------------------------------------------------


def test_inventory_shows_markup_like_entries_literally(tmp_path: Path) -> None:
    """Guards against a home entry named "z[bold]" showing as "z" (markup eaten), or
    one named "a[/x]" crashing the table."""
    home = tmp_path / f"home{CLOSING}"
    home.mkdir(parents=True)
    for name in NAMES:
        (home / name).write_text("left over\n", encoding="utf-8")
    result = invoke("inventory", str(home))
    exited(result, 0)
    assert f"Inventory of {home}" in result.stdout
    for name in NAMES:
        assert f"prior-run-artifact/{name}/path" in result.stdout
    assert "👍" not in result.stdout


def test_inventory_missing_home_error_is_literal(tmp_path: Path) -> None:
    """Guards against the missing-home error crashing on its own path."""
    missing = tmp_path / f"h{CLOSING}"
    result = invoke("inventory", str(missing))
    exited(result, 2)
    assert f"{missing}: no such directory" in one_line(result.output)


# ---- score / aggregate / dismiss -------------------------------------------------------


def test_score_summary_and_errors_show_markup_like_paths_literally(tmp_path: Path) -> None:
    """Guards against the per-file summary labels, the "wrote" lines and a bad file's
    error being parsed as markup when paths hold "[/x]" or "[bold]"."""
    first = _run_dir(tmp_path / CLOSING, "run", "m", ("t",))
    second = _run_dir(tmp_path / OPENING, "run", "m", ("t",))
    bad = tmp_path / f"bad{CLOSING}" / "results.json"
    bad.parent.mkdir(parents=True)
    bad.write_text("{not json", encoding="utf-8")
    result = invoke("score", str(first), str(second), str(bad))
    exited(result, 2)
    shown = one_line(result.output)
    for path in (first, second):
        assert str(path) in shown
        assert f"wrote {path}" in shown
    assert str(bad) in shown


def test_aggregate_errors_show_markup_like_paths_literally(tmp_path: Path) -> None:
    """Guards against aggregate's not-a-directory and unreadable-file errors crashing."""
    missing = tmp_path / f"r{CLOSING}"
    result = invoke("aggregate", str(missing))
    exited(result, 2)
    assert f"{missing}: not a directory" in one_line(result.output)

    root = tmp_path / f"root{OPENING}"
    (root / "t").mkdir(parents=True)
    (root / "t" / "rows.json").write_text("{not json", encoding="utf-8")
    unreadable = invoke("aggregate", str(root))
    exited(unreadable, 2)
    assert str(root / "t" / "rows.json") in one_line(unreadable.output)


def test_dismiss_error_names_a_markup_like_rule_literally(hostile_rows: Path) -> None:
    """Guards against a rule id or task name given on the command line being parsed as
    markup in the refusal message."""
    results = hostile_rows.parent / "results.json"
    result = invoke(
        "dismiss", str(results), "--task", CLOSING, "--iteration", "0",
        "--rule", f"r{OPENING}", "--reviewer", "rev", "--reason", "fine",
    )  # fmt: skip
    exited(result, 2)
    shown = one_line(result.output)
    assert f"rule 'r{OPENING}'" in shown
    assert f"task '{CLOSING}'" in shown


# ---- run -------------------------------------------------------------------------------


@pytest.mark.slow
def test_run_summary_and_progress_show_markup_like_task_folders_literally(
    tmp_path: Path,
) -> None:
    """Guards against a task folder like "w[/x]" crashing the progress bar or the run
    summary (both print task folders) after the agents have already run, or "[bold]"
    vanishing from them. Progress is left on, so its description is rendered too."""
    tasks = tmp_path / "tasks"
    for folder in NAMES:
        shutil.copytree(TASKS / "word-count", tasks / folder)
    result = invoke(
        "run", str(tasks), "--agent", NOOP,
        "--out", str(tmp_path / "out"), "--home", str(tmp_path / "agent-home"),
    )  # fmt: skip
    exited(result, 0)
    for folder in NAMES:
        assert f"{folder}#1:" in result.output
    assert "👍" not in result.output
