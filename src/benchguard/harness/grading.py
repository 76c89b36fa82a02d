"""The grading box: a fresh directory where checks run, holding the deliverables as the
thing under test and the task's own grading files, and nothing else the agent placed.

Built after the agent has ended, for one run (:func:`build_box`):

- ``pristine/``: a copy of the agent's workspace (regular files, directories, and
  symlinks that stay inside the copy; a link out of it, a FIFO, a socket or a device
  is not copied), then the task's declared ``grading_files`` copied over it **from the
  task folder**: whatever the agent left at a grading path (an edited test, a
  deleted one, a symlink in its place or above it, a shadowing ``test_x.so`` or
  ``__pycache__`` beside a grading file) is removed first. Files the task declares as
  the grader's own output (``grader_outputs``) are removed, so only the grader can
  write them. Then, with everything placed, every symlink the agent left is resolved
  by the kernel (``open(O_PATH)``, compared by (device, inode)): one that reaches a
  grading file or folder is removed and reported (a ``grading-link`` tampering event:
  ``total.txt -> expected/total.txt`` would otherwise read the task's expected output
  as the deliverable), and one that resolves to nothing is removed too (it could only
  ever reach something a check creates, such as a grader output);
- ``run-N/``: one fresh copy of ``pristine/`` per command check (so nothing one check
  runs can change what the next one sees), beside a report directory outside that
  copy, and an empty home;
- ``outputs/``: the grader outputs the command checks wrote, read by the file checks
  that name them.

Each command check runs with the copy as its fixed working directory, a clean
environment (no workspace on ``PATH`` or ``PYTHONPATH``, ``PYTHONSAFEPATH=1``; no
``__pycache__`` and no sourceless ``.pyc``/``.pyo`` of the workspace is copied, so
planted bytecode is never read (the sourceless files are listed with the hook files); the
bytecode cache is not moved with ``PYTHONPYCACHEPREFIX``, which would leave the
standard library and pytest uncached too: 4x the check's time). A pytest check
runs with its hooks off: ``-c /dev/null`` (no ini file from the copy), ``--noconftest``,
``-p no:cacheprovider``, plugin autoloading disabled, ``--rootdir`` the copy,
``--import-mode=append`` (the standard library and installed packages win over any
module in the copy), only the modules its tests import served from the copy, and only
after pytest is imported (:mod:`benchguard.harness.deliverable_imports`), and its JUnit report written to the report directory
(:mod:`benchguard.harness.junit` reads it). The grader never imports anything from the
workspace: a ``conftest.py``, ``sitecustomize.py``, ``usercustomize.py`` or ``.pth`` file
left there is inert (they are listed for review, :func:`hook_files`).

A pytest check also loads the harness's own plugin (``-p`` :data:`STREAM_PLUGIN`, from
the harness's install, never the workspace), which streams each result over a pipe the
harness reads while pytest runs; a pass needs the stream, the exit code and the JUnit
report to agree (:mod:`benchguard.harness.result_stream`). A deliverable that rewrites
the report from ``atexit``, forces exit 0, or writes fake lines beside pytest's own
earns nothing, and the check records a ``grader-report-forged`` tampering event.

What it cannot do: code of the deliverable runs inside the test process (it is the
thing under test) and shares the plugin's trust domain, so a deliverable written to
emulate the whole reporter protocol from import time (a plausible stream, an agreeing
report, then exit 0, before any real result) is not told apart from pytest; that code
is in the deliverable, for review. An operator who must not rely on review grades with
checks that run the deliverable as a subprocess or read its outputs (docs/grading.md).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import os
import shutil
import stat
import sys
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchguard.harness.box_disk import open_corner
from benchguard.harness.check_programs import GradingPaths, PytestRun, normalise
from benchguard.harness.deliverable_imports import imported_names
from benchguard.harness.disk_budget import RunDisk, walked_usage
from benchguard.harness.grader_privacy import NONDUMPABLE
from benchguard.harness.workspace import remove_tree

BOX_PREFIX = "bg-grade-"
# Bounds on the copy: past these the run's checks fail (fail closed), with the reason.
MAX_BOX_ENTRIES = 20_000
MAX_BOX_BYTES = 1 << 30
# Directory levels copied into the box (see _copy_tree).
MAX_BOX_DEPTH = 64
# Names a Python tool loads as code on its own when they sit on its path or in its
# rootdir; never loaded by the grader, listed on the record.
HOOK_NAMES = ("conftest.py", "sitecustomize.py", "usercustomize.py")
HOOK_SUFFIXES = (".pth",)
# Compiled Python the box never copies (red team 27: a sourceless stats/__init__.pyc
# holding an always-equal __eq__ was imported ahead of the buggy stats.py, and no
# reader of source sees bytecode). Python rebuilds what it needs from the source.
BYTECODE_SUFFIXES = (".pyc", ".pyo")
MAX_LISTED_HOOKS = 100
# The one program the box runs for a pytest check. pytest is imported first, with
# nothing of the workspace reachable; then a finder is added at the end of sys.meta_path
# (installed modules win) that serves from the box's copy only the top-level names the
# tests import (harness.deliverable_imports): a module there that something merely
# probes for (pickle probes for Jython's ``org``) is never found, so it never runs.
# First of all it makes itself non-dumpable (harness.grader_privacy), so a deliverable
# the tests run as a child cannot read or write pytest's memory, environment or fds.
PYTEST_BOOTSTRAP = (
    NONDUMPABLE
    + """\
