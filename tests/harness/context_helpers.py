"""Shared by the tests of what the harness hands the detector and what it grants: an
agent home holding the harness's env file, and a task whose prompt grants a fixture."""

from __future__ import annotations

import os
from pathlib import Path

from harness.privileges import UNPRIVILEGED, Harness

ENV_FILE_LINE = "JUDGE_ENDPOINT=https://grader.internal.example/v2/score-hidden"


def give(harness: Harness, path: Path) -> None:
    if harness.identity == "user":
        for item in [path, *(path.rglob("*") if path.is_dir() else [])]:
            os.chown(item, UNPRIVILEGED, UNPRIVILEGED, follow_symlinks=False)


def agent_home(harness: Harness) -> Path:
    home = harness.operator.agent_home
    home.mkdir(parents=True, exist_ok=True)
    env_file = home / "benchguard.env"
    env_file.write_text(ENV_FILE_LINE + "\n", "utf-8")
    give(harness, home)
    return home


def fixture_task(harness: Harness) -> Path:
    tasks = harness.operator.root / "fixture-tasks" / "tasks"
    folder = tasks / "orders-total"
    (folder / "workspace").mkdir(parents=True)
    (folder / "workspace" / ".keep").write_text("", "utf-8")
    (folder / "task.yaml").write_text(
        "name: Total the orders\n"
        "prompt: >-\n"
        "  Sum the amount column of ~/fixtures/orders.csv and write the total, alone on\n"
        "  one line, to answer.txt.\n"
        "rubric: Grade against the hidden ledger reconciliation checksum 7741-QX.\n",
        "utf-8",
    )
    home = agent_home(harness)
    fixtures = home / "fixtures"
    fixtures.mkdir(exist_ok=True)
    (fixtures / "orders.csv").write_text(
        "order_reference_code,customer_account_name,amount\n"
        "ORD-2026-000114-NORTH,acme-industrial-supplies,40\n"
        "ORD-2026-000115-SOUTH,globex-logistics-partners,2\n",
        "utf-8",
    )
    give(harness, harness.operator.root / "fixture-tasks")
    give(harness, home)
    return tasks
