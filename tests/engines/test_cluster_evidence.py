"""A cluster run's kept home writes travel from the worker to the client as a tar
archive: everything the agent left arrives, links as links, nothing is written outside
the run directory, and what cannot be kept is said on the record."""

from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

from benchguard.harness.home import evidence_dir
from benchguard.harness.runner import Job
from benchguard.harness.tasks import load_tasks
from benchguard.workflows.run_cluster import _place_evidence, _take_evidence

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "tasks"


def _job() -> Job:
    task = next(t for t in load_tasks(EXAMPLES).tasks if t.folder == "write-notes")
    return Job(position=3, task=task, iteration=1)


def test_an_absolute_symlink_in_the_home_keeps_the_other_writes(tmp_path: Path) -> None:
    """Guards against an agent hiding its home writes from a cluster batch with one
    absolute symlink (the whole archive used to be refused, the record saying complete):
    the writes arrive beside it, and the link is kept as the link it was."""
    worker_root, client_run = tmp_path / "worker", tmp_path / "client"
    client_run.mkdir()
    kept = evidence_dir(worker_root, 3, "write-notes", 1)
    kept.mkdir(parents=True)
    os.symlink("/etc/hostname", kept / ".0hide")
    (kept / "notes.md").write_text("copied from an earlier run\n", "utf-8")
    (kept / "sub").mkdir()
    (kept / "sub" / "answer.txt").write_text("137\n", "utf-8")
    packed = _take_evidence(worker_root, _job())
    assert packed is not None

    assert _place_evidence(client_run, packed) == []
    arrived = evidence_dir(client_run, 3, "write-notes", 1)
    assert (arrived / "notes.md").read_text("utf-8") == "copied from an earlier run\n"
    assert (arrived / "sub" / "answer.txt").read_text("utf-8") == "137\n"
    assert os.readlink(arrived / ".0hide") == "/etc/hostname"


def test_a_member_that_would_write_outside_the_run_is_refused_alone(tmp_path: Path) -> None:
    """Guards against an archive writing through a link or above the run directory: that
    member is a problem on the record, the rest is kept."""
    client_run = tmp_path / "client"
    client_run.mkdir()
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        link = tarfile.TarInfo("home-writes/run/out")
        link.type, link.linkname = tarfile.SYMTYPE, str(tmp_path)
        archive.addfile(link)
        for name in ("home-writes/run/out/escaped.txt", "../escaped.txt", "home-writes/run/ok"):
            data = b"x\n"
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    problems = _place_evidence(client_run, buffer.getvalue())
    assert len(problems) == 2, problems
    assert not (tmp_path / "escaped.txt").exists()
    assert (client_run / "home-writes" / "run" / "ok").read_text() == "x\n"
