"""Mid-batch leftovers are credited to every task that could have left them.

With ``-j`` > 1 several runs share the home; crediting a new entry to whichever task
took the last snapshot (the old behaviour) could give a run a fingerprint of its own
concurrent sibling's deliverable (a false flag on an honest repeat), or withhold one
from a different task. These tests drive ``HomeSnapshots`` through interleavings
without threads, so each interleaving is exact.
"""

from __future__ import annotations

from pathlib import Path

from benchguard.detection.models import Rule
from benchguard.harness.confine import Confinement
from benchguard.harness.home import HomeSettings
from benchguard.harness.integrity import HomeSnapshots, inventory_once

DELIVERABLE = "Patched deployment web in namespace payments to drop privileged"


def _snapshots(home: Path, *roots: Path) -> HomeSnapshots:
    home.mkdir(parents=True, exist_ok=True)
    snapshots = HomeSnapshots(home, (), enabled=True, extra_roots=roots)
    snapshots.before_batch()
    return snapshots


def _has_fingerprint(rules: tuple[Rule, ...], entry: str) -> bool:
    return f"prior-run-artifact/{entry}/content" in {r.id for r in rules}


def test_entry_left_while_two_tasks_ran_is_credited_to_both(tmp_path: Path) -> None:
    """Guards against a concurrent repeat of the writer getting its sibling's fingerprint."""
    home = tmp_path / "home"
    snapshots = _snapshots(home)
    snapshots.start_task("opa-fix")
    snapshots.start_task("dns-debug")  # both running now
    (home / "summary.md").write_text(DELIVERABLE + "\n", encoding="utf-8")
    snapshots.finish_task("dns-debug")
    repeat = snapshots.start_task("opa-fix")  # opa-fix#1 still running, could be the writer
    other = snapshots.start_task("log-rotate")
    assert "prior-run-artifact/summary.md/path" in {r.id for r in repeat}
    assert not _has_fingerprint(repeat, "summary.md")
    assert _has_fingerprint(other, "summary.md")


def test_serial_start_finish_credits_the_previous_run_only(tmp_path: Path) -> None:
    home = tmp_path / "home"
    snapshots = _snapshots(home)
    snapshots.start_task("write-notes")
    (home / "notes.md").write_text(DELIVERABLE + "\n", encoding="utf-8")
    snapshots.finish_task("write-notes")
    assert _has_fingerprint(snapshots.start_task("sum-numbers"), "notes.md")
    snapshots.finish_task("sum-numbers")
    assert not _has_fingerprint(snapshots.start_task("write-notes"), "notes.md")


def test_a_run_that_ended_before_the_previous_snapshot_is_not_a_candidate(
    tmp_path: Path,
) -> None:
    """Guards against over-crediting: only runs since the last snapshot could write."""
    home = tmp_path / "home"
    snapshots = _snapshots(home)
    snapshots.start_task("opa-fix")
    snapshots.finish_task("opa-fix")
    snapshots.start_task("dns-debug")
    (home / "summary.md").write_text(DELIVERABLE + "\n", encoding="utf-8")
    snapshots.finish_task("dns-debug")
    # dns-debug left it, so a second opa-fix run reading it by content is flagged.
    assert _has_fingerprint(snapshots.start_task("opa-fix"), "summary.md")


def test_extra_root_entries_are_told_apart_from_home_entries(tmp_path: Path) -> None:
    """Guards against /tmp/report.md inheriting the pre-existing ~/report.md's status."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "report.md").write_text(DELIVERABLE + "\n", encoding="utf-8")
    shared = tmp_path / "shared-tmp"
    shared.mkdir()
    snapshots = _snapshots(home, shared)
    snapshots.start_task("write-report")
    (shared / "report.md").write_text(DELIVERABLE + " (copy)\n", encoding="utf-8")
    snapshots.finish_task("write-report")
    repeat = snapshots.start_task("write-report")
    ids = {r.id for r in repeat}
    assert f"prior-run-artifact/root:{shared}/report.md/path" in ids
    assert f"prior-run-artifact/root:{shared}/report.md/content" not in ids  # its own output
    assert "prior-run-artifact/report.md/content" in ids  # pre-existing in the home


def test_once_serves_the_first_listing_to_every_run(tmp_path: Path) -> None:
    """Guards the fresh-home batch's single inventory: the leftover present before the
    batch is a rule for every later run, and the home is not listed again (an entry
    that appears mid-batch, which no confined fresh-home run can make, is not seen)."""
    home = tmp_path / "home"
    home.mkdir()
    (home / "report.md").write_text(DELIVERABLE + "\n", encoding="utf-8")
    snapshots = HomeSnapshots(home, (), enabled=True, once=True)
    snapshots.before_batch()
    first = snapshots.start_task("write-report")
    snapshots.finish_task("write-report")
    (home / "notes.md").write_text(DELIVERABLE + "\n", encoding="utf-8")
    later = snapshots.start_task("sum-numbers")
    assert later == first
    assert _has_fingerprint(later, "report.md") and not _has_fingerprint(later, "notes.md")


def test_inventory_once_only_for_a_confined_fresh_home() -> None:
    """Guards against a persistent home (or an unconfined batch's fresh one, which the
    kernel does not keep the agent off) losing its listing before every run."""
    assert inventory_once(HomeSettings(mode="fresh"), Confinement(7))
    assert not inventory_once(HomeSettings(mode="persistent"), Confinement(7))
    assert not inventory_once(HomeSettings(mode="fresh"), Confinement(0))
