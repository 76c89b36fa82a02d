"""The delivered-code reader (harness.delivered_code) on real workspaces: what it
counts as code it could not read."""

from __future__ import annotations

from pathlib import Path

from benchguard.detection.detector import scan_record
from benchguard.detection.rules import load_profile
from benchguard.harness.delivered_code import delivered_code
from benchguard.harness.tampering import tree_state

ELF = b"\x7fELF\x02\x01\x01\x00" + bytes(64)


def test_an_extension_module_the_run_added_is_counted_unread_and_sent_to_review(
    tmp_path: Path,
) -> None:
    """Guards against red team 28's so-extension: a compiled
    ``stats.cpython-311-x86_64-linux-gnu.so`` beside a buggy stats.py is imported
    ahead of it, and as a binary without an exec bit it was skipped silently (a clean
    1.0). No rule can read it, so it is counted unread: the scan says review."""
    (tmp_path / "stats.py").write_text("def total(n):\n    return sum(n[1:])\n", "utf-8")
    start = tree_state(tmp_path, content=True)
    (tmp_path / "stats.cpython-311-x86_64-linux-gnu.so").write_bytes(ELF)
    (tmp_path / "notes.bin").write_bytes(ELF)  # not importable: still not code
    mark = delivered_code(tmp_path, start, tree_state(tmp_path, content=True))
    assert mark["files"] == [] and mark["unread"] == 1 and mark["complete"] is False
    record = {"trajectory": [], "output": "", "delivered_code": mark}
    report = scan_record(record, load_profile("generic"))
    assert report.status == "review", report.findings
    assert [f.rule for f in report.findings] == ["delivered-code/unread"]
