"""A fresh home per run: the operator's ``--home`` tree as a copy-on-write layer.

In the default ``fresh`` mode each run's agent sees the operator's home at its usual
path, but as an overlay (overlayfs) mounted in a mount namespace of the agent's own by
the launcher (:mod:`benchguard.harness.confine_exec`): the operator's tree is the
read-only lower layer, and everything the run writes, changes or deletes lands in the
run's own upper layer inside its scratch directory. No other run, and not the
operator's tree, ever sees those writes, so no run can answer from an earlier run's
leftovers. Where overlayfs cannot be mounted (pre-flight probes it once per batch), the
home is a copy in the run's scratch, bound over the home path the same way.

After the run, what it wrote to its home is kept under the batch's own directory
(``home-writes/<position>-<folder>-<iteration>/``) as evidence for review, bounded
(:data:`MAX_KEPT_BYTES`), unless the operator asked to discard it; the record lists it
(``home_writes``). The ``persistent`` mode keeps the old behaviour: the home is the
operator's tree itself, read-write, persisting across runs, and the per-task
inventory's rules catch a later run reading what an earlier one left.

A home larger than :data:`MAX_HOME_BYTES` or with more than :data:`MAX_HOME_ENTRIES`
entries is refused at pre-flight, with its size and the limit.
"""

from __future__ import annotations

import contextlib
import errno
import os
import shutil
import stat
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from benchguard.errors import BadInputError
from benchguard.harness.beneath import open_beneath
from benchguard.harness.check_programs import normalise
from benchguard.harness.confine_exec import COPY_DIR, FALLBACK_MARKER
from benchguard.harness.tasks import Task
from benchguard.record.filenames import FileName

HomeMode = Literal["fresh", "persistent"]
HOME_MODES: tuple[HomeMode, ...] = ("fresh", "persistent")
# Past either, a per-run copy (and a copy-up-heavy overlay) would dominate the run.
MAX_HOME_BYTES = 512 << 20
MAX_HOME_ENTRIES = 50_000
# What one run's kept home writes may hold; past it the rest is listed, not copied.
MAX_KEPT_BYTES = 64 << 20
# Names listed on the record (kept, deleted); the rest are counted.
MAX_LISTED = 200
PROBE_TIMEOUT_S = 20.0


class HomeError(BadInputError, ValueError):
    """The home cannot be made fresh per run; the message names the home and why."""


@dataclass(frozen=True)
class HomeSettings:
    """How each run's home is made; ``keep_writes`` keeps its writes as evidence."""

    mode: HomeMode = "persistent"
    keep_writes: bool = True
    # "overlay" or "copy", found by pre-flight's probe; unused in persistent mode.
    method: Literal["overlay", "copy"] = "overlay"

    @property
    def fresh(self) -> bool:
        return self.mode == "fresh"


