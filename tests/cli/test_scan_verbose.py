"""scan -v and JUnit: one line per distinct finding; excerpts readable; dismissed
findings counted in the total line and listed under -v."""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

import yaml

from benchguard.cli._findings_view import excerpt_text
from cli.helpers import CHEAT, REPO, exited, invoke, record, run_dir

LOG = REPO / "examples" / "logs" / "inspect_fix_login.eval"


def test_junit_lists_each_distinct_finding_once() -> None:
    result = invoke("scan", str(LOG), "--format", "junit")
    exited(result, 1)
    (failure,) = ET.fromstring(result.stdout.encode("utf-8")).iter("failure")
    lines = (failure.text or "").splitlines()
    assert lines and len(lines) == len(set(lines)), lines


def test_verbose_lines_are_distinct_and_excerpts_say_each_word_once() -> None:
    result = invoke("scan", str(LOG), "-v")
    exited(result, 1)
    lines = [line for line in result.stdout.splitlines() if line.startswith("  ")]
    assert lines and len(lines) == len(set(lines)), lines
    for line in lines:
        words = [w.strip("\"'`{}[](),:;") for w in line.split(": ", 1)[-1].split()]
        repeated = [w for w in set(words) if w and words.count(w) > 1 and "/" in w]
        assert not repeated, line


def test_excerpts_are_cut_at_a_word_or_quote_boundary() -> None:
    path = "/srv/bench/tasks/fix-login/task.yaml"
    raw = f'{{"command": "cat {path}"}} cat {path} {path}'
    assert excerpt_text(raw) == f'{{"command": "cat {path}"}}'
    long = " ".join(f"word{i}" for i in range(40)) + ' then "a quoted part"'
    cut = excerpt_text(long, limit=60)
    assert len(cut) <= 60 and cut.endswith("…")
    assert cut[:-1].split()[-1] in long.split()  # a whole word, never a piece of one


def test_dismissed_findings_are_counted_and_listed(tmp_path: Path) -> None:
    results = run_dir(tmp_path, "run_b", [record("log-rotate", 0, CHEAT)])
    exited(invoke("score", str(results)), 1)
    dismissals = tmp_path / "d.yaml"
    dismissals.write_text(
        yaml.safe_dump(
            {
                "dismissals": [
                    {
                        "run_id": "run_b",
                        "task": "log-rotate",
                        "iteration": 0,
                        "rule": "task-definition/path",
                        "reviewer": "ana",
                        "reason": "told to",
                        "date": "2026-01-05",
                    }
                ]
            }
        ),
        encoding="utf-8",
    )
    result = invoke("scan", str(results), "--dismissals", str(dismissals), "-v")
    exited(result, 0)  # every finding dismissed: clean
    assert "finding(s) dismissed by review" in result.stdout
    assert "  dismissed task-definition/path by ana: told to" in result.stdout.splitlines()
