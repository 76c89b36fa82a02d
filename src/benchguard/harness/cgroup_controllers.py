"""The cgroup mechanics shared by the per-run limits (harness.cpu_share,
harness.memory_limit): enabling a controller down a v2 subtree, finding a v1
controller's hierarchy and the harness's own cgroup in it, and making and removing a
batch's and a run's directories there (with the sweep of a gone harness's).

Each limit says which controller and which knobs; this module only makes, enables and
removes, and answers why it could not as a reason (:func:`why`) or an ``OSError``.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from collections.abc import Callable
from pathlib import Path

from benchguard.harness.cgroup_tree import child_dirs, directory_of, unescape_mount

PARENT_NAME = "benchguard"
BATCH_PREFIX = "h"
REMOVE_BUDGET_S = 5.0
_POLL_S = 0.01
_MOUNTINFO = Path("/proc/self/mountinfo")


def write(path: Path, text: str) -> None:
    """Write ``text`` to the cgroup file ``path`` (one write, as the kernel wants)."""
    with path.open("w", encoding="ascii") as handle:
        handle.write(text)


def why(exc: OSError) -> str:
    """The reason an ``OSError`` gives, for a record."""
    return exc.strerror or str(exc)


def enable_v2(
    own: Path, parent: Path, batch: Path, required: str, optional: tuple[str, ...] = ()
) -> list[str] | str:
    """Enable ``required`` (and each of ``optional`` the hierarchy offers) in the
    ``cgroup.subtree_control`` of the harness's own v2 cgroup ``own``, of ``parent``
    and of ``batch``: the controllers enabled, or why not."""
    try:
        offered = (own / "cgroup.controllers").read_text("ascii").split()
    except OSError as exc:
        return f"cannot read {own / 'cgroup.controllers'} ({why(exc)})"
    if required not in offered:
        return f"the cgroup2 hierarchy offers no {required} controller in {own}"
    wanted = [required, *(name for name in optional if name in offered)]
    for directory in (own, parent, batch):
        control = directory / "cgroup.subtree_control"
        try:
            enabled = control.read_text("ascii").split()
            missing = [name for name in wanted if name not in enabled]
            if missing:
                write(control, " ".join(f"+{name}" for name in missing))
        except OSError as exc:
            # EBUSY at the harness's own cgroup: it holds processes (no internal
            # processes below a cgroup with controllers), the harness cannot enable it.
            return f"cannot enable {' '.join('+' + n for n in wanted)} in {control} ({why(exc)})"
    return wanted


def read_mountinfo(mountinfo: Path | None = None) -> list[str]:
    try:
        return (mountinfo or _MOUNTINFO).read_text("utf-8", errors="replace").splitlines()
    except OSError:
        return []


def v1_mounts(
    controllers: tuple[str, ...], mountinfo: Path | None = None
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


def make_v1_batch(
    controller: str,
    mount: tuple[Path, str],
    batch_name: str,
    stale: Callable[[Path], bool],
    missing: str,
) -> Path:
    """The batch directory ``batch_name`` made under ``benchguard/`` of the harness's own
    cgroup in ``controller``'s v1 hierarchy (at ``mount``), after sweeping the batch
    directories there of harnesses that are gone; ``OSError`` when it cannot be made
    (``missing`` its reason when the harness's own cgroup is not found)."""
    own_path = v1_cgroup_of("self", controller)
    own = None if own_path is None else directory_of(own_path, mount)
    if own is None:
        raise OSError(0, missing, str(mount[0]))
    parent = own / PARENT_NAME
    parent.mkdir(mode=0o755, exist_ok=True)
    sweep_stale_v1(parent, stale)
    batch = parent / batch_name
    batch.mkdir(mode=0o755)
    return batch


def make_v1_run(batch: Path, name: str) -> Path:
    """The run's directory ``name`` made under a v1 batch directory; ``OSError`` when it
    cannot be. Its knobs are the caller's; :func:`remove_v1` removes it."""
    directory = batch / name
    directory.mkdir(mode=0o755)
    return directory


def remove_v1(directory: Path, *, kill: bool) -> None:
    """Remove a v1 cgroup, deepest first. ``kill``: SIGKILL what is still listed (a
    stale run's leftovers); otherwise wait for the members to finish exiting."""
    for child in child_dirs(directory):
        remove_v1(child, kill=kill)
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


def sweep_stale_v1(parent: Path, stale: Callable[[Path], bool]) -> int:
    """Remove the v1 batch directories under ``parent`` of harnesses that are gone (this
    uid's only), killing what is still listed in them; how many were removed."""
    removed = 0
    for child in child_dirs(parent):
        if not child.name.startswith(BATCH_PREFIX) or not stale(child):
            continue
        remove_v1(child, kill=True)
        removed += 0 if child.exists() else 1
    return removed
