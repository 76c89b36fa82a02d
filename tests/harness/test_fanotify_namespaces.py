"""The fanotify audit names a run by the mount its event came through; the kernel
reuses a freed 32-bit mount id at once, so the audit names mounts by their 64-bit unique
id (``statx`` ``STATX_MNT_ID_UNIQUE``, ``listmount``), which is never reused.

Asked of the real kernel (root: new mount namespaces), and through ``benchguard run``:
an honest sandboxed run beside a neighbour that makes mount namespaces in a loop and
opens a file of the protected set must stay clean (red team 3's false positive)."""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from benchguard.harness.fanotify import hold_namespace
from harness.helpers import REPO, Operator, only_tasks
from harness.privileges import Harness, records

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="new mount namespaces need root")

SHOW_IDS = "cut -d' ' -f1 /proc/self/mountinfo"


def _namespace_ids() -> set[int]:
    """The 32-bit mount ids of a namespace made and left now (its process exits)."""
    done = subprocess.run(
        ["unshare", "--mount", "sh", "-c", SHOW_IDS],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    )
    return {int(x) for x in done.stdout.split()}


def _learned_and_released() -> tuple[set[int], set[int]]:
    """A namespace's unique ids, learned through hold_namespace and released, and its
    32-bit ids; its one process then exits."""
    child = subprocess.Popen(
        ["unshare", "--mount", "sh", "-c", f"{SHOW_IDS}; echo ready; read line"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    assert child.stdout is not None and child.stdin is not None
    old: set[int] = set()
    for line in child.stdout:
        if line.strip() == "ready":
            break
        old.add(int(line))
    learned = hold_namespace(child.pid)
    child.stdin.write("\n")
    child.stdin.close()
    child.wait(timeout=30)
    assert learned is not None
    fd, name, ids = learned
    os.close(fd)
    assert name.startswith("mnt:[") and len(ids) == len(old)
    return ids, old


def _unique_ids_of_new_namespaces(count: int) -> set[int]:
    found: set[int] = set()
    for _ in range(count):
        child = subprocess.Popen(
            ["unshare", "--mount", "sh", "-c", "echo ready; read line"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert child.stdout is not None and child.stdin is not None
        assert child.stdout.readline().strip() == "ready"
        learned = hold_namespace(child.pid)
        child.stdin.write("\n")
        child.stdin.close()
        child.wait(timeout=30)
        assert learned is not None
        os.close(learned[0])
        found |= learned[2]
    return found


def test_a_released_namespace_s_unique_ids_go_to_no_other_mount() -> None:
    """Guards against an honest run flagged for a neighbour's file (a later mount took
    an id the audit had learned for this run) and against a run's own access credited
    to a finished run whose id it took: the ids the audit learns are never reused."""
    unique, old = _learned_and_released()
    reused_old: set[int] = set()
    for _ in range(10):
        time.sleep(0.2)  # the kernel frees a dead namespace's mounts asynchronously
        reused_old |= old & _namespace_ids()
        if reused_old:
            break
    # The control: the 32-bit ids are handed out again (what attribution once used).
    assert reused_old, "the kernel did not reuse the 32-bit ids: this test shows nothing here"
    assert unique & _unique_ids_of_new_namespaces(5) == set()


NEIGHBOUR = """
while [ ! -e "$1/stop" ]; do unshare -m cat "$1/tests.py" > /dev/null; done
"""


@pytest.mark.slow
def test_a_neighbour_s_namespaces_are_never_charged_to_a_sandboxed_run(
    operator: Operator,
) -> None:
    """Red team 3's false positive: beside a sandboxed honest run, another process makes
    mount namespaces in a loop (each takes the lowest free 32-bit mount ids, those bwrap
    freed inside the run's held namespace among them) and opens a file the audit
    protects (another grading box's tests). Attributed by 32-bit ids, the run was gated
    0 for it (checked: 9 of 12 runs here); by unique ids it stays clean."""
    if shutil.which("bwrap") is None:
        pytest.fail("bubblewrap is required on CI")
    box = Path(tempfile.mkdtemp(prefix="bg-grade-", dir=tempfile.gettempdir()))
    (box / "tests.py").write_text("assert True\n", "utf-8")
    neighbour = subprocess.Popen(["sh", "-c", NEIGHBOUR, "sh", str(box)])
    try:
        tasks = only_tasks(operator, "sum-numbers", "word-count")
        agent = REPO / "examples" / "agents" / "honest.yaml"
        run_dir = Harness("root", operator).run_ok(
            str(tasks), "--agent", str(agent), "--sandbox", "bwrap", "--iterations", "2"
        )
    finally:
        (box / "stop").touch()
        neighbour.wait(timeout=30)
        shutil.rmtree(box, ignore_errors=True)
    found = records(run_dir)
    assert len(found) == 4
    for record in found:
        audit = record["system_audit"]
        assert audit["tool"] == "fanotify" and audit["complete"], audit
        assert audit["accesses"] == [], audit["accesses"]
        assert record["cheating_report"]["status"] == "clean"
        assert record["scores"]["OutcomeScore"]["score"] == 1.0


def test_a_process_that_left_the_namespace_is_not_learned() -> None:
    """Guards against ids read from a namespace other than the one held (the process
    exited, or unshared, between the two reads): nothing is learned then."""
    child = subprocess.Popen(["sleep", "0"])
    child.wait(timeout=30)
    assert hold_namespace(child.pid) is None