import sys
root, names, args = sys.argv[1], frozenset(sys.argv[2].split(",")) - {""}, sys.argv[3:]
import importlib.machinery
import pytest
class Deliverables:
    @staticmethod
    def find_spec(name, path=None, target=None):
        if path is None and name in names:
            return importlib.machinery.PathFinder.find_spec(name, [root])
        return None
sys.meta_path.append(Deliverables)
sys.exit(pytest.main(args))
"""
)
JUNIT_FILE = "junit.xml"
STREAM_PLUGIN = "benchguard.harness.pytest_stream"
BYTECODE_CACHE = "__pycache__"
# The system's own programs, then the interpreter's: never a directory the agent wrote.
CHECK_PATH = os.pathsep.join(
    dict.fromkeys([os.path.dirname(sys.executable), "/usr/local/bin", "/usr/bin", "/bin"])
)


class BoxError(RuntimeError):
    """The box could not be built (a bound, an unreadable workspace); the reason."""


@dataclass(frozen=True)
class Box:
    root: Path
    pristine: Path
    outputs: Path
    # What the copy left out: links out of the workspace, and special files (relative
    # paths), so a check naming one can say why it is absent.
    links_out: frozenset[str] = frozenset()
    special: frozenset[str] = frozenset()
    # Agent links removed after the grading files were placed: those reaching a grading
    # file or folder (tampering), and those resolving to nothing.
    grading_links: frozenset[str] = frozenset()
    dangling: frozenset[str] = frozenset()
    # (st_dev, st_ino) of every grading file and folder placed in ``pristine``: no file
    # check of a deliverable may read one of these.
    grading_identities: frozenset[tuple[int, int]] = frozenset()
    grading_files: tuple[str, ...] = ()
    # Workspace files left out because they are protected files (hard links).
    excluded: frozenset[str] = frozenset()
    # Workspace entries another process changed after the run's processes were dead
    # (they differ from ``delivered``): not copied, not graded.
    foreign: frozenset[str] = frozenset()
    # Compiled Python files of the workspace (``*.pyc``, ``*.pyo`` outside a cache
    # directory): never copied, so never imported by a check.
    bytecode: frozenset[str] = frozenset()

    @functools.cached_property
    def pristine_usage(self) -> int | None:
        """Bytes ``pristine`` holds (harness.disk_budget.walked_usage), measured once,
        when the first check with a disk budget opens its corner (before any check has
        run): every corner is sized from it (harness.box_disk). None past the walk's
        bound. A box graded without a disk budget never walks."""
        return walked_usage(self.pristine)

    def remove(self) -> list[str]:
        return remove_tree(self.root)


@dataclass(frozen=True)
class CheckRun:
    """One command check's corner of the box."""

    root: Path
    work: Path
    reports: Path
    home: Path
    # The corner's disk budget (harness.box_disk): a tmpfs, or the watchdog's measure.
    disk: RunDisk | None = None

    def release(self) -> str | None:
        """Unmount the corner's tmpfs (if any) once the check is done; why not, or None."""
        return None if self.disk is None else self.disk.release()

    @property
    def junit(self) -> Path:
        return self.reports / JUNIT_FILE