@dataclass(frozen=True)
class RunHome:
    """One run's home: where the agent sees it (``target``) and the run's layers."""

    target: Path
    # Overlay: the upper and work directories; copy: the copy bound over the target.
    upper: Path
    work: Path | None

    def as_made(self) -> tuple[RunHome, str | None]:
        """The home as the launcher really made it: the overlay, or the copy it fell
        back to (with its note) when the kernel refused the overlay."""
        if self.work is None:
            return self, None
        layers = self.upper.parent
        marker = layers / FALLBACK_MARKER
        if not marker.exists():
            return self, None
        note = marker.read_text("utf-8", errors="replace").strip()
        return RunHome(target=self.target, upper=layers / COPY_DIR, work=None), note

    def launcher_spec(self) -> dict[str, str]:
        """The launcher's ``home`` entry."""
        if self.work is None:
            return {"target": str(self.target), "copy": str(self.upper)}
        return {"target": str(self.target), "upper": str(self.upper), "work": str(self.work)}

    def locate(self, relative: str) -> tuple[HomeEntry, Path | None]:
        """Which layer holds the run's version of ``~/relative`` after the run, found
        without following any link: ``("file", layer root)`` for a regular file (open it
        with :func:`open_in_layer`), ``("link", None)`` when a component of the name is
        a symlink in the layer that provides it (the agent's ``~/out -> /anywhere``;
        read as outside the home, the rule persistent mode applies to a link leaving
        it), ``("absent", None)`` when the run deleted it or it never existed, and
        ``("other", None)`` for a directory, FIFO or device.

        Overlay: at each component the upper layer's entry wins (a whiteout deletes, an
        opaque directory hides the lower's below it); else the operator's (lower). A
        copy is one layer."""
        parts = [part for part in Path(relative).parts if part not in ("", ".")]
        if not parts or ".." in parts or Path(relative).is_absolute():
            return "link", None
        overlay = self.work is not None
        upper: Path | None = self.upper
        lower: Path | None = self.target if overlay else None
        for index, part in enumerate(parts):
            last = index == len(parts) - 1
            upper_info = _lstat(upper / part) if upper is not None else None
            if upper_info is not None:
                if overlay and stat.S_ISCHR(upper_info.st_mode) and upper_info.st_rdev == 0:
                    return "absent", None  # a whiteout: deleted by the run
                provider, info = self.upper, upper_info
            else:
                lower_info = _lstat(lower / part) if lower is not None else None
                if lower_info is None:
                    return "absent", None
                provider, info = self.target, lower_info
            if stat.S_ISLNK(info.st_mode):
                return "link", None
            if last:
                return ("file", provider) if stat.S_ISREG(info.st_mode) else ("other", None)
            if not stat.S_ISDIR(info.st_mode):
                return "absent", None
            if upper_info is not None:
                assert upper is not None
                below = upper / part
                lower_below = _lstat(lower / part) if lower is not None else None
                keep_lower = (
                    lower is not None
                    and lower_below is not None
                    and stat.S_ISDIR(lower_below.st_mode)
                    and not _opaque(below)
                )
                upper, lower = below, (lower / part if keep_lower and lower else None)
            else:
                upper, lower = None, (lower / part if lower is not None else None)
        return "absent", None


HomeEntry = Literal["file", "link", "absent", "other"]
# Overlayfs marks a directory the run recreated (its lower contents hidden) with this
# xattr: trusted.* when mounted by root, user.* for an unprivileged (userxattr) mount.
OPAQUE_XATTRS = ("trusted.overlay.opaque", "user.overlay.opaque")


def _lstat(path: Path) -> os.stat_result | None:
    try:
        return os.lstat(path)
    except OSError:
        return None


def _opaque(directory: Path) -> bool:
    for name in OPAQUE_XATTRS:
        try:
            if os.getxattr(directory, name, follow_symlinks=False) == b"y":
                return True
        except OSError:
            continue
    return False


def open_in_layer(layer: Path, relative: str) -> int:
    """``relative`` opened for reading beneath ``layer`` with no symlink anywhere on the
    way (the kernel refuses one: ``ELOOP``), so what :meth:`RunHome.locate` found is what
    is read, even if the tree changed since."""
    return open_beneath(layer, relative, links=False)


def measure(home: Path) -> tuple[int, int]:
    """``(bytes, entries)`` under ``home``, stopping just past either limit."""
    total = entries = 0
    for folder, dirs, files in os.walk(home):
        for name in dirs + files:
            entries += 1
            try:
                total += os.lstat(os.path.join(folder, name)).st_size
            except OSError:
                continue
        if total > MAX_HOME_BYTES or entries > MAX_HOME_ENTRIES:
            break
    return total, entries


def check_size(home: Path, *, source: str) -> None:
    """Raise :class:`HomeError` when ``home`` is too large to be made fresh per run."""
    total, entries = measure(home)
    if total > MAX_HOME_BYTES or entries > MAX_HOME_ENTRIES:
        raise HomeError(
            f"{source} {home}: too large for a fresh home per run (at least "
            f"{total / (1 << 20):.1f} MiB in {entries} entries; the limit is "
            f"{MAX_HOME_BYTES >> 20} MiB and {MAX_HOME_ENTRIES} entries); trim it, or pass "
            "--home-mode persistent"
        )


def make_run_home(settings: HomeSettings, home: Path, scratch_root: Path) -> RunHome | None:
    """The run's home layers in its scratch (None in persistent mode)."""
    if not settings.fresh:
        return None
    layers = scratch_root / "home-layers"
    layers.mkdir(mode=0o700)
    if settings.method == "copy":
        copy = layers / "copy"
        shutil.copytree(home, copy, symlinks=True)
        return RunHome(target=home, upper=copy, work=None)
    upper, work = layers / "upper", layers / "work"
    upper.mkdir(mode=0o755)
    work.mkdir(mode=0o700)
    return RunHome(target=home, upper=upper, work=work)


