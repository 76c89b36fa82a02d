"""A truncated or corrupt .eval is reported as a damaged zip, not as "not an Inspect
.eval log"; named it is bad input (2), walked an input gap (3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchguard.importers.registry import UnknownFormatError, detect_format
from benchguard.importers.transcript import UnreadableLogError
from cli.helpers import REPO, exited, invoke

LOG = REPO / "examples" / "logs" / "inspect_fix_login.eval"


def _truncated(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "cut.eval"
    data = LOG.read_bytes()
    path.write_bytes(data[: len(data) // 2])  # an unfinished copy: no central directory
    return path


def test_detection_names_a_damaged_zip(tmp_path: Path) -> None:
    for content in (b"PK\x03\x04garbage", _truncated(tmp_path).read_bytes()):
        path = tmp_path / "x.eval"
        path.write_bytes(content)
        with pytest.raises(UnreadableLogError) as caught:
            detect_format(path)
        assert not isinstance(caught.value, UnknownFormatError)
        assert "corrupt or truncated zip archive" in str(caught.value)


def test_scan_of_a_truncated_eval_named_and_walked(tmp_path: Path) -> None:
    path = _truncated(tmp_path / "logs")
    named = invoke("scan", str(path))
    exited(named, 2)
    assert f"{path}: a corrupt or truncated zip archive" in named.stderr
    assert "not an Inspect .eval log" not in named.output
    walked = invoke("scan", str(tmp_path / "logs"))
    exited(walked, 3)
    assert "corrupt or truncated zip archive" in walked.stdout  # named in the summary