def build_box(
    workspace: Path,
    *,
    task_dir: Path,
    grading_files: Sequence[str] = (),
    grader_outputs: Sequence[str] = (),
    exclude: Sequence[str] = (),
    delivered: Mapping[str, str | None] | None = None,
) -> Box:
    """A fresh box for one run's checks (see the module doc); raises :class:`BoxError`.
    ``exclude``: workspace files (relative paths) never copied (protected files the
    agent hard-linked there, harness.tampering). ``delivered``: the workspace as it was
    when the run's processes were all dead (relative path -> what it held, None when
    not digested): a file whose copy differs, or that was not there, was changed by
    another process since and is not graded (:attr:`Box.foreign`)."""
    root = Path(tempfile.mkdtemp(prefix=BOX_PREFIX)).resolve()
    try:
        pristine, outputs = root / "pristine", root / "outputs"
        outputs.mkdir()
        foreign: list[str] = []
        bytecode: list[str] = []
        links_out, special, links = _copy_tree(
            workspace, pristine, frozenset(exclude), delivered, foreign, bytecode
        )
        for entry in grading_files:
            _place_grading(task_dir, pristine, entry)
        for entry in grader_outputs:
            clean = normalise(entry)
            if clean is not None:
                _clear(pristine, clean)
        identities = grading_identities(pristine, grading_files)
        reaching, dangling = drop_links(pristine, links, identities, grading_files)
        return Box(
            root,
            pristine,
            outputs,
            frozenset(links_out),
            frozenset(special),
            frozenset(reaching),
            frozenset(dangling),
            identities,
            tuple(grading_files),
            frozenset(exclude),
            frozenset(foreign),
            frozenset(bytecode),
        )
    except BaseException:
        remove_tree(root)
        raise


def new_check_run(box: Box, index: int, disk_budget: int | None = None) -> CheckRun:
    """A fresh copy of the box's pristine tree for command check ``index``; with
    ``disk_budget``, in a corner bounded to the copy plus that budget (harness.box_disk).
    The caller releases it (:meth:`CheckRun.release`) once the check is done."""
    root = box.root / f"run-{index}"
    root.mkdir()
    disk = None if disk_budget is None else open_corner(root, box.pristine_usage, disk_budget)
    run = CheckRun(root, root / "work", root / "reports", root / "home", disk)
    try:
        _, _, links = _copy_tree(box.pristine, run.work)
        # The copy has the pristine tree's shape, so its links resolve as there; resolved
        # again all the same, so the rule holds for the tree the command really runs in.
        drop_links(
            run.work, links, grading_identities(run.work, box.grading_files), box.grading_files
        )
        for path in (run.reports, run.home):
            path.mkdir()
    except BaseException:
        run.release()
        raise
    return run