@dataclass
class KeptWrites:
    """What a run wrote to its home, as kept (the record's ``home_writes``)."""

    kept: str | None = None
    # How the home was made: "overlay", or "copy" (by choice, or the launcher's fallback).
    method: str = "overlay"
    written: list[FileName] = field(default_factory=list)
    deleted: list[FileName] = field(default_factory=list)
    files: int = 0
    bytes: int = 0
    complete: bool = True
    problems: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "kept": self.kept,
            "files": self.files,
            "bytes": self.bytes,
            "written": [name.to_json() for name in self.written[:MAX_LISTED]],
            "deleted": [name.to_json() for name in self.deleted[:MAX_LISTED]],
            "listed_complete": len(self.written) <= MAX_LISTED and len(self.deleted) <= MAX_LISTED,
            "complete": self.complete,
            "problems": self.problems,
        }


def keep_writes(run_home: RunHome, dest: Path | None) -> KeptWrites:
    """Copy the run's home writes (the overlay's upper layer; for a copy, the files that
    differ from the operator's) into ``dest`` (None: list only, keep nothing). Never
    raises: a failure is a problem on the result, which is then incomplete."""
    kept = KeptWrites()
    try:
        run_home, note = run_home.as_made()
        kept.method = "overlay" if run_home.work is not None else "copy"
        if note:
            kept.problems.append(note)
        _walk_writes(run_home, dest, kept)
        if dest is not None and dest.exists():
            # Relative to the batch's directory (dest is home-writes/<run> inside it).
            kept.kept = os.path.relpath(dest, dest.parent.parent)
    except Exception as exc:  # one run's evidence must never fail the batch
        kept.complete = False
        kept.problems.append(f"home writes not kept: {type(exc).__name__}: {exc}")
    return kept


def _walk_writes(run_home: RunHome, dest: Path | None, kept: KeptWrites) -> None:
    root = run_home.upper
    overlay = run_home.work is not None
    for folder, dirs, files in os.walk(os.fsencode(root)):
        dirs.sort()
        relative_dir = os.path.relpath(folder, os.fsencode(root))
        for name in sorted(dirs + files):
            path = os.path.join(folder, name)
            relative = os.path.normpath(os.path.join(relative_dir, name))
            info = os.lstat(path)
            original = os.path.join(os.fsencode(run_home.target), relative)
            if overlay and stat.S_ISCHR(info.st_mode) and info.st_rdev == 0:
                kept.deleted.append(FileName.from_bytes(relative))
                continue
            if stat.S_ISDIR(info.st_mode):
                if dest is not None:
                    os.makedirs(os.path.join(os.fsencode(dest), relative), exist_ok=True)
                continue
            if not overlay and _same(info, original):
                continue
            kept.written.append(FileName.from_bytes(relative))
            kept.files += 1
            kept.bytes += info.st_size
            if dest is None:
                continue
            target = os.path.join(os.fsencode(dest), relative)
            os.makedirs(os.path.dirname(target), exist_ok=True)
            if stat.S_ISLNK(info.st_mode):
                os.symlink(os.readlink(path), target)
            elif stat.S_ISREG(info.st_mode):
                if kept.bytes > MAX_KEPT_BYTES:
                    kept.complete = False
                    continue
                shutil.copyfile(path, target, follow_symlinks=False)
    if not overlay:
        _deleted_from_copy(run_home, kept)


def _same(info: os.stat_result, original: bytes) -> bool:
    try:
        before = os.lstat(original)
    except OSError:
        return False
    return (before.st_size, before.st_mtime_ns, stat.S_IFMT(before.st_mode)) == (
        info.st_size,
        info.st_mtime_ns,
        stat.S_IFMT(info.st_mode),
    )


def _deleted_from_copy(run_home: RunHome, kept: KeptWrites) -> None:
    source = os.fsencode(run_home.target)
    for folder, dirs, files in os.walk(source):
        dirs.sort()
        for name in sorted(dirs + files):
            relative = os.path.relpath(os.path.join(folder, name), source)
            if not os.path.lexists(os.path.join(os.fsencode(run_home.upper), relative)):
                kept.deleted.append(FileName.from_bytes(relative))


