"""A bad ``.eval`` member is an :class:`EvalArchiveError` naming the archive and member."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchguard.importers import inspect_eval
from benchguard.importers.eval_zip import EvalArchive, EvalArchiveError
from importers.zipwriter import DEFLATE, ZSTD, eval_members, write_zip

STORED = 0
BZIP2 = 12
BAD_MEMBER = "samples/zz-broken_epoch_1.json"


def _archive_with_bad_member(path: Path, folder: Path, method: int) -> Path:
    """The hand-written log stored as it is, plus a last member of garbage bytes whose
    headers claim ``method`` (0xff bytes are neither valid deflate nor a zstd frame)."""
    write_zip(path, {**eval_members(folder), BAD_MEMBER: b"\xff" * 64}, STORED)
    data = bytearray(path.read_bytes())
    local = data.rindex(b"PK\x03\x04")
    data[local + 8 : local + 10] = method.to_bytes(2, "little")
    central = data.rindex(b"PK\x01\x02")
    data[central + 10 : central + 12] = method.to_bytes(2, "little")
    path.write_bytes(bytes(data))
    return path


@pytest.mark.parametrize(
    ("method", "why"),
    [
        (DEFLATE, "corrupt data"),
        (ZSTD, "corrupt data"),
        (BZIP2, "uses zip compression method 12; supported: stored (0), deflate (8), zstd (93)"),
    ],
    ids=["deflate", "zstd", "unsupported"],
)
def test_a_bad_member_is_an_archive_error_and_its_neighbours_still_read(
    tmp_path: Path, fixtures: Path, method: int, why: str
) -> None:
    """Guards against a corrupt or unsupported member escaping as a bare decoder error
    (zlib.error, ZstdError) that names neither the archive nor the member, or sinking
    the samples beside it."""
    path = _archive_with_bad_member(tmp_path / "run.eval", fixtures / "inspect_eval", method)
    archive = EvalArchive(path)
    with pytest.raises(EvalArchiveError) as caught:
        archive.read(BAD_MEMBER)
    assert str(caught.value).startswith(f"{path}: member {BAD_MEMBER!r}")
    assert why in str(caught.value)

    imported = inspect_eval.import_file(path)
    assert len(imported.records) == 1
    [problem] = imported.problems
    assert BAD_MEMBER in problem and why in problem