def read_only_grading(run: CheckRun, box: Box, grader_outputs: Sequence[str]) -> tuple[Path, ...]:
    """The grading files and folders in this check's copy, which a sandboxed check gets
    bound read-only over its writable copy: whatever tool the check runs, the kernel
    refuses a write onto the grader (EROFS) and a rename or removal of one (EBUSY, a
    mount point), where the static reader of check commands only knows the tools it
    models. A grading folder that holds a grader output stays writable so the grader
    can write its verdict there, and what it holds beside the output is bound in its
    place (tests/ with tests/reward.txt: each other entry of tests/)."""
    outputs = [o for o in (normalise(o) for o in grader_outputs) if o is not None]
    paths: list[Path] = []
    pending = [name for name in (normalise(e) for e in box.grading_files) if name is not None]
    while pending:
        name = pending.pop()
        path = run.work / name
        if path.is_symlink() or not (path.is_file() or path.is_dir()):
            continue
        if not any(o == name or o.startswith(name + "/") for o in outputs):
            paths.append(path)
        elif path.is_dir() and name not in outputs:
            pending.extend(f"{name}/{child}" for child in sorted(os.listdir(path)))
    return tuple(sorted(paths))


def harvest_outputs(run: CheckRun, box: Box, grader_outputs: Sequence[str]) -> None:
    """Keep the grader outputs this check wrote (regular files only) for file checks."""
    for entry in grader_outputs:
        clean = normalise(entry)
        if clean is None:
            continue
        source = run.work / clean
        try:
            info = os.lstat(source)
        except OSError:
            continue
        if not stat.S_ISREG(info.st_mode) or not _inside(source, run.work):
            continue
        target = box.outputs / clean
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source, target, follow_symlinks=False)


def pytest_argv(run: PytestRun, check_run: CheckRun) -> list[str]:
    """The argv of a pytest check inside the box: the grader's interpreter, hooks off."""
    work = str(check_run.work)
    return [
        sys.executable,
        "-c",
        PYTEST_BOOTSTRAP,
        work,
        ",".join(imported_names(check_run.work, run.operands)),
        "-c",
        os.devnull,
        f"--rootdir={work}",
        "--noconftest",
        "-p",
        "no:cacheprovider",
        "--import-mode=append",
        f"--junitxml={check_run.junit}",
        "-o",
        "junit_family=xunit2",
        f"--basetemp={check_run.reports / 'tmp'}",
        # The harness's result stream (benchguard.harness.pytest_stream), loaded by
        # name from the harness's own install before anything is collected.
        "-p",
        STREAM_PLUGIN,
        *run.options,
        "--",
        *run.operands,
    ]


def pytest_environment(check_run: CheckRun) -> dict[str, str]:
    """What a pytest check adds to the clean environment: autoload off and pytest's own
    installation (never the workspace)."""
    return {
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTHONPATH": os.pathsep.join(str(p) for p in pytest_paths()),
    }


def pytest_paths() -> tuple[Path, ...]:
    """The directories holding pytest and what it imports, and the one holding the
    harness's stream plugin (the harness's install; never the workspace)."""
    import _pytest
    import iniconfig
    import packaging
    import pluggy
    import pytest

    import benchguard

    modules = (pytest, _pytest, pluggy, iniconfig, packaging, benchguard)
    dirs = {Path(str(m.__file__)).resolve().parent.parent for m in modules}
    return tuple(sorted(dirs))


