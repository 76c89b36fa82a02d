"""``--profile auto`` recognises the benchmark from the log; repeated profiles are a
union (never only the last); the choice says why."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from benchguard.detection.detector import scan_record
from benchguard.detection.profile_choice import recognise, resolve_profiles, union_rules
from benchguard.detection.rules import RulesetError, load_profile
from benchguard.workflows._log_head import log_head
from benchguard.workflows.scan import ScanRequest, scan_logs


def _log(tmp_path: Path, name: str, *commands: tuple[str, str]) -> Path:
    path = tmp_path / name
    record = {
        "input": "Fix the bug.",
        "output": "done",
        "trajectory": [{"name": "bash", "args": {"command": c}, "result": r} for c, r in commands],
    }
    path.write_text(json.dumps([record]), encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("commands", "profile"),
    [
        ((("cd /testbed && git status", "On branch main"),), "swe-bench"),
        ((("cat /tests/test_outputs.py", "def test_x(): ..."),), "terminal-bench"),
        ((("ls ~", "devops-bench\nreport.md"),), "devops-bench"),
        ((("python -m pytest", "ok"), ("echo django__django-11099", "")), "swe-bench"),
    ],
)
def test_auto_recognises_the_benchmark(
    tmp_path: Path, commands: tuple[tuple[str, str], ...], profile: str
) -> None:
    chosen = dict(recognise(log_head(_log(tmp_path, "x.json", *commands)), None))
    assert chosen.get(profile)


def test_auto_falls_back_to_the_default_profile(tmp_path: Path) -> None:
    chosen = recognise(log_head(_log(tmp_path, "x.json", ("make", "ok"))), None)
    assert chosen == [("benchguard", "no benchmark recognised: the default profile")]


def test_auto_reads_the_format() -> None:
    assert dict(recognise("", "mini-swe-agent")) == {"swe-bench": "a mini-swe-agent trajectory"}


def test_union_keeps_every_profile_not_only_the_last() -> None:
    """Guards against ``--profile a --profile b`` silently keeping only b."""
    choice = resolve_profiles(["terminal-bench", "swe-bench"])
    record = {
        "output": "x",
        "trajectory": [
            {"name": "bash", "args": {"command": "cat /app/solution.sh"}, "result": ""},
            {"name": "bash", "args": {"command": "git log --all"}, "result": ""},
        ],
    }
    rules = {f.rule for f in scan_record(record, choice.rules).findings}
    assert {"solution-files/path", "git-history/log-all-refs"} <= rules
    assert choice.names[:2] == ("terminal-bench", "swe-bench")
    assert choice.reasons[:2] == ("named", "named")


def test_union_merges_same_id_rules_and_keeps_both_layouts() -> None:
    rules = union_rules(
        [("devops-bench", load_profile("devops-bench")), ("benchguard", load_profile("benchguard"))]
    )
    ids = [r.id for r in rules]
    assert len(ids) == len(set(ids))
    merged = next(r for r in rules if r.id == "upstream-github/path")
    assert any("devops-bench" in p for p in merged.patterns)
    assert any("benchguard" in p for p in merged.patterns)


def test_unknown_profile_in_a_union_is_refused() -> None:
    with pytest.raises(RulesetError, match="nosuch"):
        resolve_profiles(["swe-bench", "nosuch"])


def test_scan_chooses_per_file_and_names_why(tmp_path: Path) -> None:
    """Guards against a Terminal-Bench log read by the default profile with no warning
    (11 reads of the grader, none caught)."""
    tb = _log(tmp_path, "tb.json", ("cat /tests/test_outputs.py", "def test_ok(): ..."))
    swe = _log(tmp_path, "swe.json", ("cd /testbed && git log --all --oneline", "abc123 fix"))
    outcome = scan_logs(ScanRequest(paths=[tb, swe], rules=(), profiles=("auto",)))
    by_file: dict[str, Any] = {s.path: s for s in outcome.scans}
    assert by_file[str(tb)].records[0].report.status == "flagged"
    assert by_file[str(swe)].records[0].report.status == "flagged"
    assert "terminal-bench" in outcome.choices[str(tb)].names
    assert "swe-bench" in outcome.choices[str(swe)].names
    line = outcome.profiles_line()
    assert "terminal-bench (" in line and "swe-bench (the /testbed checkout)" in line


def test_an_archive_is_read_member_by_member() -> None:
    """Guards against an Inspect .eval (zstd members) hiding the benchguard layout."""
    eval_log = Path(__file__).parents[1] / "results" / "tool_logs" / "inspect_fix_login.eval"
    assert "benchguard" in dict(recognise(log_head(eval_log), "inspect"))


def test_one_pass_over_the_head_finds_exactly_the_literals_a_substring_test_finds() -> None:
    """Recognition looks for every sign's literals in one RE2 pass; it must answer
    exactly as ``literal in text`` for each (ASCII, non-ASCII and literals at the
    text's edges)."""
    import random

    from benchguard.detection import profile_choice

    needles = profile_choice._needles()
    rng = random.Random(23)
    alphabet = ["a", " ", "\n", "é", "/", '"', "_", ".", "日", "-"]
    for _ in range(300):
        parts = [rng.choice(alphabet) * rng.randint(0, 3) for _ in range(rng.randint(0, 12))]
        for _ in range(rng.randint(0, 3)):
            parts.insert(rng.randint(0, len(parts)), rng.choice(needles)[: rng.randint(1, 20)])
        text = "".join(parts)
        assert profile_choice._present_needles(text) == {n for n in needles if n in text}, text
    assert profile_choice._present_needles("\ud800 /testbed") == {"/testbed"}
