"""Reading a strace log into the audit summary: paths, results, bounds."""

from __future__ import annotations

from pathlib import Path

from benchguard.harness.audit import ProtectedSet, protected_set, summarise

LOG = """\
100 execve("/usr/bin/python3", ["python3", "agent.py"], 0x7ffd /* 5 vars */) = 0
100 openat(AT_FDCWD, "/srv/tasks/t1/task.yaml", O_RDONLY|O_CLOEXEC) = 3
100 openat(AT_FDCWD, "../../srv/tasks", O_RDONLY|O_DIRECTORY) = 4
100 getdents64(4, 0x55 /* 3 entries */, 32768) = 80
100 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD) = 101
101 chdir("/srv/results") = 0
101 openat(AT_FDCWD, "run_1/results.json", O_RDONLY <unfinished ...>
100 newfstatat(AT_FDCWD, "/srv/tasks/t2", 0x7ffc, 0) = -1 ENOENT (No such file or directory)
101 <... openat resumed>) = 5
101 openat(AT_FDCWD, "notes.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = -1 EACCES (Permission denied)
100 symlink("/srv/tasks/t1", "link") = 0
100 openat(AT_FDCWD, "/work/ws/answer.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 6
100 +++ exited with 0 +++
"""


def _protected(tmp_path: Path) -> ProtectedSet:
    return protected_set(
        tasks_dirs=[Path("/srv/tasks")],
        results_root=Path("/srv/results"),
        own_scratch=tmp_path / "bg-run-own",
    )


def test_protected_accesses_are_read_with_their_results(tmp_path: Path) -> None:
    """Guards against a relative path, a path behind a directory descriptor, a call
    split across lines or a child's own working directory escaping the audit."""
    log = tmp_path / "strace.log"
    log.write_text(LOG, "utf-8")
    summary = summarise(log, _protected(tmp_path), start_cwd=Path("/work/ws"))
    assert summary["complete"] is True
    seen = {(a["path"], a["operation"], a["result"]) for a in summary["accesses"]}
    assert ("/srv/tasks/t1/task.yaml", "opened", "ok") in seen
    assert ("/srv/tasks", "listed", "ok") in seen
    assert ("/srv/results/run_1/results.json", "opened", "ok") in seen
    assert ("/srv/results/notes.txt", "opened", "denied") in seen
    assert ("/srv/tasks/t2", "looked up", "not-found") in seen
    assert ("/srv/tasks/t1", "linked to", "ok") in seen
    assert not any(a["path"].startswith("/work/ws") for a in summary["accesses"])
    categories = {a["category"] for a in summary["accesses"]}
    assert categories == {"task-definition", "results-dir"}


def test_a_capped_or_missing_log_is_incomplete(tmp_path: Path) -> None:
    """Guards against an audit that read only part of its log (or none) reading as
    complete: the record would then be scanned as clean."""
    log = tmp_path / "strace.log"
    log.write_text(LOG * 50, "utf-8")
    capped = summarise(log, _protected(tmp_path), start_cwd=tmp_path, limit=1000)
    assert capped["complete"] is False and "capped" in capped["incomplete_reason"]
    missing = summarise(tmp_path / "nope", _protected(tmp_path), start_cwd=tmp_path)
    assert missing["complete"] is False
    log.write_text("", "utf-8")
    empty = summarise(log, _protected(tmp_path), start_cwd=tmp_path)
    assert empty["complete"] is False
