"""The grant scan's content matching: git repositories asked by blob id, plain copies.

Red team 27 (git-objects) granted a bare clone of the suite; these check the matching
itself (tests/harness/test_adversary_grant_git.py runs the attack end to end).
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

import pytest

from benchguard.harness import grant_content, grant_scan
from benchguard.harness.confine import exposure_problems
from harness.helpers import EXAMPLES

GIT_ENV = {"PATH": "/usr/bin:/bin", "HOME": "/nonexistent", "GIT_CONFIG_NOSYSTEM": "1"}


def git(*args: str, cwd: Path | None = None) -> str:
    done = subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args],
        cwd=cwd,
        env=GIT_ENV,
        check=True,
        capture_output=True,
        text=True,
    )
    return done.stdout


def repository(tree: Path, at: Path, *, object_format: str = "sha1") -> Path:
    """A repository at ``at`` whose one commit holds ``tree``'s files."""
    shutil.copytree(tree, at)
    git("init", "-q", f"--object-format={object_format}", str(at))
    git("add", "-A", cwd=at)
    git("commit", "-qm", "suite", cwd=at)
    return at


@pytest.fixture
def tasks(tmp_path: Path) -> Path:
    copy = tmp_path / "tasks"
    shutil.copytree(EXAMPLES / "tasks", copy)
    return copy


@pytest.fixture
def material(tasks: Path) -> grant_content.Material:
    return grant_content.task_material(tasks)


def _scan(grant: Path, material: grant_content.Material) -> grant_scan.Found | None:
    return grant_scan.scan(grant, trees=(), material=material)


def test_blob_ids_are_git_s(tasks: Path, material: grant_content.Material) -> None:
    task = tasks / "sum-numbers" / "task.yaml"
    mine = next(f for f in material.files if f.path == task)
    assert mine.blobs["sha1"] == git("hash-object", str(task)).strip()
    assert mine.sha256 == hashlib.sha256(task.read_bytes()).hexdigest()
    assert all(f.size >= grant_content.MIN_SIZE for f in material.files)
    assert {f.path for f in material.files} >= {p for p in tasks.glob("*/task.yaml")}


def test_a_sha1_bare_clone_of_the_tasks_is_found(
    tmp_path: Path, tasks: Path, material: grant_content.Material
) -> None:
    work = repository(tasks, tmp_path / "suite")
    bare = tmp_path / "grant" / "bench.git"
    git("clone", "-q", "--bare", "--no-local", str(work), str(bare))
    found = _scan(tmp_path / "grant", material)
    assert found is not None and found.path == bare, found
    assert "a git repository holding this batch's task file" in found.kind, found
    assert str(tasks) in found.kind, found
    # A grant inside the repository (its objects/) holds its objects too.
    inside = _scan(bare / "objects", material)
    assert inside is not None and inside.path == bare, inside


def test_packed_objects_are_found(
    tmp_path: Path, tasks: Path, material: grant_content.Material
) -> None:
    work = repository(tasks, tmp_path / "grant" / "suite")
    git("gc", "-q", "--prune=now", cwd=work)
    loose = [p for p in (work / ".git" / "objects").glob("??/*")]
    assert loose == [] and list((work / ".git" / "objects" / "pack").glob("*.pack"))
    # The worktree's task.yaml files are found by name first: hide them.
    for path in work.glob("*/task.yaml"):
        path.unlink()
    found = _scan(tmp_path / "grant", material)
    assert found is not None and found.path == work / ".git", found


def test_a_sha256_repository_and_a_gitfile_are_found(
    tmp_path: Path, tasks: Path, material: grant_content.Material
) -> None:
    work = repository(tasks, tmp_path / "store" / "suite", object_format="sha256")
    linked = tmp_path / "grant" / "linked"
    git("worktree", "add", "-q", str(linked), cwd=work)
    assert (linked / ".git").is_file()
    for path in linked.glob("*/task.yaml"):
        path.unlink()
    found = _scan(tmp_path / "grant", material)
    assert found is not None and found.path == linked / ".git", found
    direct = _scan(work / ".git", material)
    assert direct is not None and direct.path == work / ".git", direct


def test_a_repository_without_the_material_passes(
    tmp_path: Path, material: grant_content.Material
) -> None:
    library = tmp_path / "library"
    library.mkdir()
    (library / "README.md").write_text("A helper library, nothing of the suite.\n", "utf-8")
    (library / "empty").write_text("", "utf-8")  # the empty blob is in every repository
    repository(library, tmp_path / "grant" / "library")
    assert _scan(tmp_path / "grant", material) is None


def test_an_unreadable_repository_is_refused(
    tmp_path: Path, material: grant_content.Material
) -> None:
    library = tmp_path / "library"
    library.mkdir()
    (library / "README.md").write_text("A helper library.\n", "utf-8")
    work = repository(library, tmp_path / "grant" / "library")
    git("config", "core.repositoryformatversion", "99", cwd=work)
    problems = exposure_problems(
        [tmp_path / "grant"],
        [],
        where="agent 'x'",
        fields={tmp_path / "grant": "install"},
        material=material,
    )
    assert problems and "could not be searched" in problems[0], problems
    assert f"a git repository {work / '.git'} git could not check" in problems[0], problems
    assert "repo version" in problems[0], problems


def test_too_many_repositories_fail_closed(
    tmp_path: Path, material: grant_content.Material
) -> None:
    library = tmp_path / "library"
    library.mkdir()
    (library / "README.md").write_text("A helper library.\n", "utf-8")
    for index in range(3):
        repository(library, tmp_path / "grant" / f"r{index}")
    found = grant_scan.scan(
        tmp_path / "grant", trees=(), material=material, bounds=grant_scan.Bounds(repos=2)
    )
    assert found == grant_scan.Found("more than 2 git repositories", None)


def test_a_plain_copy_under_another_name_is_found(
    tmp_path: Path, tasks: Path, material: grant_content.Material
) -> None:
    grant = tmp_path / "grant"
    grant.mkdir()
    original = tasks / "word-count" / "task.yaml"
    data = original.read_bytes()
    # The same size, other bytes: not a copy.
    (grant / "same-size.txt").write_bytes(bytes(reversed(data)))
    assert _scan(grant, material) is None
    (grant / "vendor").mkdir()
    (grant / "vendor" / "notes.txt").write_bytes(data)
    found = _scan(grant, material)
    assert found == grant_scan.Found(
        f"a copy of this batch's task file {original}", grant / "vendor" / "notes.txt"
    )
    # A grant that is the file itself.
    assert _scan(grant / "vendor" / "notes.txt", material) == found


@pytest.mark.parametrize("packed", [False, True], ids=["loose", "packed"])
@pytest.mark.parametrize("object_format", ["sha1", "sha256"])
def test_an_object_directory_on_its_own_is_found(
    tmp_path: Path, tasks: Path, material: grant_content.Material, packed: bool, object_format: str
) -> None:
    """A repository's objects/ copied without HEAD and refs/ (git reads it still, as
    GIT_OBJECT_DIRECTORY): asked as an object directory."""
    work = repository(tasks, tmp_path / "suite", object_format=object_format)
    if packed:
        git("gc", "-q", "--prune=now", cwd=work)
    store = tmp_path / "grant" / "vendor" / "cache"
    shutil.copytree(work / ".git" / "objects", store)
    found = _scan(tmp_path / "grant", material)
    assert found is not None and found.path == store, found
    assert found.kind.startswith("a git object directory holding this batch's task file")
    inside = _scan(store / ("pack" if packed else "info"), material)
    assert inside is not None and inside.path == store, inside
