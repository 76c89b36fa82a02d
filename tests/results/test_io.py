"""Results files: both layouts read, clear errors, and atomic multi-file writes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchguard.results.io import ResultsFileError, read_results, write_files_atomic


def test_reads_the_reference_list_layout_and_keeps_it(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps([{"folder": "a"}, 3]), encoding="utf-8")
    document = read_results(path)
    assert document.layout == "list" and document.non_object_positions() == [1]
    assert document.to_json() == [{"folder": "a"}, 3]


def test_reads_the_object_layout_and_keeps_foreign_top_level_keys(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    data = {"schema_version": 1, "run_id": "r", "t": "t", "manifest": None,
            "records": [{"folder": "a"}], "harness_notes": "kept"}  # fmt: skip
    path.write_text(json.dumps(data), encoding="utf-8")
    document = read_results(path)
    assert document.run_id == "r" and document.to_json()["harness_notes"] == "kept"


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "file not found"),
        (b"\xff\xfe", "not UTF-8"),
        ("[1, 2", "invalid JSON at line 1"),
        ("42", "top level is int"),
        ('{"records": {}}', "'records' field is missing or not a list"),
        ('{"records": [], "manifest": 3}', "'manifest' field is not an object"),
    ],
)
def test_bad_results_files_name_the_file_and_the_problem(
    tmp_path: Path, content: str | bytes | None, message: str
) -> None:
    path = tmp_path / "results.json"
    if isinstance(content, bytes):
        path.write_bytes(content)
    elif content is not None:
        path.write_text(content, encoding="utf-8")
    with pytest.raises(ResultsFileError) as caught:
        read_results(path)
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)


def test_a_failed_batch_write_touches_no_target(tmp_path: Path) -> None:
    """Guards against a half-written output set: when one file cannot be staged, the
    others keep their old content and no temporary file is left behind."""
    first = tmp_path / "results.json"
    first.write_text("old", encoding="utf-8")
    blocker = tmp_path / "rows.json"
    blocker.mkdir()
    with pytest.raises(IsADirectoryError):
        write_files_atomic({first: "new", blocker: "[]"})
    assert first.read_text(encoding="utf-8") == "old"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json", "rows.json"]


def test_written_files_are_readable_by_others(tmp_path: Path) -> None:
    target = tmp_path / "out" / "rows.json"
    write_files_atomic({target: "[]\n"})
    assert target.read_text(encoding="utf-8") == "[]\n"
    assert target.stat().st_mode & 0o044 == 0o044


def test_a_fifo_or_device_target_is_written_into_never_replaced(tmp_path: Path) -> None:
    """Guards against ``-o /dev/null`` as root turning the machine's /dev/null into a
    regular file (the rename of a staged file over it): a target that is no regular
    file is written into, and stays what it was. A FIFO stands in for the device."""
    import os
    import stat
    import threading

    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    received: list[str] = []
    reader = threading.Thread(target=lambda: received.append(fifo.read_text("utf-8")))
    reader.start()
    write_files_atomic({fifo: "[]\n", tmp_path / "beside.json": "{}\n"})
    reader.join(timeout=30)
    assert received == ["[]\n"]
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    assert (tmp_path / "beside.json").read_text("utf-8") == "{}\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["beside.json", "out.fifo"]


def test_a_symlinked_target_keeps_its_link(tmp_path: Path) -> None:
    """A results path that is a symbolic link is written at the link's target."""
    real = tmp_path / "real.json"
    real.write_text("old\n", "utf-8")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_files_atomic({link: "new\n"})
    assert link.is_symlink()
    assert real.read_text("utf-8") == "new\n"
