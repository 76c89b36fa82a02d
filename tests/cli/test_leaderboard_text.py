"""The leaderboard's text view: one line per gated run (top reason, a count, identical
iterations folded), relative paths, lines of at most 200 characters off a terminal, a
legend; every reason under -v."""

from __future__ import annotations

import json
from pathlib import Path

from benchguard.cli._board_view import MAX_LINE, cut_line, iteration_label, relative_paths
from cli.helpers import CHEAT, exited, invoke, record, run_dir


def _board(tmp_path: Path) -> tuple[Path, Path]:
    """A scored run of one cheating task, three identical iterations and one different,
    whose reasons name absolute paths of the operator's tree, one of them very long."""
    operator = tmp_path / "srv" / "operator"
    records = [record("log-rotate", i, CHEAT) for i in (1, 2, 3)]
    records.append(record("opa", 1, CHEAT))
    results = run_dir(tmp_path / "results", "run_b", records, model="m")
    exited(invoke("score", str(results)), 1)
    rows_file = results.parent / "rows.json"
    rows = json.loads(rows_file.read_text(encoding="utf-8"))
    for row in rows:
        folder = row["taskFolder"]
        details = row["catastrophicDetails"]["IntegrityCatastrophic"]
        details.append(
            {"name": "material/content", "reason": f"protected material {operator}/tasks/"
             f"{folder}/task.yaml: its contents appeared in shell output at step 0"}
        )  # fmt: skip
        details.append({"name": "x/long", "reason": "word " * 80 + f"{operator}/docs/a/b.md"})
    rows_file.write_text(json.dumps(rows), encoding="utf-8")
    return rows_file, operator


def test_one_line_per_gated_run_folded_relative_and_short(tmp_path: Path) -> None:
    rows_file, operator = _board(tmp_path)
    result = invoke("leaderboard", str(rows_file), env={"COLUMNS": "80"})
    exited(result, 0)
    lines = result.stdout.splitlines()
    assert all(len(line) <= MAX_LINE for line in lines), max(lines, key=len)
    assert str(tmp_path) not in result.stdout and str(operator) not in result.stdout
    gated = [line for line in lines if line.startswith("m-scripted ")]
    assert len(gated) == 2, lines  # log-rotate#1-3 folded, opa#1
    assert "log-rotate#1-3" in gated[0] and "opa#1" in gated[1]
    assert all("(+2 more)" in line for line in gated), gated
    assert any(line.startswith("legend: IntegrityCatastrophic = ") for line in lines)
    assert "passive sighting" in result.stdout


def test_verbose_lists_every_distinct_reason_once(tmp_path: Path) -> None:
    rows_file, operator = _board(tmp_path)
    result = invoke("leaderboard", str(rows_file), "-v", env={"COLUMNS": "80"})
    exited(result, 0)
    assert result.stdout.count(f"  • protected material {operator}/tasks/log-rotate/") == 1
    lines = result.stdout.splitlines()
    assert sum(line.startswith("  • word word") for line in lines) == 2  # one per run line
    assert sum(line.startswith("  • task definition: read") for line in lines) == 2


def test_paths_are_shown_relative_to_the_tasks_directory_or_the_home() -> None:
    tasks = {"sum-numbers"}
    text = "material /srv/op/tasks/sum-numbers/task.yaml and /home/ana/x/y.md and /opt/a/b/c.md"
    assert relative_paths(text, tasks, "/home/ana") == (
        "material sum-numbers/task.yaml and ~/x/y.md and …/b/c.md"
    )
    assert relative_paths("cat a/b and ~/c", tasks, "/root") == "cat a/b and ~/c"


def test_iteration_labels_and_word_cuts() -> None:
    assert iteration_label([2, 1]) == "1-2"
    assert iteration_label([1, 2, 3, 5, 7, 8]) == "1-3,5,7-8"
    line = "alpha " * 50
    cut = cut_line(line, 40)
    assert len(cut) <= 40 and cut.endswith("alpha…")
    assert cut_line("short") == "short"
