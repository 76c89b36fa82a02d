"""Reading a strace log into the audit summary: paths, results, bounds."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from benchguard.harness.audit import (
    ProtectedSet,
    protected_set,
    strace_prefix,
    summarise,
    tree_identities,
)

# As strace -f -y prints it: every descriptor with the kernel's path for it.
LOG = """\
100 execve("/usr/bin/python3", ["python3", "agent.py"], 0x7ffd /* 5 vars */) = 0
100 openat(AT_FDCWD</work/ws>, "//srv/tasks/t1/task.yaml", O_RDONLY|O_CLOEXEC) = 3</srv/tasks/t1/task.yaml>
100 openat(AT_FDCWD</work/ws>, "../../srv/tasks", O_RDONLY|O_DIRECTORY) = 4</srv/tasks>
100 getdents64(77</srv/tasks>, 0x55 /* 3 entries */, 32768) = 80
100 clone(child_stack=NULL, flags=CLONE_CHILD_CLEARTID|SIGCHLD) = 101
101 chdir("/srv/results") = 0
101 openat(AT_FDCWD</srv/results>, "run_1/results.json", O_RDONLY <unfinished ...>
100 newfstatat(AT_FDCWD</work/ws>, "/srv/tasks/t2", 0x7ffc, 0) = -1 ENOENT (No such file or directory)
101 <... openat resumed>) = 5</srv/results/run_1/results.json>
101 openat(AT_FDCWD</srv/results>, "notes.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = -1 EACCES (Permission denied)
100 openat(AT_FDCWD</work/ws>, "/proc/self/root/srv/tasks/t3/task.yaml", O_RDONLY) = -1 EACCES (Permission denied)
100 symlink("../../srv/tasks/t1", "/work/ws/link") = 0
100 openat(AT_FDCWD</work/ws>, "link/task.yaml", O_RDWR) = 6</srv/tasks/t1/task.yaml>
100 openat(AT_FDCWD</work/ws>, "/work/ws/answer.txt", O_WRONLY|O_CREAT|O_TRUNC, 0666) = 7</work/ws/answer.txt>
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
    assert ("/srv/tasks/t3/task.yaml", "opened", "denied") in seen
    assert ("/srv/tasks/t2", "looked up", "not-found") in seen
    # A relative symlink target is resolved from the link's directory, not the cwd.
    assert ("/srv/tasks/t1", "linked to", "ok") in seen
    assert not any(a["path"].startswith("/work/ws") for a in summary["accesses"])
    categories = {a["category"] for a in summary["accesses"]}
    assert categories == {"task-definition", "results-dir"}


def test_a_call_the_log_cannot_follow_makes_the_audit_incomplete(tmp_path: Path) -> None:
    """Guards against a detached mount tree or an io_uring (reads that bypass openat)
    leaving an audit that reads as complete: what they reached is unknown."""
    log = tmp_path / "strace.log"
    for call in (
        'open_tree(AT_FDCWD</work/ws>, "/srv/tasks", OPEN_TREE_CLONE) = 3</>',
        "io_uring_setup(4, {flags=0}) = 3<anon_inode:[io_uring]>",
        'mount("none", "/mnt", "tmpfs", 0, NULL) = 0',
    ):
        log.write_text(LOG + f"102 {call}\n", "utf-8")
        summary = summarise(log, _protected(tmp_path), start_cwd=Path("/work/ws"))
        assert summary["complete"] is False, call
        assert call.split("(")[0] in summary["uninterpreted_calls"]
    log.write_text(LOG + "unparseable line\n", "utf-8")
    summary = summarise(log, _protected(tmp_path), start_cwd=Path("/work/ws"))
    assert summary["complete"] is False


def test_a_hard_link_to_protected_material_is_matched_by_identity(tmp_path: Path) -> None:
    """Guards against a second name for a protected file (a hard link made before the
    run) reading as an unprotected path: the file is matched by (device, inode)."""
    tasks = tmp_path / "tasks"
    (tasks / "t1").mkdir(parents=True)
    (tasks / "t1" / "task.yaml").write_text("expected_output: 137\n", "utf-8")
    elsewhere = tmp_path / "ws"
    elsewhere.mkdir()
    os.link(tasks / "t1" / "task.yaml", elsewhere / "notes.txt")
    protected = protected_set(
        tasks_dirs=[tasks], results_root=tmp_path / "results", own_scratch=tmp_path / "bg-run-own"
    )
    log = tmp_path / "strace.log"
    log.write_text(
        f'100 openat(AT_FDCWD<{elsewhere}>, "notes.txt", O_RDONLY) = 3<{elsewhere}/notes.txt>\n',
        "utf-8",
    )
    summary = summarise(log, protected, start_cwd=elsewhere)
    assert summary["complete"] is True
    assert [(a["path"], a["category"]) for a in summary["accesses"]] == [
        (f"{elsewhere}/notes.txt", "task-definition")
    ]


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


def test_a_shell_process_substitution_reopens_a_pipe_and_stays_complete(
    tmp_path: Path,
) -> None:
    """Guards against an honest shell (bash's ``<(...)`` reopens a pipe through
    /dev/fd/N, as Codex's shell does) making the audit incomplete, and against that
    leniency hiding a real file: the same log's read of a protected file still counts.
    The log is the real strace's, of the real bash."""
    tasks = tmp_path / "tasks" / "t1"
    tasks.mkdir(parents=True)
    (tasks / "task.yaml").write_text("expected_output: 137\n", "utf-8")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    log = tmp_path / "strace.log"
    command = f"cat <(echo honest) > /dev/null; cat <(cat {tasks / 'task.yaml'}) > /dev/null"
    subprocess.run(
        [*strace_prefix("strace", log), "/bin/bash", "-c", command],
        cwd=workspace,
        # Not the test's PATH: a venv inside the checkout is the harness's own tree.
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
        check=True,
        timeout=60,
    )
    assert "pipe:[" in log.read_text("utf-8")  # the reopened pipe, as the kernel names it
    protected = protected_set(
        tasks_dirs=[tmp_path / "tasks"],
        results_root=tmp_path / "results",
        own_scratch=tmp_path / "bg-run-own",
    )
    summary = summarise(log, protected, start_cwd=workspace)
    assert summary["complete"] is True, summary
    assert summary["uninterpreted_calls"] == {}
    assert [(a["path"], a["operation"]) for a in summary["accesses"]] == [
        (str(tasks / "task.yaml"), "opened")
    ]


UNTRACED_CHILD = """\
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
SIGCHLD, CLONE_UNTRACED = 17, 0x00800000
pid = libc.syscall(56, SIGCHLD | CLONE_UNTRACED, 0, 0, 0, 0)  # clone, x86_64
if pid == 0:
    libc.syscall(60, 0)  # exit at once: the child runs no Python
os.waitpid(pid, 0)
"""


def test_a_child_made_untraced_makes_the_audit_incomplete(tmp_path: Path) -> None:
    """Guards against a child strace never attaches to (CLONE_UNTRACED; a red team then
    traced it itself and read every task through it) leaving a complete, clean audit.
    The log is the real strace's, of a real clone."""
    if os.uname().machine != "x86_64":
        raise AssertionError("the raw clone above is x86_64's syscall number")
    script = tmp_path / "untraced.py"
    script.write_text(UNTRACED_CHILD, "utf-8")
    log = tmp_path / "strace.log"
    subprocess.run(
        [*strace_prefix("strace", log), sys.executable, "-I", str(script)],
        cwd=tmp_path,
        check=True,
        timeout=60,
    )
    assert "CLONE_UNTRACED" in log.read_text("utf-8")
    summary = summarise(log, _protected(tmp_path), start_cwd=tmp_path)
    assert summary["complete"] is False, summary
    assert "clone(CLONE_UNTRACED)" in summary["uninterpreted_calls"]


def test_another_runs_grading_box_is_protected(tmp_path: Path) -> None:
    """Guards against an agent at -j 2 reading or rewriting a sibling run's grading box
    (its tests, the deliverable under grade) unseen: the box is the harness's record."""
    box = os.path.join(os.path.realpath(tempfile.gettempdir()), "bg-grade-x1y2")
    log = tmp_path / "strace.log"
    log.write_text(
        f'100 openat(AT_FDCWD</work/ws>, "{box}/pristine/tests/test_stats.py", '
        f"O_WRONLY|O_TRUNC) = 3<{box}/pristine/tests/test_stats.py>\n",
        "utf-8",
    )
    summary = summarise(log, _protected(tmp_path), start_cwd=Path("/work/ws"))
    assert [(a["category"], a["material"]) for a in summary["accesses"]] == [
        ("harness-record", "another run's grading box")
    ]


def test_a_childs_calls_printed_before_its_clone_returns_are_read_as_its_parents_child(
    tmp_path: Path,
) -> None:
    """Guards against strace -f's order (a child's first calls printed before its
    parent's clone returns) costing the child its parent's standing: the harness's own
    wrapper's mounts read as the agent's, and an honest run gated incomplete (seen on
    CI). The same log from an agent's process still makes the audit incomplete."""
    log = tmp_path / "strace.log"
    log.write_text(
        '100 execve("/usr/bin/unshare", ["unshare"], 0x7ffd /* 5 vars */) = 0\n'
        "100 clone(child_stack=NULL, flags=SIGCHLD <unfinished ...>\n"
        '101 mount("none", "/home/agent", "overlay", 0, "lowerdir=/x") = 0\n'
        "100 <... clone resumed>) = 101\n",
        "utf-8",
    )
    start = Path("/work/ws")
    wrapper = summarise(log, _protected(tmp_path), start_cwd=start, wrapped=True)
    assert wrapper["complete"] is True and wrapper["uninterpreted_calls"] == {}, wrapper
    agent = summarise(log, _protected(tmp_path), start_cwd=start, wrapped=False)
    assert agent["complete"] is False and "mount" in agent["uninterpreted_calls"], agent


def test_a_trees_identities_are_remembered_per_walk_limit(tmp_path: Path) -> None:
    """The process-wide walk memo is keyed by the walk's limit too: a capped walk after
    a full one of the same tree is capped (it returned the full walk before), and an
    unchanged tree is walked once."""
    tree = tmp_path / "tasks"
    (tree / "t1").mkdir(parents=True)
    for index in range(5):
        (tree / "t1" / f"f{index}").write_text("x", encoding="utf-8")
    full, complete = tree_identities(str(tree))
    assert complete and len(full) == 7
    capped, capped_complete = tree_identities(str(tree), limit=3)
    assert not capped_complete and len(capped) == 3
    assert tree_identities(str(tree)) is tree_identities(str(tree))


def test_a_stop_strace_could_not_name_before_its_process_vanished_is_not_an_access(
    tmp_path: Path,
) -> None:
    """Guards against an honest run gated incomplete by strace -qq's line for a process
    that died at a syscall stop before strace could read which call it was (seen on CI
    under load: the unprivileged Claude Code run and its pre-flight check). A named call
    strace let go of mid-way stays unreadable: a tracer that detached a live process did
    not see what that call reached."""
    log = tmp_path / "strace.log"
    log.write_text(LOG + "102 ???( <detached ...>\n", "utf-8")
    summary = summarise(log, _protected(tmp_path), start_cwd=Path("/work/ws"))
    assert summary["complete"] is True, summary["incomplete_reason"]
    named = '102 openat(AT_FDCWD</work/ws>, "/srv/tasks/t1/task.yaml", O_RDONLY <detached ...>\n'
    log.write_text(LOG + named, "utf-8")
    summary = summarise(log, _protected(tmp_path), start_cwd=Path("/work/ws"))
    assert summary["complete"] is False


def test_a_lookup_of_the_process_s_own_descriptor_is_not_resolved_in_the_harness(
    tmp_path: Path,
) -> None:
    """Guards against the -j 2 false positive: ``os.ttyname`` (pty.openpty, ``script``)
    is ``readlink("/proc/self/fd/N")``, and a lookup resolved by the harness after the run
    named the harness's own fd N, another run's scratch while the harness removed it,
    flagging an honest run. Such paths name the caller's descriptors: they are matched
    as spelled, never resolved or stat'ed in the harness's view."""
    tasks = tmp_path / "tasks"
    (tasks / "t1").mkdir(parents=True)
    (tasks / "t1" / "task.yaml").write_text("expected_output: 137\n", "utf-8")
    other = tmp_path / "bg-run-other"
    other.mkdir()
    protected = protected_set(
        tasks_dirs=[tasks], results_root=tmp_path / "results", own_scratch=tmp_path / "bg-run-own"
    )
    held = [os.open(other, os.O_RDONLY), os.open(tasks / "t1" / "task.yaml", os.O_RDONLY)]
    try:
        lines = []
        for fd in held:
            lines += [
                f'100 readlink("/proc/self/fd/{fd}", "/dev/pts/0", 31) = 10',
                f'100 newfstatat(AT_FDCWD</work/ws>, "/dev/fd/{fd}", {{st_mode=S_IFCHR}}, 0) = 0',
                f'100 stat("/proc/thread-self/fd/{fd}", {{st_mode=S_IFCHR}}) = 0',
            ]
        log = tmp_path / "strace.log"
        log.write_text("\n".join(lines) + "\n", "utf-8")
        summary = summarise(log, protected, start_cwd=Path("/work/ws"))
    finally:
        for fd in held:
            os.close(fd)
    assert summary["complete"] is True
    assert summary["accesses"] == [], summary["accesses"]
