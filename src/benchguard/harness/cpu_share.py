"""An equal CPU share (and a generous pids limit) per run, from the kernel's scheduler.

Without it the scheduler shares CPU per autogroup, i.e. per session: a run that forks
busy processes, each ``setsid()``'d into a session of its own, takes a share per
process, and an honest sibling at ``-j 2`` gets a sliver of the CPU and blows its
timeout (red team 27's cpu-starve). With every run in a cpu cgroup of its own, each
with the same weight, the scheduler shares CPU between runs first, whatever a run does
inside its own group (tasks in a non-root cpu cgroup are not autogrouped).

Where the cpu controller comes from, first that works:

- ``cgroup2``: the v2 hierarchy offers ``cpu`` in the harness's own cgroup
  (``cgroup.controllers``). ``+cpu`` (and ``+pids`` when offered) is enabled in the
  ``cgroup.subtree_control`` of the harness's cgroup, of ``benchguard/`` and of the
  batch directory, and every run cgroup gets ``cpu.weight`` :data:`WEIGHT` (and
  ``pids.max`` :data:`PIDS_MAX`). The kernel refuses enabling a controller below a
  cgroup that holds processes (the "no internal processes" rule): a harness living in a
  non-root cgroup of its own then has no share, and the record says why.
- ``cgroup1``: a hybrid host (v1 controllers under ``/sys/fs/cgroup/<controller>``, the
  v2 hierarchy without controllers), as root: a per-run cgroup under the harness's own
  v1 ``cpu`` cgroup, ``.../benchguard/h<pid>-<start>-<n>-ns<pidns>/run-...`` (the same names as
  the v2 ones), with ``cpu.shares`` :data:`SHARES`, and likewise in the ``pids``
  hierarchy with ``pids.max`` :data:`PIDS_MAX`. The run's first process joins them
  (writes ``0`` to their ``cgroup.procs``) before it execs anything
  (harness/containment), so every descendant inherits them (fork keeps v1 membership);
  a join that fails ends the run's start with exit 125, never an agent outside its
  share. The directories are removed at the run's end (after its v2 cgroup killed every
  member), and the next harness's sweep removes those of a harness that is gone.

Otherwise (an unprivileged harness without delegation, a read-only ``/sys``) nothing
changes, and every record says ``containment.cpu_share_unavailable``; a batch never
fails for it.

What it cannot do: the whole batch is one group at the level of the harness's own
cgroup, weighted like one session against the rest of the machine (its runs share
that group's part equally); a run's share is a floor under contention, not a reservation
of wall-clock time, so another tenant of the machine can still slow every run alike.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchguard.harness.cgroup_tree import child_dirs, directory_of, unescape_mount

PARENT_NAME = "benchguard"
BATCH_PREFIX = "h"
# The defaults of each knob, written explicitly: equal among runs whatever a host's
# default, and no run may raise its own (the files are root-owned, the agent confined).
SHARES = 1024
WEIGHT = 100
# Far above what an honest agent starts (a build with -j, a test suite's workers), low
# enough that a fork bomb stops at the run and not at the machine's pid_max.
PIDS_MAX = 4096
V1_CONTROLLERS = ("cpu", "pids")
REMOVE_BUDGET_S = 5.0
_POLL_S = 0.01


_MOUNTINFO = Path("/proc/self/mountinfo")


def read_mountinfo(mountinfo: Path | None = None) -> list[str]:
    try:
        return (mountinfo or _MOUNTINFO).read_text("utf-8", errors="replace").splitlines()
    except OSError:
        return []


class ShareError(RuntimeError):
    """A run's share could not be made."""


def _write(path: Path, text: str) -> None:
    with path.open("w", encoding="ascii") as handle:
        handle.write(text)


def _why(exc: OSError) -> str:
    return exc.strerror or str(exc)


def v1_mounts(
    mountinfo: Path | None = None, controllers: tuple[str, ...] = V1_CONTROLLERS
) -> dict[str, tuple[Path, str]]:
    """Each v1 controller in ``controllers`` mounted in this mount namespace: its mount
    point and the hierarchy path the mount shows as its root."""
    found: dict[str, tuple[Path, str]] = {}
    for line in read_mountinfo(mountinfo):
        head, sep, tail = line.partition(" - ")
        fields, after = head.split(), tail.split()
        if not sep or len(fields) < 5 or len(after) < 3 or after[0] != "cgroup":
            continue
        for option in after[2].split(","):
            if option in controllers and option not in found:
                found[option] = (Path(unescape_mount(fields[4])), unescape_mount(fields[3]))
    return found