def home_view(run_home: RunHome, task: Task, view: Path) -> Path:
    """A directory holding the run's version of every home file the task's checks
    name (``~/x``), for verification after the agent's namespace is gone.

    Each is found in the run's layers without following a link (:meth:`RunHome.locate`)
    and copied as a regular file; a name reached through a link the run made (in any
    component) is left in the view as an absolute link, which the file check reads as
    pointing outside the home (the kernel refuses to follow it beneath the view)."""
    view.mkdir(mode=0o700, exist_ok=True)
    made = run_home.as_made()[0]
    for check in task.verification:
        name = getattr(check, "file", None)
        if not isinstance(name, str) or not name.startswith("~/"):
            continue
        relative = name[2:]
        kind, layer = made.locate(relative)
        if kind in ("absent", "other") or normalise(relative) is None:
            continue
        target = view / normalise(relative)  # type: ignore[operator]
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            if os.path.lexists(target):
                continue
            if kind == "link" or layer is None:
                os.symlink(OUTSIDE, target)
                continue
            _copy_from_layer(layer, relative, target)
        except OSError as exc:
            if exc.errno == errno.ELOOP:
                with contextlib.suppress(OSError):
                    os.symlink(OUTSIDE, target)
            # Otherwise absent from the view: the check reads "does not exist".
    return view


# What a link component of a checked home name becomes in the view: an absolute link,
# which a file check (openat2 RESOLVE_BENEATH) refuses as leaving its root.
OUTSIDE = "/"


def _copy_from_layer(layer: Path, relative: str, target: Path) -> None:
    fd = open_in_layer(layer, relative)
    with os.fdopen(fd, "rb") as source:
        info = os.fstat(source.fileno())
        if not stat.S_ISREG(info.st_mode):
            return
        with open(target, "xb") as copy:
            shutil.copyfileobj(source, copy)
    os.utime(target, ns=(info.st_atime_ns, info.st_mtime_ns))


def evidence_dir(run_dir: Path, position: int, folder: str, iteration: int) -> Path:
    """Where one run's kept home writes go inside the batch's directory."""
    safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in folder)[:80]
    return run_dir / "home-writes" / f"{position:04d}-{safe}-{iteration}"


def home_settings_for(
    mode: HomeMode, *, keep_writes: bool, home: Path, source: str
) -> HomeSettings:
    """The batch's home settings on this host: a fresh home is checked for size and its
    method (overlay or copy) probed here; :class:`HomeError` when it cannot be made."""
    if mode != "fresh":
        return HomeSettings(mode=mode, keep_writes=keep_writes)
    check_size(home, source=source)
    return HomeSettings(
        mode="fresh", keep_writes=keep_writes, method=probe_method(home, source=source)
    )


def probe_method(home: Path, *, source: str) -> Literal["overlay", "copy"]:
    """How this host can make a fresh home: an overlay where the launcher can mount one
    over ``home`` in its own namespace, else a bound copy; :class:`HomeError` when
    neither can be mounted (no mount namespace for this uid)."""
    from benchguard.harness.confine import Policy, launcher_argv

    problems = []
    with tempfile.TemporaryDirectory(prefix="bg-home-probe-") as scratch:
        root = Path(scratch)
        for method in ("overlay", "copy"):
            layers = root / method
            layers.mkdir()
            if method == "overlay":
                (layers / "upper").mkdir()
                (layers / "work").mkdir()
                spec = RunHome(target=home, upper=layers / "upper", work=layers / "work")
            else:
                spec = RunHome(target=home, upper=layers, work=None)
            policy = Policy(home=tuple(sorted(spec.launcher_spec().items())), confine=False)
            try:
                done = subprocess.run(
                    launcher_argv(policy, ["/bin/true"]),
                    capture_output=True,
                    timeout=PROBE_TIMEOUT_S,
                    check=False,
                    cwd="/",
                )
            except (OSError, subprocess.TimeoutExpired) as exc:
                problems.append(f"{method}: {exc}")
                continue
            if done.returncode == 0:
                return "overlay" if method == "overlay" else "copy"
            problems.append(done.stderr.decode("utf-8", errors="replace").strip())
    raise HomeError(
        f"{source} {home}: a fresh home per run cannot be mounted here ("
        + "; ".join(problems)
        + "); pass --home-mode persistent to use the home as it is"
    )
