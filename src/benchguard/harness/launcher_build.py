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

Trusted by content too (red team 5's launcher-plant swapped the binary; owner and mode
stayed right): each build's SHA-256 is recorded beside it (``<name>.sha256``, written
before the binary is renamed into place), and a found binary is used only when its
content hashes to that record; otherwise it is rebuilt, with a warning naming both
digests (no compiler: the Python launcher). Every later ask in the process compares the
file's identity (device, inode, size, mtime, ctime) with the one that was hashed, and
hashes again when it moved, so a binary replaced between batches or during one is seen
before its next use. What it cannot see: a writer that replaces both the binary and its
record (the same owner may write both; the record only makes a plant of the binary
alone visible), and a swap between that check and the kernel's exec of the path.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import os
import re
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
# The identity of each launcher file when its content was last checked (a change of it
# means the file was written or replaced since: hash again before the next use).
_checked: dict[Path, tuple[int, ...]] = {}
DIGEST_SUFFIX = ".sha256"


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


def _identity(path: Path) -> tuple[int, ...] | None:
    try:
        info = path.lstat()
    except OSError:
        return None
    return (info.st_dev, info.st_ino, info.st_size, info.st_mtime_ns, info.st_ctime_ns)


def file_sha256(path: Path) -> str:
    """The SHA-256 of ``path``'s content (hex)."""
    hasher = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            hasher.update(block)
    return hasher.hexdigest()


def digest_file(program: Path) -> Path:
    """Where the SHA-256 recorded when ``program`` was built is kept."""
    return program.with_name(program.name + DIGEST_SUFFIX)


def _recorded(program: Path) -> str | None:
    """The digest recorded for ``program``; None when missing, unreadable, malformed or
    writable by others (a record anyone may rewrite vouches for nothing)."""
    record = digest_file(program)
    try:
        info = record.lstat()
        text = record.read_text("ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None
    trusted = (
        stat.S_ISREG(info.st_mode)
        and info.st_uid in (0, os.geteuid())
        and not info.st_mode & (stat.S_IWGRP | stat.S_IWOTH)
    )
    return (
        text if trusted and len(text) == 64 and all(c in "0123456789abcdef" for c in text) else None
    )


def content_problem(program: Path) -> str | None:
    """Why ``program``'s content is not the build recorded beside it; None when it is
    (the file's identity is then remembered: :func:`native_launcher` re-checks only
    when it changes)."""
    before = _identity(program)
    recorded = _recorded(program)
    if recorded is None:
        return f"{program}: no valid build record ({digest_file(program).name})"
    try:
        found = file_sha256(program)
    except OSError as exc:
        return f"{program}: cannot be read ({exc.strerror or exc})"
    if found != recorded:
        return f"{program}: content sha256 {found} is not the build's recorded {recorded}"
    if before is None or _identity(program) != before:
        return f"{program}: changed while it was checked"
    _checked[program] = before
    return None


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
        # The record first: a binary in place always has one (a concurrent build of the
        # same source and flags writes the same bytes).
        record = digest_file(target)
        record_temporary = record.with_name(f".build-{os.getpid()}-{record.name}")
        record_temporary.write_text(file_sha256(Path(temporary)) + "\n", "ascii")
        os.chmod(record_temporary, 0o644)
        os.replace(record_temporary, record)
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
        found = _found.get(choice)
        if found is not None and _checked.get(found) != _identity(found):
            # Written or replaced since its content was checked: check (or rebuild) again.
            del _found[choice]
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
            if not _trusted(directory / name):
                continue
            problem = content_problem(directory / name)
            if problem is None:
                return directory / name
            log.warning("native launcher not used: %s; it is rebuilt", problem)
    if cc is None:
        log.warning("no C compiler: agents start through the Python Landlock launcher")
        return None
    for flags in FLAG_SETS:
        name = PROGRAM_PREFIX + _digest(source, flags)
        for directory in build_dirs():
            built = _build(directory, name, flags, cc)
            if built is not None and _trusted(built) and content_problem(built) is None:
                return built
    log.warning("the native launcher did not build: agents start through the Python one")
    return None


SEPARATE_SCRIPT = SOURCE.with_name("separate_exec.py")
_PORTED = re.compile(rb'^#define SEPARATE_EXEC_SHA256 "([0-9a-f]{64})"$', re.MULTILINE)


@functools.cache
def separation_port_problem() -> str | None:
    """Why the native launcher's ``--separate`` is not the port of the current
    ``separate_exec.py`` (the digest the C source records is not the script's); None
    when it is."""
    try:
        source, script = SOURCE.read_bytes(), SEPARATE_SCRIPT.read_bytes()
    except OSError as exc:
        return f"cannot read the separation's sources ({exc})"
    found = _PORTED.search(source)
    current = hashlib.sha256(script).hexdigest()
    if found is None or found.group(1).decode() != current:
        return (
            f"{SOURCE.name} ports a separate_exec.py other than this one (sha256 {current}): "
            "the script runs the separation until the port is updated"
        )
    return None


def native_separation() -> Path | None:
    """The native launcher for the run's separation (``--separate``) when it is built
    and its steps are the port of this ``separate_exec.py``; None: run the script."""
    native = native_launcher()
    if native is None:
        return None
    problem = separation_port_problem()
    if problem is not None:
        _warn_once(problem)
        return None
    return native


@functools.cache
def _warn_once(message: str) -> None:
    log.warning("%s", message)


def main() -> int:
    """``python -m benchguard.harness.launcher_build``: build now (make setup)."""
    found = native_launcher()
    print(found if found is not None else "no native launcher (the Python one will run)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
