"""What a cluster worker needs to run a batch's jobs, and how it proves it got it.

A worker runs a job exactly as a local batch would, so it needs the same three inputs:
the tasks directory, the agent's directory (its YAML and whatever ``{agent_dir}``
names) and the operator's home template. They reach the workers in one of two ways:

- **shipped** (the default): the client packs the three trees into one tar archive and
  names it by the SHA-256 of its bytes; each worker checks that digest before it
  unpacks anything, into a directory of its own for this batch;
- **shared** (``--shared-inputs``): the workers read the very same paths the client
  reads (a shared file system mounted at the same place). The client digests each tree
  (names, modes and contents, in sorted order) and every worker digests its own view:
  a worker that sees different bytes is refused work.

Bounds: an archive larger than :data:`MAX_BUNDLE_BYTES`, or a tree with more than
:data:`MAX_FILES` entries, is refused on the client with the size and the limit;
extraction refuses links, devices and paths that leave the destination (tarfile's
``data`` filter), so a crafted archive cannot write outside the worker's directory.
"""

from __future__ import annotations

import hashlib
import io
import os
import stat
import tarfile
from dataclasses import dataclass
from pathlib import Path

from benchguard.errors import BadInputError

# A batch's inputs are small (task files, an agent script, a home template); past this
# the operator should use --shared-inputs rather than push the bytes through the scheduler.
MAX_BUNDLE_BYTES = 256 * 1024 * 1024
MAX_FILES = 50_000
# Names inside the archive (and inside a worker's unpacked directory).
TASKS_MEMBER = "tasks"
AGENT_MEMBER = "agent"
HOME_MEMBER = "home"


class InputsError(BadInputError, ValueError):
    """The batch's inputs cannot be packed, or a worker's copy is not what was sent."""


@dataclass(frozen=True)
class InputTrees:
    """The three trees as the client names them (``agent_dir`` is None for the built-in
    agent, which every worker has with benchguard itself)."""

    tasks_dir: Path
    agent_dir: Path | None
    home: Path


@dataclass(frozen=True)
class Inputs:
    """How the workers get the inputs: ``bundle`` (the archive) and its ``digest``, or,
    for shared inputs, no bundle and one digest per tree in ``tree_digests``."""

    trees: InputTrees
    digest: str
    bundle: bytes | None = None
    tree_digests: tuple[tuple[str, str], ...] = ()

    @property
    def shared(self) -> bool:
        return self.bundle is None


def _members(trees: InputTrees) -> list[tuple[str, Path]]:
    members = [(TASKS_MEMBER, trees.tasks_dir), (HOME_MEMBER, trees.home)]
    if trees.agent_dir is not None:
        members.append((AGENT_MEMBER, trees.agent_dir))
    return sorted(members)


def _walk(root: Path) -> list[Path]:
    """Every entry below ``root`` in sorted order, not following directory links."""
    found: list[Path] = []
    stack = [root]
    while stack:
        directory = stack.pop()
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name, reverse=True)
        except OSError as exc:
            raise InputsError(f"{directory}: cannot be listed ({exc.strerror})") from None
        for entry in entries:
            path = Path(entry.path)
            found.append(path)
            if len(found) > MAX_FILES:
                raise InputsError(
                    f"{root}: more than {MAX_FILES} entries; a cluster batch ships at most "
                    f"that many (use --shared-inputs for a larger tree)"
                )
            if entry.is_dir(follow_symlinks=False):
                stack.append(path)
    return sorted(found)


def tree_digest(root: Path) -> str:
    """SHA-256 over every entry's relative name (as bytes), type, mode and contents."""
    digest = hashlib.sha256()
    for path in _walk(root):
        info = path.lstat()
        digest.update(os.fsencode(path.relative_to(root)) + b"\0")
        digest.update(f"{stat.S_IFMT(info.st_mode):o}:{stat.S_IMODE(info.st_mode):o}\0".encode())
        if stat.S_ISLNK(info.st_mode):
            digest.update(os.fsencode(os.readlink(path)) + b"\0")
        elif stat.S_ISREG(info.st_mode):
            with path.open("rb") as handle:
                for chunk in iter(lambda: handle.read(1 << 20), b""):
                    digest.update(chunk)
        digest.update(b"\n")
    return digest.hexdigest()


def shared_inputs(trees: InputTrees) -> Inputs:
    """Inputs the workers read from the same paths: one digest per tree."""
    digests = tuple((name, tree_digest(path)) for name, path in _members(trees))
    combined = hashlib.sha256("".join(f"{n}={d}\n" for n, d in digests).encode()).hexdigest()
    return Inputs(trees=trees, digest=combined, tree_digests=digests)


def pack_inputs(trees: InputTrees) -> Inputs:
    """The three trees in one tar archive (sorted, owner and times zeroed, so the same
    trees give the same bytes), named by its SHA-256."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as archive:
        for name, root in _members(trees):
            archive.add(root, arcname=name, recursive=False, filter=_normalised)
            for path in _walk(root):
                archive.add(
                    path,
                    arcname=f"{name}/{path.relative_to(root).as_posix()}",
                    recursive=False,
                    filter=_normalised,
                )
                if buffer.tell() > MAX_BUNDLE_BYTES:
                    raise InputsError(
                        f"the batch's inputs (tasks {trees.tasks_dir}, home {trees.home}"
                        + (f", agent {trees.agent_dir}" if trees.agent_dir else "")
                        + f") are larger than {MAX_BUNDLE_BYTES // (1024 * 1024)} MiB, the "
                        "most a cluster batch ships; put them on a path every worker "
                        "mounts and pass --shared-inputs"
                    )
    data = buffer.getvalue()
    return Inputs(trees=trees, digest=hashlib.sha256(data).hexdigest(), bundle=data)


def _normalised(info: tarfile.TarInfo) -> tarfile.TarInfo | None:
    if not (info.isfile() or info.isdir() or info.issym()):
        return None  # sockets, FIFOs and devices are no input
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    return info


def unpack_inputs(bundle: bytes, digest: str, destination: Path) -> InputTrees:
    """Check the archive's digest, then unpack it into ``destination`` (which must not
    exist yet); the trees as this worker sees them."""
    received = hashlib.sha256(bundle).hexdigest()
    if received != digest:
        raise InputsError(
            f"the inputs received have digest {received}, not the {digest} the client sent"
        )
    destination.mkdir(parents=True)
    with tarfile.open(fileobj=io.BytesIO(bundle), mode="r") as archive:
        names = {member.name.split("/", 1)[0] for member in archive.getmembers()}
        archive.extractall(destination, filter="data")
    return InputTrees(
        tasks_dir=destination / TASKS_MEMBER,
        agent_dir=destination / AGENT_MEMBER if AGENT_MEMBER in names else None,
        home=destination / HOME_MEMBER,
    )


def check_shared(inputs: Inputs) -> None:
    """On a worker: its view of the shared trees must digest as the client's did."""
    for name, path in _members(inputs.trees):
        expected = dict(inputs.tree_digests)[name]
        if not path.is_dir():
            raise InputsError(f"shared input {name} {path}: not a directory on this worker")
        seen = tree_digest(path)
        if seen != expected:
            raise InputsError(
                f"shared input {name} {path}: this worker's copy has digest {seen}, the "
                f"client's {expected}"
            )
