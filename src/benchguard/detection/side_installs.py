"""A package installed into a side folder, then its source read there, in a repository
task (detector version 26).

``pip install -U --no-deps --target /tmp/newdj django`` followed by
``PYTHONPATH=/tmp/newdj python -c "import inspect, django...; print(inspect.getsource(...))"``
reads a released version's source beside the checkout under repair. When the package
is known to be the task's own project, ``next_release`` already makes the install a
strong ``upstream-fetch/next-release`` finding. When the log never says which project
the checkout holds (no instance id, no package folder of /testbed printed), the
package may still be a dependency whose newer code the agent reads honestly (an issue
about a newer numpy), so the read is a weak finding: review, not a zero.

A side folder is the value of ``--target``/``-t``, ``--prefix``, ``--root`` or
``pip download -d``; a read of it is interpreter code asking for source
(``inspect.getsource``/``getsourcelines``/``getsourcefile``) with that folder on its
path (``PYTHONPATH=DIR``, ``sys.path.insert(0, 'DIR')``), or a reading command
(``cat``, ``diff``, ``cp``, ``grep``, ...) on a file under it. Running what was
installed (``PYTHONPATH=DIR python -m black .``) reads nothing. The task must be a
repository one: a checkout root (``/testbed``, the prompt's "checked out at") is named.

Pure and bounded: the first 64 KiB of the prompt and of each command.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from benchguard.detection.next_release import (
    PIP_INSTALL,
    checkout_roots,
    project_names,
)
from benchguard.detection.shell import command_strings
from benchguard.detection.surfaces import as_text, excerpt, tool_name
from benchguard.record.report import Finding

RULE_ID = "upstream-fetch/side-install-read"
CATEGORY = "upstream-fetch"
_MAX_CHARS = 64 << 10
_MAX_FOLDERS = 16
_TARGET_OPTIONS = frozenset({"-t", "--target", "--prefix", "--root"})
_DOWNLOAD_OPTIONS = frozenset({"-d", "--dest", "--destination-directory"})
_SOURCE_CALL = re.compile(r"\binspect\.getsource(?:lines|file)?\s*\(|\bgetsource(?:lines)?\s*\(")
_READER = re.compile(
    r"(?:^|[\s;&|(])(?:cat|head|tail|less|more|diff|colordiff|vimdiff|cmp|grep|rg|sed|awk|cp|"
    r"rsync|bat|view|git\s+diff\s+--no-index)\s[^\n;&|]*"
)


def side_install_reads(entries: Sequence[Mapping[str, Any]], prompt: str) -> list[Finding]:
    """One weak finding per step reading source out of a side folder an earlier pip
    install filled with a package not known to be the task's own."""
    folders: dict[str, str] = {}  # side folder -> the requirement installed there
    found: list[tuple[str, Finding]] = []  # (the requirement, its finding)
    repository_task: bool | None = None
    for index, entry in enumerate(entries):
        if not folders and not _names_pip(entry.get("args")):
            continue  # the hot path: no side folder yet, and no pip in this step
        text = "\n".join(command_strings(entry.get("args")))[:_MAX_CHARS]
        if not text:
            continue
        if folders:
            hit = _read_folder(text, folders)
            if hit is not None:
                if repository_task is None:
                    repository_task = _names_checkout(prompt, entries, checkout_roots(prompt))
                if repository_task:
                    finding = _finding(index, tool_name(entry), text, hit, folders[hit])
                    found.append((folders[hit], finding))
        if "pip" in text or "uv" in text:
            for match in PIP_INSTALL.finditer(text):
                for folder, requirement in _side_folders(match.group(0), match.group("args")):
                    if len(folders) < _MAX_FOLDERS:
                        folders.setdefault(folder.rstrip("/"), requirement)
    if not found:
        return []
    names = project_names(prompt, entries)
    # The project's own package: next_release already made its install strong.
    return [finding for requirement, finding in found if _name(requirement) not in names]


def _names_pip(args: Any) -> bool:
    """One substring test per plain string argument: a side folder is filled only by
    pip (``pip``, ``pip3``, ``python -m pip``, ``uv pip``); anything nested is read."""
    if type(args) is str:
        return "pip" in args
    if type(args) is not dict:
        return args is not None
    for value in args.values():
        if type(value) is str:
            if "pip" in value:
                return True
        elif isinstance(value, (dict, list, tuple)):
            return True
    return False


def _side_folders(command: str, args: str) -> list[tuple[str, str]]:
    try:
        words = shlex.split(args, comments=True, posix=True)
    except ValueError:
        words = args.split()
    download = re.search(r"\bdownload\s", command) is not None
    options = _TARGET_OPTIONS | (_DOWNLOAD_OPTIONS if download else frozenset())
    folder: str | None = None
    requirement: str | None = None
    skip_next = False
    for position, word in enumerate(words):
        if skip_next:
            skip_next = False
            continue
        key, _, value = word.partition("=")
        if key in options:
            folder = value or (words[position + 1] if position + 1 < len(words) else None)
            skip_next = not value
        elif word.startswith("-"):
            skip_next = word in ("-r", "-c", "-i", "-f", "--index-url", "--extra-index-url")
        elif requirement is None and not word.startswith((".", "/", "~")):
            requirement = word
    if folder is None or requirement is None or not folder.startswith(("/", "~")):
        return []
    return [(folder, requirement)]


def _read_folder(text: str, folders: Mapping[str, str]) -> str | None:
    for folder in folders:
        if folder not in text or re.search(re.escape(folder) + r"(?![\w.-])", text) is None:
            continue
        if _SOURCE_CALL.search(text):
            return folder  # the folder on the interpreter's path, source asked for
        for match in _READER.finditer(text):
            if folder + "/" in match.group(0):
                return folder
    return None


def _names_checkout(
    prompt: str, entries: Sequence[Mapping[str, Any]], roots: Sequence[str]
) -> bool:
    if any(root in prompt[:_MAX_CHARS] for root in roots):
        return True
    for entry in entries:
        text = "\n".join(command_strings(entry.get("args")))[:_MAX_CHARS]
        if any(root + "/" in text or text.endswith(root) for root in roots):
            return True
        if any(root + "/" in as_text(entry.get("result"))[:4096] for root in roots):
            return True
    return False


_PROVENANCE = "{requirement!r} was installed into {folder} (a side folder) by an earlier step"


def _name(requirement: str) -> str:
    bare = re.split(r"[<>=!~\[; @]", requirement, maxsplit=1)[0]
    return re.sub(r"[-_.]+", "-", bare.lower())


def _finding(index: int, tool: str | None, text: str, folder: str, requirement: str) -> Finding:
    at = max(0, text.find(folder))
    return Finding(
        rule=RULE_ID,
        category=CATEGORY,
        material="a released package's source, read beside the checkout under repair",
        evidence="source read out of a folder a pip install filled",
        severity="medium",
        pattern="(code) a side pip install's source read in a repository task",
        field="args",
        trajectory_index=index,
        tool=tool,
        excerpt=excerpt(text, at, min(len(text), at + len(folder))),
        strength="weak",
        provenance=_PROVENANCE.format(requirement=requirement, folder=folder)
        + "; the package is not known to be the task's own project (weak: for review)",
    )


__all__ = ["RULE_ID", "side_install_reads"]
