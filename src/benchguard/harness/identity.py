"""Who an agent (and a verification command) runs as: never root, never with a capability.

When the harness itself runs as root, every agent process is started through
``setpriv`` as an unprivileged uid and gid (default 65534, ``nobody``; set
``BENCHGUARD_AGENT_UID=uid[:gid]`` to choose another), with supplementary groups
cleared, every capability removed from the inheritable, ambient and bounding sets, and
``no_new_privs`` set so no setuid program can give one back. Under ``--sandbox bwrap``
this wraps bubblewrap too, so bubblewrap builds its namespaces unprivileged and the
agent holds no capability in them either; without the sandbox it is what keeps a
cheater from writing into the harness's own installation or ``/usr``.

When the harness is not root, agents run as the harness's user (it cannot be
otherwise); the sandbox then is the boundary, and its self-check proves that no
capability survives.

The workspace, the agent home and the transcript channel are handed to the agent uid
(:func:`hand_over`); nothing else is.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from benchguard.errors import BadInputError

AGENT_UID_ENV = "BENCHGUARD_AGENT_UID"
DEFAULT_AGENT_ID = 65534


class IdentityError(BadInputError, ValueError):
    """The agent uid cannot be used; the message names the setting and what is allowed."""


@dataclass(frozen=True)
class AgentIdentity:
    uid: int
    gid: int

    def argv(self, command: Sequence[str], *, setpriv: str = "setpriv") -> list[str]:
        """``command`` started as this uid/gid with no capability and no way to gain one."""
        return [
            setpriv,
            f"--reuid={self.uid}",
            f"--regid={self.gid}",
            "--clear-groups",
            "--inh-caps=-all",
            "--ambient-caps=-all",
            "--bounding-set=-all",
            "--no-new-privs",
            "--",
            *command,
        ]


def agent_identity(env: Mapping[str, str]) -> AgentIdentity | None:
    """The identity agents drop to; ``None`` when the harness is not root (nothing to drop).

    Raises :class:`IdentityError` for a malformed or root ``BENCHGUARD_AGENT_UID``, or
    when ``setpriv`` is missing (dropping is required as root, never skipped).
    """
    if os.geteuid() != 0:
        return None
    raw = env.get(AGENT_UID_ENV, "").strip()
    uid = gid = DEFAULT_AGENT_ID
    if raw:
        parts = raw.split(":")
        try:
            numbers = [int(part) for part in parts]
        except ValueError:
            numbers = []
        if len(numbers) not in (1, 2) or any(n <= 0 or n >= 1 << 32 for n in numbers):
            raise IdentityError(
                f"{AGENT_UID_ENV}={raw!r}: expected uid or uid:gid, positive integers "
                "(root, 0, is not allowed)"
            )
        uid = numbers[0]
        gid = numbers[1] if len(numbers) == 2 else numbers[0]
    if shutil.which("setpriv") is None:
        raise IdentityError(
            "the harness runs as root, so agents must drop to an unprivileged uid, and "
            "'setpriv' (util-linux) is not on PATH; install util-linux or run as a user"
        )
    return AgentIdentity(uid, gid)


def hand_over(identity: AgentIdentity | None, *paths: Path, recursive: bool = True) -> None:
    """Make ``paths`` (and, when ``recursive``, everything under them) owned by the agent.

    Symlinks are changed themselves, never followed: an agent-made link in its home must
    not hand it a file elsewhere.
    """
    if identity is None:
        return
    for path in paths:
        os.chown(path, identity.uid, identity.gid, follow_symlinks=False)
        if recursive and path.is_dir() and not path.is_symlink():
            for root, dirs, files in os.walk(path):
                for name in dirs + files:
                    os.chown(
                        os.path.join(root, name), identity.uid, identity.gid, follow_symlinks=False
                    )


def reachable_problem(identity: AgentIdentity | None, path: Path) -> str | None:
    """Why the agent uid could not reach ``path`` unsandboxed (a closed parent), if so.

    Under the sandbox the path is bound and its host parents do not matter.
    """
    if identity is None:
        return None
    for parent in reversed(path.resolve().parents):
        info = parent.stat()
        if info.st_uid == identity.uid:
            continue
        if not info.st_mode & 0o001:
            return (
                f"{path}: the agent runs as uid {identity.uid}, which cannot enter "
                f"{parent} (mode {info.st_mode & 0o777:o}); use directories others can "
                "traverse, or --sandbox bwrap"
            )
    return None