def v1_cgroup_of(pid: int | str, controller: str) -> str | None:
    """The v1 cgroup path of ``pid`` in ``controller``'s hierarchy (/proc/PID/cgroup)."""
    try:
        text = Path(f"/proc/{pid}/cgroup").read_text("utf-8", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        parts = line.split(":", 2)
        if len(parts) == 3 and controller in parts[1].split(","):
            return parts[2]
    return None


def _own_v1_dir(controller: str, mount: tuple[Path, str]) -> Path | None:
    own = v1_cgroup_of("self", controller)
    return None if own is None else directory_of(own, mount)


def _rmdir_v1(directory: Path, *, kill: bool) -> None:
    """Remove a v1 cgroup, deepest first. ``kill``: SIGKILL what is still listed (a
    stale run's leftovers); otherwise wait for the members to finish exiting."""
    for child in child_dirs(directory):
        _rmdir_v1(child, kill=kill)
    deadline = time.monotonic() + REMOVE_BUDGET_S
    while True:
        try:
            directory.rmdir()
            return
        except FileNotFoundError:
            return
        except OSError:
            if time.monotonic() > deadline:
                return
        if kill:
            with contextlib.suppress(OSError):
                for word in (directory / "cgroup.procs").read_text("ascii").split():
                    with contextlib.suppress(OSError):
                        os.kill(int(word), signal.SIGKILL)
        time.sleep(_POLL_S)


@dataclass
class RunShare:
    """One run's share: the v1 ``cgroup.procs`` files its first process joins, and the
    v1 directories removed at its end (both empty under ``cgroup2``)."""

    join: list[Path] = field(default_factory=list)
    directories: list[Path] = field(default_factory=list)

    def remove(self) -> None:
        for directory in self.directories:
            _rmdir_v1(directory, kill=False)
        self.directories = []


@dataclass
class BatchShare:
    """The share of one batch: ``kind`` ``cgroup2`` or ``cgroup1``, and for ``cgroup1``
    the batch directory in each v1 hierarchy (``cpu`` always, ``pids`` when it could be
    made)."""

    kind: str
    v1_dirs: dict[str, Path] = field(default_factory=dict)
    pids: bool = False

    def new_run(self, v2_run: Path) -> RunShare:
        """The share of the run whose v2 cgroup is ``v2_run`` (just made, empty):
        :class:`ShareError` when it cannot be set."""
        if self.kind == "cgroup2":
            try:
                _write(v2_run / "cpu.weight", str(WEIGHT))
                if self.pids:
                    _write(v2_run / "pids.max", str(PIDS_MAX))
            except OSError as exc:
                raise ShareError(
                    f"{v2_run}: cannot set cpu.weight/pids.max ({_why(exc)})"
                ) from None
            return RunShare()
        share = RunShare()
        try:
            for controller, batch in self.v1_dirs.items():
                directory = batch / v2_run.name
                directory.mkdir(mode=0o755)
                share.directories.append(directory)
                if controller == "cpu":
                    _write(directory / "cpu.shares", str(SHARES))
                else:
                    _write(directory / "pids.max", str(PIDS_MAX))
                share.join.append(directory / "cgroup.procs")
        except OSError as exc:
            share.remove()
            raise ShareError(
                f"cannot make the run's v1 cgroup ({_why(exc)}: {exc.filename})"
            ) from None
        return share

    def close(self) -> None:
        """Remove the batch's v1 directories (every run's own already removed)."""
        for directory in self.v1_dirs.values():
            _rmdir_v1(directory, kill=False)


def _enable_v2(own: Path, parent: Path, batch: Path) -> BatchShare | str:
    try:
        offered = (own / "cgroup.controllers").read_text("ascii").split()
    except OSError as exc:
        return f"cannot read {own / 'cgroup.controllers'} ({_why(exc)})"
    if "cpu" not in offered:
        return f"the cgroup2 hierarchy offers no cpu controller in {own}"
    wanted = ["cpu", *(["pids"] if "pids" in offered else [])]
    for directory in (own, parent, batch):
        control = directory / "cgroup.subtree_control"
        try:
            enabled = control.read_text("ascii").split()
            missing = [name for name in wanted if name not in enabled]
            if missing:
                _write(control, " ".join(f"+{name}" for name in missing))
        except OSError as exc:
            # EBUSY at the harness's own cgroup: it holds processes (no internal
            # processes below a cgroup with controllers), the harness cannot enable it.
            return f"cannot enable {' '.join('+' + n for n in wanted)} in {control} ({_why(exc)})"
    return BatchShare("cgroup2", pids="pids" in wanted)


def _open_v1(batch_name: str, stale: Callable[[Path], bool]) -> BatchShare | str:
    mounts = v1_mounts()
    if "cpu" not in mounts:
        return "no cpu controller: none in the cgroup2 hierarchy, no cgroup v1 cpu mount"
    dirs: dict[str, Path] = {}
    for controller in V1_CONTROLLERS:
        if controller not in mounts:
            continue
        own = _own_v1_dir(controller, mounts[controller])
        try:
            if own is None:
                raise OSError(
                    0, "the harness's own v1 cgroup is not found", str(mounts[controller][0])
                )
            parent = own / PARENT_NAME
            parent.mkdir(mode=0o755, exist_ok=True)
            sweep_stale_v1(parent, stale)
            batch = parent / batch_name
            batch.mkdir(mode=0o755)
        except OSError as exc:
            if controller == "cpu":
                return f"cannot create a cgroup v1 cpu cgroup ({_why(exc)}: {exc.filename})"
            continue  # the pids limit is optional
        dirs[controller] = batch
    return BatchShare("cgroup1", dirs, pids="pids" in dirs)


def open_batch(
    own: Path, parent: Path, batch: Path, stale: Callable[[Path], bool]
) -> BatchShare | str:
    """The share of the batch whose v2 cgroups live in ``batch`` (below ``parent``,
    below the harness's own v2 cgroup ``own``); why there is none otherwise. ``stale``
    says whether a batch directory (by its name) belongs to a harness that is gone."""
    v2 = _enable_v2(own, parent, batch)
    if isinstance(v2, BatchShare):
        return v2
    v1 = _open_v1(batch.name, stale)
    if isinstance(v1, BatchShare):
        return v1
    return v1 if "no cgroup v1 cpu mount" not in v1 else v2


def sweep_stale_v1(parent: Path, stale: Callable[[Path], bool]) -> int:
    """Remove the v1 batch directories under ``parent`` of harnesses that are gone (this
    uid's only), killing what is still listed in them; how many were removed."""
    removed = 0
    for child in child_dirs(parent):
        if not child.name.startswith(BATCH_PREFIX) or not stale(child):
            continue
        _rmdir_v1(child, kill=True)
        removed += 0 if child.exists() else 1
    return removed
