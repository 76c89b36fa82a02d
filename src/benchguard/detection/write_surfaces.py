"""One view of a file write, whatever tool wrote it: the path and the new content as a
``{"path": ..., "file_text": ...}`` line, the shape the deliverable rules read.

The rules that judge what an agent writes (``comparison-override/*``,
``caller-inspection/*``, the grader-tampering writes) look for a content argument
(``"file_text":``, ``"content":``, ``"new_str":``) on the same line as the code. Every
importer hands its write tool's arguments over as the framework logged them, and two
of them do not carry such a key:

* Codex's ``apply_patch`` is one string in its own envelope (``*** Begin Patch``,
  ``*** Add File: PATH`` / ``*** Update File: PATH``, added lines prefixed ``+``);
* SWE-agent's ``str_replace_editor create PATH --file_text '...'`` (and
  ``str_replace ... --new_str``, ``insert ... --new_str``) is a command line.

This module turns both into the line a structured write tool would give, so the same
deliverable is judged the same in every format. Pure, bounded: 64 KiB of each
argument, 16 files per patch.
"""

from __future__ import annotations

import itertools
import json
import re
import shlex
from collections.abc import Iterable

_MAX_CHARS = 64 << 10
_MAX_FILES = 16
_PATCH_START = "*** Begin Patch"
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update) File: (?P<path>.+?)\s*$")
_EDITOR = re.compile(r"^\s*str_replace_editor\s+(?:create|str_replace|insert)\s")
_EDITOR_CONTENT = frozenset({"--file_text", "--new_str"})


def write_views(texts: Iterable[str]) -> list[str]:
    """The ``{"path", "file_text"}`` lines for the writes ``texts`` hold (each a string
    argument of one call)."""
    views: list[str] = []
    for text in texts:
        if _PATCH_START in text[:4096]:
            views.extend(_patch_views(text[:_MAX_CHARS]))
        elif "str_replace_editor" in text[:256] and _EDITOR.match(text):
            views.extend(_editor_views(text[:_MAX_CHARS]))
    return views


def _view(path: str, text: str) -> str:
    return json.dumps({"path": path, "file_text": text}, ensure_ascii=False)


def _patch_views(text: str) -> list[str]:
    """Each added or updated file of a Codex patch: its ``+`` lines, unprefixed."""
    views: list[str] = []
    path: str | None = None
    added: list[str] = []
    for line in text.splitlines():
        found = _PATCH_FILE.match(line)
        if found is not None or line.startswith("*** End Patch"):
            if path is not None and added:
                views.append(_view(path, "\n".join(added)))
            if len(views) >= _MAX_FILES:
                break
            path, added = (found.group("path") if found else None), []
        elif path is not None and line.startswith("+"):
            added.append(line[1:])
    if path is not None and added and len(views) < _MAX_FILES:
        views.append(_view(path, "\n".join(added)))
    return views


def _editor_views(text: str) -> list[str]:
    """SWE-agent's editor command: the path and the ``--file_text`` / ``--new_str``
    value (quoted as the shell would read it)."""
    try:
        words = shlex.split(text, posix=True)
    except ValueError:
        return []
    if len(words) < 3:
        return []
    path = words[2]
    views = [
        _view(path, value)
        for option, value in itertools.pairwise(words)
        if option in _EDITOR_CONTENT
    ]
    return views[:_MAX_FILES]


__all__ = ["write_views"]
