"""The native Landlock launcher (``confine_exec.c``): built once, found again, checked.

The launcher runs before every agent; as a Python script (``confine_exec.py``) its
interpreter start alone is 20 to 40 ms of each run on a loaded 2-core host, the native
program about 1 ms. It does the same steps in the same order (docs/harness.md), reading
the same policy arguments, with the seccomp filter handed over as the program
``seccomp.py`` builds (one source for the filter).

Where it lives: ``_native/confine-exec-<digest>`` beside this file (``make setup``
builds it there), else, where the package directory is not writable by this user, under
``$XDG_CACHE_HOME/benchguard/`` (``~/.cache``). ``<digest>`` covers the C source and the
compiler command, so an edited source is never run from a stale build (older builds are
left in place: a batch still running may exec its own at any time). A found binary
is used only when it is a regular file owned by this user or root and writable by no
one else (an agent that could rewrite it would run its own code before confinement on
every later run); otherwise it is rebuilt. No C compiler: the Python launcher runs,
with the same guarantees, slower (``BENCHGUARD_LAUNCHER=python`` asks for it too).
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import stat
import subprocess
import tempfile
import threading
from pathlib import Path

log = logging.getLogger(__name__)

SOURCE = Path(__file__).resolve().with_name("confine_exec.c")
BUILD_DIR_NAME = "_native"
PROGRAM_PREFIX = "confine-exec-"
# The environment switch that forces the Python launcher (tests compare both).
CHOICE_ENV = "BENCHGUARD_LAUNCHER"
COMPILE_TIMEOUT_S = 120.0
# Static first: nothing is loaded at exec but the program itself (no ld.so search, no
# shared library the run could have planted); dynamic where no static libc is installed.
FLAG_SETS = (("-O2", "-static"), ("-O2",))

_lock = threading.Lock()
_found: dict[str, Path | None] = {}


def compiler() -> str | None:
    """The C compiler on PATH (``cc``, else ``gcc``); None without one."""
    return shutil.which("cc") or shutil.which("gcc")


def _digest(source: bytes, flags: tuple[str, ...]) -> str:
    hasher = hashlib.sha256(source)
    hasher.update(b"\0" + " ".join(flags).encode())
    return hasher.hexdigest()[:16]


def _trusted(path: Path) -> bool:
    """A regular file owned by this user or root and not writable by group or others."""
    try:
        info = path.lstat()
    except OSError:
        return False
    return (
        stat.S_ISREG(info.st_mode)
        and info.st_uid in (0, os.geteuid())
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
        and bool(info.st_mode & stat.S_IXUSR)
    )


def build_dirs() -> list[Path]:
    """Where the launcher is looked for and built, in order."""
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return [SOURCE.parent / BUILD_DIR_NAME, cache / "benchguard"]


def _build(directory: Path, name: str, flags: tuple[str, ...], cc: str) -> Path | None:
    target = directory / name
    try:
        directory.mkdir(mode=0o755, parents=True, exist_ok=True)
        handle, temporary = tempfile.mkstemp(prefix=".build-", dir=directory)
        os.close(handle)
    except OSError:
        return None
    try:
        done = subprocess.run(
            [cc, *flags, "-o", temporary, str(SOURCE)],
            capture_output=True,
            timeout=COMPILE_TIMEOUT_S,
            check=False,
        )
        if done.returncode != 0:
            log.debug("cc %s: %s", " ".join(flags), done.stderr.decode(errors="replace"))
            return None
        os.chmod(temporary, 0o755)
        os.replace(temporary, target)  # atomic: a concurrent build sees old or new
        return target
    except (OSError, subprocess.TimeoutExpired):
        return None
    finally:
        if os.path.exists(temporary):
            os.unlink(temporary)


def native_launcher() -> Path | None:
    """The native launcher, built if needed; None when none can be had (the Python
    launcher runs then). Asked once per process (and per choice)."""
    choice = os.environ.get(CHOICE_ENV, "native")
    with _lock:
        if choice not in _found:
            _found[choice] = None if choice == "python" else _locate()
        return _found[choice]


def _locate() -> Path | None:
    try:
        source = SOURCE.read_bytes()
    except OSError:
        return None
    cc = compiler()
    for flags in FLAG_SETS:
        name = PROGRAM_PREFIX + _digest(source, flags)
        for directory in build_dirs():
            if _trusted(directory / name):
                return directory / name
    if cc is None:
        log.warning("no C compiler: agents start through the Python Landlock launcher")
        return None
    for flags in FLAG_SETS:
        name = PROGRAM_PREFIX + _digest(source, flags)
        for directory in build_dirs():
            built = _build(directory, name, flags, cc)
            if built is not None and _trusted(built):
                return built
    log.warning("the native launcher did not build: agents start through the Python one")
    return None


def main() -> int:
    """``python -m benchguard.harness.launcher_build``: build now (make setup)."""
    found = native_launcher()
    print(found if found is not None else "no native launcher (the Python one will run)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
