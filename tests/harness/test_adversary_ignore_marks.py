"""The fanotify observer's ignore marks never hide a protected file, whatever its name.

Root only (the default audit there is fanotify). An ignore mark belongs to an inode, so
a mark on a protected file's inode, met first through a hard link in the workspace,
would drop every later open of the file by its own name. The adversary
(tests/harness/adversaries/ignore_marks.py) opens its own noise file and lists its
workspace thousands of times (ignored after the second time: the observer reads fewer
events than there were opens), then opens a hard link of the task's task.yaml over and
over, then lists the tasks directory and reads task.yaml by a second spelling. Every
protected access is on the record. The rule that decides which inode may be marked
(``ignorable``) is tested beside it for a task file seen by another name (its identity
refuses it) and for a protected file made after the run started (known by path only)
and hard-linked outside the protected trees (its second name refuses it).
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from benchguard.harness.audit import protected_set
from benchguard.harness.fanotify_ignore import ignorable
from harness.helpers import Operator, only_tasks
from harness.privileges import Harness, records, run_adversary


@pytest.mark.slow
@pytest.mark.skipif(os.geteuid() != 0, reason="fanotify needs root")
def test_a_hard_link_met_first_does_not_hide_the_protected_file(operator: Operator) -> None:
    """Guards against an ignore mark put on a protected inode: the observer must never
    mark the inode of an event that touched the protected set (checked: with every
    event's inode offered and ``ignorable`` always true, task.yaml by its own name and
    the tasks directory's listing were missing from the record)."""
    harness = Harness("root", operator)
    tasks = only_tasks(operator, "sum-numbers")
    run_dir = run_adversary(
        harness,
        "ignore_marks.py",
        tasks,
        "--sandbox",
        "none",
        "--unconfined",
        env={"CHEAT_HINT": str(tasks), "ATTACK": "ignore-marks"},
    )
    [record] = records(run_dir)
    summary = record["system_audit"]
    assert summary["tool"] == "fanotify"
    assert summary["complete"] is True, summary
    # The noise was marked ignorable. How many of its opens the kernel queued before
    # the observer read the file's second event depends on the machine's speed, so the
    # event count is not asserted (no timed assertions).
    assert summary["ignored_inodes"] > 0, summary
    seen = {(a["path"], a["operation"]) for a in summary["accesses"]}
    task_dir = os.path.realpath(tasks)
    [folder] = os.listdir(task_dir)
    task_yaml = os.path.join(task_dir, folder, "task.yaml")
    workspaces = [p for p, op in seen if p.endswith("/links/alias.yaml") and op == "opened"]
    assert workspaces, seen
    assert (task_yaml, "opened") in seen, seen
    assert (task_dir, "listed") in seen, seen
    assert record["scores"]["OutcomeScore"]["score"] == 0.0
    assert record["cheating_report"]["status"] == "flagged"


def test_a_protected_inode_is_never_ignorable_by_another_name(tmp_path: Path) -> None:
    """Guards against marking an inode by the name it was met through: a task file seen
    through another name is refused by its identity; a result written
    after the run's protected set was taken (not among its identities) and hard-linked
    into the run's own tree reads as unprotected by that name; its second name makes it
    unmarkable (checked: without the ``st_nlink`` test it was ignorable)."""
    results = tmp_path / "results"
    results.mkdir()
    (tmp_path / "tasks" / "t").mkdir(parents=True)
    task = tmp_path / "tasks" / "t" / "task.yaml"
    task.write_text("name: t\n", "utf-8")
    scratch = tmp_path / "scratch" / "run"
    scratch.mkdir(parents=True)
    protected = protected_set(
        tasks_dirs=[tmp_path / "tasks"],
        results_root=results,
        own_scratch=scratch,
        own_trees=[scratch],
    )
    late = results / "late.json"
    late.write_text("{}\n", "utf-8")
    alias = scratch / "alias.json"
    own = scratch / "own.txt"
    own.write_text("mine\n", "utf-8")
    assert ignorable(protected, os.stat(own), str(own), set())
    os.link(late, alias)
    assert not ignorable(protected, os.stat(alias), str(alias), set())
    assert not ignorable(protected, os.stat(late), str(late), set())
    # A task file reached by another name with one link (a bind mount shows it so):
    # its identity alone refuses it (checked: without that test it was ignorable).
    assert not ignorable(protected, os.stat(task), str(scratch / "bound.yaml"), set())
    # A file of a capped tree's filesystem is never marked (known by path only).
    assert not ignorable(protected, os.stat(own), str(own), {os.stat(own).st_dev})
