"""An agent home inside the harness's checkout is the agent's world, not the harness's."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from harness.helpers import REPO, Operator, agent, load_run, only_tasks


@pytest.fixture
def home_in_checkout() -> Iterator[Path]:
    """A home under the checkout, where `make demo` keeps its own (demo-output/)."""
    parent = Path(tempfile.mkdtemp(prefix=".test-home-", dir=REPO))
    try:
        home = parent / "agent-home"
        home.mkdir()
        yield home
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def test_honest_writes_to_a_home_inside_the_checkout_are_not_audit_findings(
    operator: Operator, home_in_checkout: Path
) -> None:
    """Guards against the system audit protecting the whole checkout around an agent
    home that lives in it: every honest home-file write read as "opened by the agent"
    and zeroed the honest runs of `make demo`."""
    tasks = only_tasks(operator, "write-notes")
    run_dir = operator.run_ok(str(tasks), "--agent", agent("honest"), home=home_in_checkout)
    records, rows, _ = load_run(run_dir)
    assert [r["status"] for r in records] == ["success"]
    audit_findings = [
        f for r in records for f in r["cheating_report"]["findings"] if f.get("source") == "audit"
    ]
    assert audit_findings == []
    assert [row["outcomeScore"] for row in rows] == [1.0]
