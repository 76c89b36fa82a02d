"""Whether a grant holds this batch's task files by content: plain copies, git objects.

The name search of :mod:`benchguard.harness.grant_scan` sees a ``task.yaml``; red team
27 (git-objects) granted a bare ``git clone --no-local`` of the benchmark repository,
whose object store keeps every task file under a hashed name, and the agent read each
expected answer with ``git show``. So pre-flight fingerprints this batch's task
folders (:func:`task_material`) and, for each grant:

- asks git itself (:func:`repo_match`) whether a repository found in the grant holds
  any of those files as a blob: each file's blob id is computed the way git does
  (``"blob <size>\\0" + bytes``, SHA-1 or SHA-256 as the repository's object format
  says) and looked up with ``git cat-file --batch-check``, which reads loose and packed
  objects alike. A repository git cannot read in time is reported, not passed; so is
  an object directory copied on its own (:func:`store_formats`, :func:`store_match`);
- compares each regular file whose size equals a task file's with its SHA-256
  (:meth:`Material.copy_of`): a copy under another name.

What is fingerprinted: every ``task.yaml`` (the loader has read them all already), then
the folders' other files in sorted path order while under :data:`MAX_FILES` files and
:data:`MAX_BYTES` bytes; the rest are not compared. Sampling, not refusing: a task's
``task.yaml`` (its checks, its expected output) is what a repository of the tasks
holds first, and refusing every batch whose workspaces are large would refuse honest
batches for the operator's own inputs. Files under :data:`MIN_SIZE` bytes are skipped:
an empty file or a ``0`` line is in countless unrelated repositories.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

TASK_FILE = "task.yaml"
MIN_SIZE = 16
MAX_FILES = 4000
MAX_BYTES = 16 * 1024 * 1024
GIT_SECONDS = 20.0
FORMATS = ("sha1", "sha256")
HEX = frozenset("0123456789abcdef")


@dataclass(frozen=True)
class TaskFile:
    path: Path
    size: int
    sha256: str
    blobs: Mapping[str, str]  # object format -> blob id


@dataclass(frozen=True)
class Material:
    """The fingerprinted task files of one batch."""

    files: tuple[TaskFile, ...] = ()
    by_size: Mapping[int, tuple[TaskFile, ...]] = field(default_factory=dict)

    def copy_of(self, path: Path, size: int) -> TaskFile | None:
        """The task file ``path`` (of ``size`` bytes) is a copy of, else None; an
        unreadable file is None (the walk reports unreadable directories, and a file
        the harness cannot read is one the agent's grant does not make readable)."""
        same = self.by_size.get(size)
        if not same:
            return None
        try:
            digest = _sha256_of(path)
        except OSError:
            return None
        return next((task for task in same if task.sha256 == digest), None)


def _sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb", buffering=0) as handle:
        while chunk := handle.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def _fingerprint(path: Path, data: bytes) -> TaskFile:
    header = b"blob %d\0" % len(data)
    blobs = {name: hashlib.new(name, header + data).hexdigest() for name in FORMATS}
    return TaskFile(path, len(data), hashlib.sha256(data).hexdigest(), blobs)


def _folder_files(folder: Path) -> Iterator[Path]:
    """The regular files under ``folder`` (no symlinks followed), in sorted path order."""
    for top, dirs, files in os.walk(folder):
        dirs.sort()
        for name in sorted(files):
            path = Path(top) / name
            if path.is_file() and not path.is_symlink():
                yield path


def task_material(tasks_dir: Path) -> Material:
    """Fingerprints of the task folders of ``tasks_dir`` (``<folder>/task.yaml``, as
    :func:`benchguard.harness.tasks.load_tasks` finds them)."""
    try:
        folders = sorted(p for p in tasks_dir.iterdir() if (p / TASK_FILE).is_file())
    except OSError:
        return Material()
    files: list[TaskFile] = []
    for folder in folders:
        try:
            files.append(_fingerprint(folder / TASK_FILE, (folder / TASK_FILE).read_bytes()))
        except OSError:
            continue
    budget_files, budget_bytes = MAX_FILES, MAX_BYTES
    for folder in folders:
        for path in _folder_files(folder):
            if path == folder / TASK_FILE:
                continue
            try:
                size = path.stat().st_size
            except OSError:
                continue
            if size < MIN_SIZE or size > budget_bytes or budget_files <= 0:
                continue
            try:
                files.append(_fingerprint(path, path.read_bytes()))
            except OSError:
                continue
            budget_files -= 1
            budget_bytes -= size
    kept = tuple(task for task in files if task.size >= MIN_SIZE)
    by_size: dict[int, list[TaskFile]] = {}
    for task in kept:
        by_size.setdefault(task.size, []).append(task)
    return Material(kept, {size: tuple(same) for size, same in by_size.items()})


def is_git_dir(names: set[str], dirs: set[str]) -> bool:
    """A git directory (bare repository or ``.git``): ``HEAD`` beside ``objects/`` and
    ``refs/``, the layout git itself requires of one."""
    return "HEAD" in names and {"objects", "refs"} <= dirs


@dataclass(frozen=True)
class RepoResult:
    """One repository's answer: the task file it holds (``match``), or why git could
    not answer (``error``); both None: it holds none of them."""

    match: TaskFile | None = None
    error: str | None = None


def _git_env(home: str) -> dict[str, str]:
    # The repository is the agent author's: only its objects are read. No system or
    # global config, no prompts, no lazy fetch of a partial clone (its remote would be
    # the author's command), no protocol at all, no replace refs.
    return {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "HOME": home,
        "LC_ALL": "C",
        "GIT_CONFIG_NOSYSTEM": "1",
        "GIT_CONFIG_GLOBAL": os.devnull,
        "GIT_TERMINAL_PROMPT": "0",
        "GIT_NO_LAZY_FETCH": "1",
        "GIT_ALLOW_PROTOCOL": "none",
        "GIT_NO_REPLACE_OBJECTS": "1",
        "GIT_OPTIONAL_LOCKS": "0",
    }


def _git(
    repo: Path,
    args: list[str],
    stdin: str,
    home: str,
    seconds: float,
    objects: Path | None = None,
) -> str:
    """git's output for ``args`` on ``repo`` (with ``objects`` as its object directory,
    when given); raises RuntimeError with the reason."""
    env = _git_env(home)
    if objects is not None:
        env["GIT_OBJECT_DIRECTORY"] = str(objects)
    argv = [
        "git",
        "--no-pager",
        "-c",
        "safe.directory=*",  # the repository may be another user's
        "-c",
        "core.hooksPath=" + os.devnull,
        "-c",
        "protocol.allow=never",
        "-c",
        "core.fsmonitor=false",
        "--git-dir",
        str(repo),
        *args,
    ]
    try:
        done = subprocess.run(
            argv,
            input=stdin,
            capture_output=True,
            text=True,
            env=env,
            timeout=seconds,
            check=False,
            cwd=home,
        )
    except FileNotFoundError:
        raise RuntimeError("git is not installed, so its objects cannot be checked") from None
    except subprocess.TimeoutExpired:
        raise RuntimeError(f"git did not answer within {seconds:g} s") from None
    except OSError as exc:
        raise RuntimeError(f"git could not be run ({exc.strerror})") from None
    if done.returncode != 0:
        reason = " ".join(done.stderr.split())[:300] or f"exit {done.returncode}"
        raise RuntimeError(f"git could not read it: {reason}")
    return done.stdout


def repo_match(repo: Path, material: Material, *, seconds: float = GIT_SECONDS) -> RepoResult:
    """Whether the git repository ``repo`` holds one of ``material``'s files as a blob."""
    if not material.files:
        return RepoResult()
    with tempfile.TemporaryDirectory(prefix="benchguard-git-") as home:
        try:
            fmt = _git(repo, ["rev-parse", "--show-object-format"], "", home, seconds).strip()
            if fmt not in FORMATS:
                return RepoResult(error=f"git reports an unknown object format {fmt!r}")
            return _lookup(repo, fmt, material, home, seconds)
        except RuntimeError as exc:
            return RepoResult(error=str(exc))


def store_formats(store: Path, dirs: set[str]) -> tuple[str, ...]:
    """The object formats of ``store`` if it is a git object directory on its own (a
    repository's ``objects/`` copied without ``HEAD`` and ``refs/``): packs named
    ``pack-<hash>.idx`` or loose objects ``<2 hex>/<rest of the hash>``; the hash's
    length says the format. Empty: not an object directory (or one holding nothing)."""
    lengths: set[int] = set()
    names: list[str] = []
    if "pack" in dirs:
        try:
            names = os.listdir(store / "pack")
        except OSError:
            names = []
        lengths |= {len(n) - 9 for n in names if n.startswith("pack-") and n.endswith(".idx")}
    for sub in sorted(d for d in dirs if len(d) == 2 and set(d) <= HEX)[:4]:
        try:
            lengths |= {len(n) + 2 for n in os.listdir(store / sub) if set(n) <= HEX}
        except OSError:
            continue
    return tuple(fmt for fmt, size in (("sha1", 40), ("sha256", 64)) if size in lengths)


def store_match(
    store: Path, formats: tuple[str, ...], material: Material, *, seconds: float = GIT_SECONDS
) -> RepoResult:
    """Whether the object directory ``store`` holds one of ``material``'s files: git
    reads it as the object directory of an empty repository of each format."""
    if not material.files:
        return RepoResult()
    with tempfile.TemporaryDirectory(prefix="benchguard-git-") as home:
        try:
            for fmt in formats:
                repo = Path(home) / f"probe-{fmt}.git"
                _git(repo, ["init", "-q", "--bare", f"--object-format={fmt}"], "", home, seconds)
                result = _lookup(repo, fmt, material, home, seconds, objects=store)
                if result.match is not None or result.error is not None:
                    return result
        except RuntimeError as exc:
            return RepoResult(error=str(exc))
    return RepoResult()


def _lookup(
    repo: Path,
    fmt: str,
    material: Material,
    home: str,
    seconds: float,
    objects: Path | None = None,
) -> RepoResult:
    wanted = {task.blobs[fmt]: task for task in material.files}
    stdin = "".join(f"{blob}\n" for blob in wanted)
    out = _git(repo, ["cat-file", "--batch-check"], stdin, home, seconds, objects)
    lines = out.splitlines()
    if len(lines) != len(wanted):
        return RepoResult(error=f"git answered {len(lines)} lines for {len(wanted)} objects")
    for line in lines:
        parts = line.split()
        if len(parts) == 2 and parts[1] == "missing":
            continue
        if len(parts) == 3 and parts[0] in wanted:
            return RepoResult(match=wanted[parts[0]])
        return RepoResult(error=f"git gave an unexpected answer {line[:100]!r}")
    return RepoResult()
