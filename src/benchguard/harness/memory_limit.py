"""A memory limit per run, from the kernel's memory controller (issue 19).

Without it a run that allocates (and touches) more than the machine has makes the
kernel's OOM killer pick the largest process of the machine, which may be an honest
sibling's, or the harness: a batch loses a run that did not cheat. With every run in a
memory cgroup of its own, limited to ``--memory-budget``, the kernel reclaims and, at
the limit, OOM-kills inside that run's cgroup only; its siblings and the harness are
never candidates. The run that reached its limit is an error on its own row (its
cgroup's OOM-kill count says so), never clean and never graded.

Where the memory controller comes from, first that works (as the CPU share,
harness/cpu_share):

- ``cgroup2``: the v2 hierarchy offers ``memory`` in the harness's own cgroup. ``+memory``
  is enabled in the ``cgroup.subtree_control`` of the harness's cgroup, of ``benchguard/``
  and of the batch directory; every run cgroup gets ``memory.max`` (and
  ``memory.swap.max`` 0 where swap is accounted, so the limit is not moved to swap).
  Its OOM kills are ``memory.events``' ``oom_kill``.
- ``cgroup1``: a hybrid host (these machines: v1 ``memory`` mounted), as root: a per-run
  cgroup under the harness's own v1 memory cgroup, ``.../benchguard/<batch>/run-...``
  (the v2 names), with ``memory.limit_in_bytes`` and, where swap is accounted,
  ``memory.memsw.limit_in_bytes`` the same. The run's first process joins it before it
  execs anything (harness/containment), as it joins its v1 CPU share. Its OOM kills
  are ``memory.oom_control``'s ``oom_kill``.

Otherwise (an unprivileged harness without delegation, a read-only ``/sys``) nothing is
limited, and every record says ``containment.memory_limit_unavailable``; a batch never
fails for it.

What it cannot do: the harness's own memory (grading, the audit, the detector) is not
in any run's cgroup; kernel memory a run causes outside its cgroup's accounting (some
of the network stack's, page tables on older v1 kernels) is not charged to it; and the
limits of all runs together are only a fraction of the machine (the default), not a
reservation: another tenant of the machine can still exhaust it. Pages a run writes to
its tmpfs scratch (harness.disk_budget) count against its memory limit too.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from benchguard.harness import cgroup_controllers as controllers
from benchguard.harness.disk_budget import MIB, parse_size, size_text

OPTION = "--memory-budget"
# Below this not even an agent CLI's runtime starts (the tests use 128 MiB).
MIN_MEMORY_BUDGET = 64 * MIB
# The default: this fraction of the machine's memory, divided among the runs at once
# (-j); the rest is the harness's and the machine's own, so runs that all reach their
# limit together still leave it room.
DEFAULT_FRACTION = 0.75
_MEMINFO = Path("/proc/meminfo")


class MemoryLimitError(RuntimeError):
    """A run's memory limit could not be set."""


