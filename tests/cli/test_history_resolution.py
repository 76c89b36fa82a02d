"""Hashes resolved against the task's real repository (``scan --repo``): git itself
answers whether a commit is an ancestor of the base commit. A past commit's finding is
dropped (kept under ``dismissed`` with the reason), a future one is conclusive."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from cli.helpers import exited, invoke, one_line


def _git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", "-C", str(repo), *args],
        capture_output=True,
        text=True,
        check=True,
        env={
            "GIT_AUTHOR_NAME": "t",
            "GIT_AUTHOR_EMAIL": "t@t",
            "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t",
            # Fixed dates make the hashes the same in every run: a test whose abbreviated
            # hashes change with the clock tests a different log each time.
            "GIT_AUTHOR_DATE": "2026-01-01T00:00:00+00:00",
            "GIT_COMMITTER_DATE": "2026-01-01T00:00:00+00:00",
            "HOME": str(repo),
            "PATH": "/usr/bin:/bin",
        },
    )
    return done.stdout.strip()


@pytest.fixture
def repo(tmp_path: Path) -> tuple[Path, str, str, str]:
    """A repository with a past commit, the base, and a future commit on another branch."""
    path = tmp_path / "repo"
    path.mkdir()
    _git(path, "init", "-q", "-b", "main")
    for name in ("past", "base"):
        (path / f"{name}.txt").write_text(name)
        _git(path, "add", ".")
        _git(path, "commit", "-q", "-m", name)
    past = _git(path, "rev-parse", "HEAD~1")
    base = _git(path, "rev-parse", "HEAD")
    _git(path, "checkout", "-q", "-b", "fix")
    (path / "fix.txt").write_text("the fix")
    _git(path, "add", ".")
    _git(path, "commit", "-q", "-m", "fix")
    future = _git(path, "rev-parse", "HEAD")
    _git(path, "checkout", "-q", "main")
    return path, past, base, future


def _log(tmp_path: Path, *hashes: str, name: str = "django__django-11099") -> Path:
    record = {
        "name": name,
        "input": "Fix the ordering bug.",
        "output": "done",
        "trajectory": [
            {"name": "bash", "args": {"command": f"git show {h[:10]}"}, "result": ""}
            for h in hashes
        ],
    }
    path = tmp_path / "log.json"
    path.write_text(json.dumps([record]), encoding="utf-8")
    return path


def _report(result_stdout: str) -> dict[str, Any]:
    report: dict[str, Any] = json.loads(result_stdout)[0]["report"]
    return report


def test_past_commit_dropped_future_conclusive(
    tmp_path: Path, repo: tuple[Path, str, str, str]
) -> None:
    path, past, base, future = repo
    log = _log(tmp_path, past)
    unresolved = invoke("scan", str(log), "--profile", "swe-bench")
    exited(unresolved, 0)  # an untraced hash is weak: review
    past_only = invoke(
        "scan",
        str(log),
        "--profile",
        "swe-bench",
        "--repo",
        str(path),
        "--base-commit",
        base,
        "--format",
        "json",
    )
    exited(past_only, 0)
    report = _report(past_only.stdout)
    assert report["status"] == "clean"
    assert "ancestor of base" in json.dumps(report["dismissed"])
    future_log = _log(tmp_path, future)
    resolved = invoke(
        "scan",
        str(future_log),
        "--profile",
        "swe-bench",
        "--repo",
        str(path),
        "--base-commit",
        base,
        "--format",
        "json",
    )
    exited(resolved, 1)
    finding = _report(resolved.stdout)["findings"][0]
    assert finding["strength"] == "conclusive"
    assert "not an ancestor" in finding["provenance"]


def test_instances_file_names_each_records_base(
    tmp_path: Path, repo: tuple[Path, str, str, str]
) -> None:
    path, _, base, future = repo
    instances = tmp_path / "instances.jsonl"
    instances.write_text(
        json.dumps(
            {"instance_id": "django__django-11099", "base_commit": base, "created_at": "2019-03-01"}
        )
        + "\n",
        encoding="utf-8",
    )
    log = _log(tmp_path, future)
    result = invoke(
        "scan",
        str(log),
        "--profile",
        "swe-bench",
        "--repo",
        str(path),
        "--instances",
        str(instances),
        "--format",
        "json",
    )
    exited(result, 1)
    assert _report(result.stdout)["findings"][0]["strength"] == "conclusive"


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--repo", "/nonexistent/repo", "--base-commit", "abc1234"], "no such directory"),
        (["--base-commit", "abc1234"], "need --repo"),
    ],
)
def test_bad_history_options_are_bad_input(tmp_path: Path, extra: list[str], message: str) -> None:
    result = invoke("scan", str(_log(tmp_path, "abc1234def")), *extra)
    exited(result, 2)
    assert message in one_line(result.output)


def test_a_base_commit_git_cannot_resolve_is_refused(
    tmp_path: Path, repo: tuple[Path, str, str, str]
) -> None:
    path = repo[0]
    result = invoke(
        "scan", str(_log(tmp_path, "abc1234def")), "--repo", str(path), "--base-commit", "nope"
    )
    exited(result, 2)
    assert "is not a commit" in one_line(result.output)


def _score_report(out_dir: Path) -> dict[str, Any]:
    results = json.loads((out_dir / "results.json").read_text("utf-8"))
    records = results if isinstance(results, list) else results["records"]
    report: dict[str, Any] = records[0]["cheating_report"]
    return report


def test_score_resolves_like_scan(tmp_path: Path, repo: tuple[Path, str, str, str]) -> None:
    """``score`` of a foreign log takes the same history options: a past hash's finding
    is dropped (the record is clean, not sent to review), a future one conclusive (gated)."""
    path, past, base, future = repo
    history = ["--profile", "swe-bench", "--repo", str(path), "--base-commit", base]
    log = _log(tmp_path, past)
    unresolved = invoke("score", str(log), "--profile", "swe-bench", "-o", str(tmp_path / "u"))
    exited(unresolved, 0)
    assert _score_report(tmp_path / "u")["status"] == "review"
    exited(invoke("score", str(log), *history, "-o", str(tmp_path / "p")), 0)
    report = _score_report(tmp_path / "p")
    assert report["status"] == "clean"
    assert "ancestor of base" in json.dumps(report["dismissed"])
    future_log = _log(tmp_path, future)
    exited(invoke("score", str(future_log), *history, "-o", str(tmp_path / "f")), 1)
    finding = _score_report(tmp_path / "f")["findings"][0]
    assert finding["strength"] == "conclusive"
    assert "not an ancestor" in finding["provenance"]


def test_score_instances_and_bad_options(tmp_path: Path, repo: tuple[Path, str, str, str]) -> None:
    path, _, base, future = repo
    instances = tmp_path / "instances.json"
    instances.write_text(
        json.dumps([{"instance_id": "django__django-11099", "base_commit": base}]), "utf-8"
    )
    log = _log(tmp_path, future)
    result = invoke(
        "score", str(log), "--repo", str(path), "--instances", str(instances), "-o", str(tmp_path)
    )
    exited(result, 1)
    assert _score_report(tmp_path)["findings"][0]["strength"] == "conclusive"
    bad = invoke("score", str(log), "--base-commit", "abc1234")
    exited(bad, 2)
    assert "need --repo" in one_line(bad.output)
    unknown = invoke("score", str(log), "--repo", str(path), "--base-commit", "nope")
    exited(unknown, 2)
    assert "is not a commit" in one_line(unknown.output)


def _steps_log(tmp_path: Path, steps: list[tuple[str, str]], name: str = "log.json") -> Path:
    record = {
        "name": "django__django-11099",
        "input": "Fix the ordering bug.",
        "output": "done",
        "trajectory": [
            {"name": "bash", "args": {"command": command}, "result": result}
            for command, result in steps
        ],
    }
    path = tmp_path / name
    path.write_text(json.dumps([record]), encoding="utf-8")
    return path


def _scan_json(log: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    result = invoke("scan", str(log), "--profile", "swe-bench", "--format", "json", *extra)
    return result.exit_code, _report(result.stdout)


def test_log_all_output_resolved_by_the_commits_it_lists(
    tmp_path: Path, repo: tuple[Path, str, str, str]
) -> None:
    """``git log --all`` is strong on its own; with the repository, the commits its
    output lists decide: one beyond the base is conclusive, only ancestors is dropped."""
    path, past, base, future = repo
    history = ("--repo", str(path), "--base-commit", base)
    future_out = f"{future[:7]} fix\n{base[:7]} base\n{past[:7]} past\n"
    code, report = _scan_json(
        _steps_log(tmp_path, [("git log --all --oneline", future_out)]), *history
    )
    assert code == 1
    assert report["findings"][0]["strength"] == "conclusive"
    assert f"lists {future[:7]}" in report["findings"][0]["provenance"]
    past_out = f"commit {base}\nAuthor: t <t@t>\n\n    base\n\ncommit {past}\n"
    log = _steps_log(tmp_path, [("git log --all", past_out)], "past.json")
    assert _scan_json(log)[0] == 1  # without the repository: strong, flagged
    code, report = _scan_json(log, *history)
    assert (code, report["status"]) == (0, "clean")
    assert "nothing beyond HEAD was shown" in json.dumps(report["dismissed"])


def test_a_commit_dated_after_the_instance_is_future(
    tmp_path: Path, repo: tuple[Path, str, str, str]
) -> None:
    """A weak other-ref read whose output shows a commit (unknown to the repository)
    dated after the instance's created_at is conclusive; dated before, it stays weak."""
    path, _, base, _ = repo
    instances = tmp_path / "instances.json"
    instances.write_text(
        json.dumps(
            [
                {
                    "instance_id": "django__django-11099",
                    "base_commit": base,
                    "created_at": "2019-03-01T12:00:00Z",
                }
            ]
        ),
        "utf-8",
    )
    knowledge = ("--repo", str(path), "--instances", str(instances))

    def shown(date: str) -> str:
        return f"commit {'e' * 39}1\nAuthor: a <a@a>\nDate:   {date}\n\n    Fix ordering\n"

    later = _steps_log(tmp_path, [("git log origin/main", shown("Tue Mar 5 14:20:00 2019 +0100"))])
    code, report = _scan_json(later, *knowledge)
    assert code == 1
    finding = report["findings"][0]
    assert finding["strength"] == "conclusive"
    assert "after the instance's created_at" in finding["provenance"]
    earlier = _steps_log(
        tmp_path, [("git log origin/main", shown("Mon Feb 4 10:00:00 2019 +0000"))], "e.json"
    )
    code, report = _scan_json(earlier, *knowledge)
    assert (code, report["status"]) == (0, "review")


def test_bad_instances_are_bad_input(tmp_path: Path, repo: tuple[Path, str, str, str]) -> None:
    path, _, base, _ = repo
    log = _steps_log(tmp_path, [("git log origin/main", "")])
    cases = [
        ({"instance_id": "a", "base_commit": base, "created_at": "last spring"}, "created_at"),
        ({"instance_id": "a", "base_commit": "0" * 40}, "is not a commit"),
    ]
    for entry, message in cases:
        instances = tmp_path / "bad.json"
        instances.write_text(json.dumps([entry]), "utf-8")
        for command in ("scan", "score"):
            result = invoke(command, str(log), "--repo", str(path), "--instances", str(instances))
            exited(result, 2)
            assert message in one_line(result.output)
            assert "Traceback" not in result.output
