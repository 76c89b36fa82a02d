from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

IMPORTER_FIXTURES = Path(__file__).parent.parent / "importers" / "fixtures"


def make_record(index: int, command: str, result: str = "ok") -> dict[str, Any]:
    return {
        "name": f"task-{index}",
        "input": "Fix the bug.",
        "output": f"done {index}",
        "trajectory": [
            {"name": "exec", "args": {"command": "ls"}, "result": "app.py", "status": "completed"},
            {"name": "exec", "args": {"command": command}, "result": result, "status": "completed"},
        ],
    }


@pytest.fixture
def mixed_tree(tmp_path: Path) -> Path:
    """A directory of every importer fixture plus results files and one bad file."""
    root = tmp_path / "runs"
    (root / "imported").mkdir(parents=True)
    for fixture in IMPORTER_FIXTURES.iterdir():
        if fixture.is_file():
            shutil.copy(fixture, root / "imported" / fixture.name)
    for batch in range(3):
        records = [
            make_record(i, "cat ~/benchguard/tasks/t/task.yaml" if i % 3 == 0 else "pytest -q")
            for i in range(batch * 5, batch * 5 + 5)
        ]
        folder = root / f"run_{batch}"
        folder.mkdir()
        (folder / "results.json").write_text(json.dumps(records))
    (root / "run_1" / "notes.txt").write_text("not a log\n")
    return root
