from __future__ import annotations

from pathlib import Path

import pytest

from integrations.inspect_logs import write_log


@pytest.fixture(scope="session")
def inspect_log(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One .eval log written by Inspect (honest, cheat and silent samples)."""
    root = tmp_path_factory.mktemp("inspect")
    (root / "work").mkdir()
    return write_log(root / "logs", root / "work")
