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

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchguard.harness.cgroup_controllers import (
    enable_v2,
    make_v1_batch,
    make_v1_run,
    remove_v1,
    v1_mounts,
    why,
    write,
)

# The defaults of each knob, written explicitly: equal among runs whatever a host's
# default, and no run may raise its own (the files are root-owned, the agent confined).
SHARES = 1024
WEIGHT = 100
# Far above what an honest agent starts (a build with -j, a test suite's workers), low
# enough that a fork bomb stops at the run and not at the machine's pid_max.
PIDS_MAX = 4096
V1_CONTROLLERS = ("cpu", "pids")


class ShareError(RuntimeError):
    """A run's share could not be made."""


@dataclass
class RunShare:
    """One run's share: the v1 ``cgroup.procs`` files its first process joins, and the
    v1 directories removed at its end (both empty under ``cgroup2``)."""

    join: list[Path] = field(default_factory=list)
    directories: list[Path] = field(default_factory=list)

    def remove(self) -> None:
        for directory in self.directories:
            remove_v1(directory, kill=False)
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
                write(v2_run / "cpu.weight", str(WEIGHT))
                if self.pids:
                    write(v2_run / "pids.max", str(PIDS_MAX))
            except OSError as exc:
                raise ShareError(f"{v2_run}: cannot set cpu.weight/pids.max ({why(exc)})") from None
            return RunShare()
        share = RunShare()
        try:
            for controller, batch in self.v1_dirs.items():
                directory = make_v1_run(batch, v2_run.name)
                share.directories.append(directory)
                if controller == "cpu":
                    write(directory / "cpu.shares", str(SHARES))
                else:
                    write(directory / "pids.max", str(PIDS_MAX))
                share.join.append(directory / "cgroup.procs")
        except OSError as exc:
            share.remove()
            raise ShareError(
                f"cannot make the run's v1 cgroup ({why(exc)}: {exc.filename})"
            ) from None
        return share

    def close(self) -> None:
        """Remove the batch's v1 directories (every run's own already removed)."""
        for directory in self.v1_dirs.values():
            remove_v1(directory, kill=False)


def _enable_v2(own: Path, parent: Path, batch: Path) -> BatchShare | str:
    enabled = enable_v2(own, parent, batch, "cpu", optional=("pids",))
    if isinstance(enabled, str):
        return enabled
    return BatchShare("cgroup2", pids="pids" in enabled)


def _open_v1(batch_name: str, stale: Callable[[Path], bool]) -> BatchShare | str:
    mounts = v1_mounts(V1_CONTROLLERS)
    if "cpu" not in mounts:
        return "no cpu controller: none in the cgroup2 hierarchy, no cgroup v1 cpu mount"
    dirs: dict[str, Path] = {}
    for controller in V1_CONTROLLERS:
        if controller not in mounts:
            continue
        missing = "the harness's own v1 cgroup is not found"
        try:
            dirs[controller] = make_v1_batch(
                controller, mounts[controller], batch_name, stale, missing
            )
        except OSError as exc:
            if controller == "cpu":
                return f"cannot create a cgroup v1 cpu cgroup ({why(exc)}: {exc.filename})"
            continue  # the pids limit is optional
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
