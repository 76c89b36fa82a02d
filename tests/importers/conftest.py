from __future__ import annotations

from pathlib import Path

import pytest

from importers.zipwriter import DEFLATE, ZSTD, eval_members, write_zip

FIXTURES = Path(__file__).parent / "fixtures"


@pytest.fixture
def fixtures() -> Path:
    return FIXTURES


@pytest.fixture(params=[ZSTD, DEFLATE], ids=["zstd", "deflate"])
def eval_archive(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """The hand-written Inspect sample as a .eval zip, zstd (new) or deflate (old)."""
    path = tmp_path / "2026-02-18T08-41-07_fix-login_Xb4r2Qz9.eval"
    write_zip(path, eval_members(FIXTURES / "inspect_eval"), request.param)
    return path