def check_environment(home: Path) -> dict[str, str]:
    """Every check's environment: nothing of the harness's, Python isolated from the
    working directory."""
    env = {
        "PATH": CHECK_PATH,
        "HOME": str(home),
        "LC_ALL": "C.UTF-8",
        "PYTHONSAFEPATH": "1",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    return env


def hook_files(workspace: Path) -> list[str]:
    """Hook files left in the workspace (relative paths, sorted, bounded): names Python
    tools load as code on their own, and compiled bytecode outside a cache directory
    (importable without its source). The grader loads none of them; listed for review."""
    found: list[str] = []
    for folder, dirs, files in os.walk(workspace):
        dirs.sort()
        for name in sorted(files):
            cached = os.path.basename(folder) == BYTECODE_CACHE
            if name in HOOK_NAMES or name.endswith(
                HOOK_SUFFIXES + (() if cached else BYTECODE_SUFFIXES)
            ):
                found.append(os.path.relpath(os.path.join(folder, name), workspace))
                if len(found) >= MAX_LISTED_HOOKS:
                    return found
    return found


# --- copying --------------------------------------------------------------------------


def grading_identities(root: Path, grading_files: Sequence[str]) -> frozenset[tuple[int, int]]:
    """(st_dev, st_ino) of every grading file and folder placed under ``root`` (links in
    a grading folder are the task's own and are not followed)."""
    found: set[tuple[int, int]] = set()
    for entry in grading_files:
        clean = normalise(entry)
        if clean is None:
            continue
        top = root / clean
        try:
            info = os.lstat(top)
        except OSError:
            continue
        found.add((info.st_dev, info.st_ino))
        if stat.S_ISDIR(info.st_mode):
            for folder, dirs, files in os.walk(top):
                for name in dirs + files:
                    with contextlib.suppress(OSError):
                        sub = os.lstat(os.path.join(folder, name))
                        found.add((sub.st_dev, sub.st_ino))
    return frozenset(found)


def drop_links(
    root: Path,
    links: Sequence[str],
    identities: frozenset[tuple[int, int]],
    grading_files: Sequence[str],
) -> tuple[list[str], list[str]]:
    """Remove the agent's links under ``root`` (``links``; those at a grading path are
    the task's own, placed from its folder) that the kernel resolves to a grading file
    or folder (``identities``), or to nothing; ``(reaching, dangling)``, sorted.

    Every link is resolved on the whole tree as placed before any is removed: removing
    a link only makes names through it resolve to nothing, never to something else."""
    reaching: list[str] = []
    dangling: list[str] = []
    placed = GradingPaths(tuple(grading_files))
    for rel in sorted(links):
        if placed.covers(rel):
            continue
        try:
            if not stat.S_ISLNK(os.lstat(root / rel).st_mode):
                continue  # replaced by a grading file or folder, or above one
        except OSError:
            continue
        try:
            fd = os.open(root / rel, os.O_PATH | os.O_CLOEXEC)
        except OSError:
            dangling.append(rel)
            continue
        try:
            info = os.fstat(fd)
        finally:
            os.close(fd)
        if (info.st_dev, info.st_ino) in identities:
            reaching.append(rel)
    for rel in reaching + dangling:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(root / rel)
    return reaching, dangling


def _copy_tree(
    source: Path,
    target: Path,
    exclude: frozenset[str] = frozenset(),
    delivered: Mapping[str, str | None] | None = None,
    foreign: list[str] | None = None,
    bytecode: list[str] | None = None,
) -> tuple[list[str], list[str], list[str]]:
    """Copy ``source`` to ``target``: files, directories, links that stay inside; the
    links out and the special files left behind, and the links copied (relative
    paths). A directory deeper
    than :data:`MAX_BOX_DEPTH` is left out too and listed with the special files: an
    agent can nest directories past any path length (os.walk recurses, and the kernel
    refuses long paths), and no check reads that deep."""
    links_out: list[str] = []
    special: list[str] = []
    links: list[str] = []
    entries = 0
    total = 0
    target.mkdir(mode=0o755)
    stack: list[tuple[str, int]] = [(".", 0)]
    while stack:
        rel, depth = stack.pop()
        folder = source if rel == "." else source / rel
        dest = target if rel == "." else target / rel
        with os.scandir(folder) as listing:
            names = sorted(entry.name for entry in listing)
        below: list[str] = []
        for name in names:
            entries += 1
            if entries > MAX_BOX_ENTRIES:
                raise BoxError(f"the workspace holds more than {MAX_BOX_ENTRIES} entries")
            src = os.path.join(folder, name)
            dst = dest / name
            shown = os.path.normpath(os.path.join(rel, name))
            info = os.lstat(src)
            if stat.S_ISLNK(info.st_mode):
                link = os.readlink(src)
                if not _as_delivered(delivered, shown, "l:" + link, foreign):
                    continue
                if _link_stays_inside(Path(folder), link, source):
                    os.symlink(link, dst)
                    links.append(shown)
                else:
                    links_out.append(shown)
            elif stat.S_ISDIR(info.st_mode):
                if name == BYTECODE_CACHE:
                    # Cached bytecode is never copied: Python (and pytest's assertion
                    # rewriter) would load a planted one instead of the source.
                    continue
                if depth + 1 > MAX_BOX_DEPTH:
                    special.append(shown)
                    continue
                dst.mkdir(mode=0o755)
                below.append(shown)
            elif stat.S_ISREG(info.st_mode):
                if shown in exclude:
                    continue
                if name.endswith(BYTECODE_SUFFIXES):
                    # Sourceless bytecode is importable (a package's __init__.pyc wins
                    # over a module of the same name) and no reader of source sees it.
                    if bytecode is not None:
                        bytecode.append(shown)
                    continue
                total += info.st_size
                if total > MAX_BOX_BYTES:
                    raise BoxError(f"the workspace holds more than {MAX_BOX_BYTES} bytes")
                shutil.copyfile(src, dst, follow_symlinks=False)
                os.chmod(dst, 0o755 if info.st_mode & 0o111 else 0o644)
                if delivered is not None:
                    # The copy is the box's own: what it holds is what is graded.
                    held = f"f{info.st_mode & 0o111:o}:{_digest(dst)}"
                    if not _as_delivered(delivered, shown, held, foreign):
                        os.unlink(dst)
            else:
                special.append(shown)
        # Sorted order: the stack pops the first directory first.
        stack.extend((sub, depth + 1) for sub in reversed(below))
    return links_out, special, links


def _as_delivered(
    delivered: Mapping[str, str | None] | None,
    shown: str,
    held: str,
    foreign: list[str] | None,
) -> bool:
    """Whether an entry holding ``held`` is as the run delivered it (True when nothing
    is known: no ``delivered``, or that entry was not digested)."""
    if delivered is None:
        return True
    if shown in delivered and delivered[shown] in (None, held):
        return True
    if foreign is not None:
        foreign.append(shown)
    return False


def _digest(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def _link_stays_inside(folder: Path, link: str, root: Path) -> bool:
    if os.path.isabs(link):
        return False
    target = os.path.normpath(os.path.join(folder, link))
    return _inside(Path(target), root)


def _inside(path: Path, root: Path) -> bool:
    return os.path.normpath(path).startswith(os.path.normpath(root) + os.sep)


def _clear(root: Path, rel: str) -> None:
    """Remove whatever the agent left at ``rel`` or at a non-directory above it."""
    current = root
    for part in Path(rel).parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()
    target = root / rel
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        remove_tree(target)


def _place_grading(task_dir: Path, pristine: Path, entry: str) -> None:
    clean = normalise(entry)
    if clean is None:
        raise BoxError(f"grading file {entry!r} leaves the task folder")
    source = task_dir / clean
    _clear(pristine, clean)
    target = pristine / clean
    target.parent.mkdir(parents=True, exist_ok=True)
    if source.is_dir():
        shutil.copytree(source, target, symlinks=True)
    else:
        shutil.copyfile(source, target)
        os.chmod(target, 0o755 if os.stat(source).st_mode & 0o111 else 0o644)
        _remove_shadows(target)


def _remove_shadows(grading_file: Path) -> None:
    """Drop what could be imported in place of a grading module: a sibling of the same
    stem with another suffix (``test_x.so``, ``test_x.pyc``), a package of that name,
    and the sibling bytecode cache."""
    if grading_file.suffix != ".py":
        return
    stem = grading_file.stem
    for sibling in grading_file.parent.iterdir():
        same_stem = sibling.name == stem or sibling.name.startswith(stem + ".")
        if sibling != grading_file and (same_stem or sibling.name == "__pycache__"):
            _clear(grading_file.parent, sibling.name)