def machine_memory(meminfo: Path = _MEMINFO) -> int | None:
    """The machine's memory in bytes (``MemTotal``); None when it cannot be read."""
    try:
        text = meminfo.read_text("ascii", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        name, _, rest = line.partition(":")
        words = rest.split()
        if name == "MemTotal" and words and words[0].isdigit():
            return int(words[0]) * 1024
    return None


def default_memory_budget(jobs: int, meminfo: Path = _MEMINFO) -> int:
    """Each run's default limit: :data:`DEFAULT_FRACTION` of the machine's memory over
    ``jobs`` runs at once, never below :data:`MIN_MEMORY_BUDGET` (a machine whose
    memory cannot be read gets 4 GiB per run)."""
    total = machine_memory(meminfo)
    if total is None:
        return 4096 * MIB
    share = int(total * DEFAULT_FRACTION) // max(jobs, 1)
    return max(share - share % MIB, MIN_MEMORY_BUDGET)


def parse_memory_budget(text: str | int | None) -> int | None:
    """``--memory-budget`` as bytes: ``512M``, ``4G``, ``1536MiB`` or a byte count;
    None when not given (each run then gets :func:`default_memory_budget` for the -j of
    the machine that runs it). Anything else, or less than :data:`MIN_MEMORY_BUDGET`,
    is bad input naming the option and the value."""
    if text is None or text == "":
        return None
    return parse_size(text, option=OPTION, minimum=MIN_MEMORY_BUDGET, example="4GiB")


def memory_overcommit(budget: int | None, jobs: int, meminfo: Path = _MEMINFO) -> str | None:
    """A warning when ``budget`` x ``jobs`` runs at once pass the machine's memory (the
    limits then bound each run, but runs at their limits together can still exhaust
    the machine); None otherwise, and for the default (a fraction of it)."""
    total = machine_memory(meminfo)
    if budget is None or total is None or budget * max(jobs, 1) <= total:
        return None
    return (
        f"--memory-budget {size_text(budget)} x -j {jobs} is more than this machine's "
        f"memory ({size_text(total)}): runs at their limits together can still exhaust it"
    )


def below_disk_budget(budget: int | None, disk_budget: int) -> str | None:
    """A warning when the memory budget is below the disk budget: as root the run's
    scratch is a tmpfs whose pages are charged to the run's own memory cgroup, so a run
    filling its scratch meets its memory limit first; None otherwise."""
    if budget is None or budget >= disk_budget:
        return None
    return (
        f"--memory-budget {size_text(budget)} is below --disk-budget "
        f"{size_text(disk_budget)}: a root run's scratch is memory charged to its own "
        "limit, so a run that fills its scratch reaches its memory limit first"
    )


def oom_kills(directory: Path, file_name: str) -> int | None:
    """The ``oom_kill`` count of a memory cgroup (``memory.events`` on v2,
    ``memory.oom_control`` on v1); None when it cannot be read."""
    try:
        text = (directory / file_name).read_text("ascii", errors="replace")
    except OSError:
        return None
    for line in text.splitlines():
        words = line.split()
        if len(words) == 2 and words[0] == "oom_kill" and words[1].isdigit():
            return int(words[1])
    return None


@dataclass
class RunMemory:
    """One run's memory limit: ``limit`` bytes; the v1 ``cgroup.procs`` its first
    process joins and the v1 directory removed at its end (None under ``cgroup2``);
    ``counter`` the directory and file whose ``oom_kill`` the record reads."""

    limit: int
    counter: tuple[Path, str]
    join: list[Path] = field(default_factory=list)
    directory: Path | None = None

    def oom_kills(self) -> int | None:
        return oom_kills(*self.counter)

    def remove(self) -> None:
        if self.directory is not None:
            controllers.remove_v1(self.directory, kill=False)
            self.directory = None


@dataclass
class BatchMemory:
    """The memory controller of one batch: ``kind`` ``cgroup2`` or ``cgroup1``, and for
    ``cgroup1`` the batch directory in the v1 memory hierarchy."""

    kind: str
    v1_dir: Path | None = None

    def new_run(self, v2_run: Path, limit: int) -> RunMemory:
        """The limit of the run whose v2 cgroup is ``v2_run`` (just made, empty):
        :class:`MemoryLimitError` when it cannot be set. Two writes per run."""
        if self.kind == "cgroup2":
            try:
                controllers.write(v2_run / "memory.max", str(limit))
                if (v2_run / "memory.swap.max").exists():
                    controllers.write(v2_run / "memory.swap.max", "0")
            except OSError as exc:
                raise MemoryLimitError(
                    f"{v2_run}: cannot set memory.max ({controllers.why(exc)})"
                ) from None
            return RunMemory(limit, (v2_run, "memory.events"))
        assert self.v1_dir is not None
        try:
            directory = controllers.make_v1_run(self.v1_dir, v2_run.name)
        except OSError as exc:
            raise MemoryLimitError(
                f"cannot make the run's v1 memory cgroup ({controllers.why(exc)}: {exc.filename})"
            ) from None
        run = RunMemory(
            limit, (directory, "memory.oom_control"), [directory / "cgroup.procs"], directory
        )
        try:
            # The plain limit first: the kernel refuses a memsw limit below it.
            controllers.write(directory / "memory.limit_in_bytes", str(limit))
            if (directory / "memory.memsw.limit_in_bytes").exists():
                controllers.write(directory / "memory.memsw.limit_in_bytes", str(limit))
        except OSError as exc:
            run.remove()
            raise MemoryLimitError(
                f"cannot set the run's v1 memory limit ({controllers.why(exc)}: {exc.filename})"
            ) from None
        return run

    def close(self) -> None:
        """Remove the batch's v1 directory (every run's own already removed)."""
        if self.v1_dir is not None:
            controllers.remove_v1(self.v1_dir, kill=False)


def _enable_v2(own: Path, parent: Path, batch: Path) -> BatchMemory | str:
    enabled = controllers.enable_v2(own, parent, batch, "memory")
    return enabled if isinstance(enabled, str) else BatchMemory("cgroup2")


def _open_v1(batch_name: str, stale: Callable[[Path], bool]) -> BatchMemory | str:
    mounts = controllers.v1_mounts(("memory",))
    if "memory" not in mounts:
        return "no memory controller: none in the cgroup2 hierarchy, no cgroup v1 memory mount"
    missing = "the harness's own v1 memory cgroup is not found"
    try:
        batch = controllers.make_v1_batch("memory", mounts["memory"], batch_name, stale, missing)
    except OSError as exc:
        return f"cannot create a cgroup v1 memory cgroup ({controllers.why(exc)}: {exc.filename})"
    return BatchMemory("cgroup1", batch)


def open_batch(
    own: Path, parent: Path, batch: Path, stale: Callable[[Path], bool]
) -> BatchMemory | str:
    """The memory controller of the batch whose v2 cgroups live in ``batch`` (below
    ``parent``, below the harness's own v2 cgroup ``own``); why there is none otherwise.
    ``stale`` says whether a batch directory belongs to a harness that is gone."""
    v2 = _enable_v2(own, parent, batch)
    if isinstance(v2, BatchMemory):
        return v2
    v1 = _open_v1(batch.name, stale)
    if isinstance(v1, BatchMemory):
        return v1
    return v1 if "no cgroup v1 memory mount" not in v1 else v2
