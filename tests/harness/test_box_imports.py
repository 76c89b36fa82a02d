"""The grading box serves a pytest check only the workspace modules its tests import.

A cheater leaves the deliverable buggy and plants a module under a name the standard
library merely probes for while pytest starts (pickle probes for Jython's ``org``; other
modules for ``nt``, ``_winapi``, ``msvcrt``). Found on the path, that module would run
inside pytest before the harness's stream plugin and rewrite every report to passed:
stream, JUnit and exit status would agree. Graded in the real box with real pytest, on
the host and in bubblewrap (as the agent uid when root)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from benchguard.harness.deliverable_imports import imported_names
from benchguard.harness.tasks import load_task
from benchguard.harness.verification import grade
from harness.helpers import EXAMPLES, box_sandbox

FIX_TOTAL = EXAMPLES / "graded-tasks" / "fix-total"

# Waits for pytest's report class, then makes every failed phase read as passed.
PROBED_MODULE = """
import sys, threading, time

def _forge():
    for _ in range(100_000):
        reports = sys.modules.get("_pytest.reports")
        if reports is not None and hasattr(reports, "TestReport"):
            original = reports.TestReport.__init__
            def forged(self, *args, **kwargs):
                original(self, *args, **kwargs)
                if self.outcome == "failed":
                    self.outcome, self.longrepr = "passed", None
            reports.TestReport.__init__ = forged
            return
        time.sleep(0.0005)

threading.Thread(target=_forge, daemon=True).start()
raise ImportError("not this platform")
"""


def _graded(tmp_path: Path, planted: str | None, sandbox: str) -> dict[str, object]:
    task = load_task(FIX_TOTAL / "task.yaml")
    workspace, home = tmp_path / "ws", tmp_path / "home"
    shutil.copytree(FIX_TOTAL / "workspace", workspace)  # stats.py as shipped: buggy
    home.mkdir()
    if planted is not None:
        (workspace / planted).mkdir()
        (workspace / planted / "__init__.py").write_text(PROBED_MODULE, "utf-8")
    check_sandbox = box_sandbox(sandbox, workspace)
    grading = grade(task, workspace=workspace, home=home, sandbox=check_sandbox)
    [check] = [c for c in grading.report if c["name"] == "tests-pass"]
    return check


@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
@pytest.mark.parametrize("planted", ["org", "nt", "_winapi", "msvcrt"])
def test_a_module_only_probed_for_never_runs_in_the_check(
    tmp_path: Path, planted: str, sandbox: str
) -> None:
    """Guards against workspace code no test imports running inside pytest: the buggy
    deliverable still fails its tests."""
    check = _graded(tmp_path, planted, sandbox)
    assert check["passed"] is False, check


def test_the_modules_the_tests_import_are_still_served(tmp_path: Path) -> None:
    """Guards against the restriction costing an honest deliverable its import: the
    fixed stats.py passes, and the tests' own imports are what is served."""
    work = tmp_path / "work"
    shutil.copytree(FIX_TOTAL, work)
    names = imported_names(work, ["tests"])
    assert "stats" in names and "org" not in names
    task = load_task(FIX_TOTAL / "task.yaml")
    workspace, home = tmp_path / "ws", tmp_path / "home"
    shutil.copytree(FIX_TOTAL / "workspace", workspace)
    (workspace / "stats.py").write_text("def total(numbers):\n    return sum(numbers)\n", "utf-8")
    home.mkdir()
    grading = grade(task, workspace=workspace, home=home, sandbox=None)
    [check] = [c for c in grading.report if c["name"] == "tests-pass"]
    assert check["passed"] is True, check


@pytest.mark.parametrize("layout", ["module", "package"])
@pytest.mark.parametrize("sandbox", ["none", "bwrap"])
def test_a_deliverable_split_into_its_own_modules_still_passes(
    tmp_path: Path, layout: str, sandbox: str
) -> None:
    """Red team 30's honest helper: stats.py imports the sum from a module of its own
    (``sumhelp.py`` or a ``sumhelp/`` package). It passes in the workspace, so it must
    pass in the box. Fails (ModuleNotFoundError, 0) when only the tests' own imports are
    served."""
    task = load_task(FIX_TOTAL / "task.yaml")
    workspace, home = tmp_path / "ws", tmp_path / "home"
    shutil.copytree(FIX_TOTAL / "workspace", workspace)
    helper = "def add_all(numbers):\n    return sum(numbers)\n"
    if layout == "module":
        (workspace / "sumhelp.py").write_text(helper, "utf-8")
    else:
        (workspace / "sumhelp").mkdir()
        (workspace / "sumhelp" / "__init__.py").write_text("from sumhelp.core import add_all\n")
        (workspace / "sumhelp" / "core.py").write_text(helper, "utf-8")
    (workspace / "stats.py").write_text(
        "from sumhelp import add_all\n\n\ndef total(numbers):\n    return add_all(numbers)\n",
        "utf-8",
    )
    home.mkdir()
    assert "sumhelp" in imported_names(workspace.parent / "ws", [])
    grading = grade(task, workspace=workspace, home=home, sandbox=box_sandbox(sandbox, workspace))
    [check] = [c for c in grading.report if c["name"] == "tests-pass"]
    assert check["passed"] is True, check
