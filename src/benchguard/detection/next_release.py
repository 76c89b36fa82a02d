"""Installing a released version of the package under repair (SWE-bench-style tasks).

A repository task is set at a base commit; a later release of the same package holds
the fix. ``pip install django==5.0`` (or ``-U``, ``--pre``, a plain name that replaces
the editable checkout) in a task about ``django__django-11099`` reads the answer from
the package index. The package's name differs per record, so this is code rather than a
profile pattern: the project is named by a SWE-bench instance id in the prompt
(``owner__repo-N``) or by a code-host remote an earlier step printed
(``github.com/owner/repo``, as ``git remote -v`` shows it). An install of that name
(``-`` and ``_`` alike, case ignored) that is not the local checkout (``-e .``, a path)
makes a strong ``upstream-fetch/next-release`` finding; an install of anything else
(a test dependency) stays clean.

Pure and bounded: the first 64 KiB of the prompt and of each command and result.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping, Sequence
from typing import Any

from benchguard.detection.shell import command_strings
from benchguard.detection.surfaces import as_text, excerpt, tool_name
from benchguard.record.report import Finding

RULE_ID = "upstream-fetch/next-release"
CATEGORY = "upstream-fetch"
_MAX_CHARS = 64 << 10
_INSTANCE_ID = re.compile(
    r"(?<![\w.-])[A-Za-z0-9][\w.-]{0,80}__(?P<repo>[A-Za-z0-9][\w.-]{0,80}?)-\d{1,7}(?![\w.])"
)
_REMOTE = re.compile(
    r"(?:github\.com|gitlab\.com|bitbucket\.org)[:/][\w.-]+/(?P<repo>[\w.-]+?)(?:\.git)?(?![\w.-])"
)
_PIP_INSTALL = re.compile(
    r"(?:^|[\s;&|(])(?:pip3?|python3?(?:\.\d+)?\s+-m\s+pip|uv\s+pip|conda|mamba)\s+install\s+(?P<args>[^\n;&|]*)"
)
# Options of pip install that take a value (their value is not a requirement).
_VALUED = frozenset(
    {
        "-r",
        "--requirement",
        "-c",
        "--constraint",
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "-t",
        "--target",
        "--prefix",
        "--root",
        "--src",
        "--python",
        "-e",
        "--editable",
        "--config-settings",
        "-C",
        "--platform",
        "--python-version",
    }
)


def _name(text: str) -> str:
    return re.sub(r"[-_.]+", "-", text.lower())


def project_names(prompt: str, entries: Sequence[Mapping[str, Any]]) -> set[str]:
    """The names the task's project goes by: an instance id's repository in the prompt,
    or a code-host remote's repository a step printed."""
    names = {_name(m.group("repo")) for m in _INSTANCE_ID.finditer(prompt[:_MAX_CHARS])}
    for entry in entries:
        result = as_text(entry.get("result"))[:_MAX_CHARS]
        if "remote" in as_text(entry.get("args"))[:4096] or "origin" in result[:4096]:
            names.update(_name(m.group("repo")) for m in _REMOTE.finditer(result))
    return {name for name in names if len(name) >= 2}


def next_release_installs(entries: Sequence[Mapping[str, Any]], prompt: str) -> list[Finding]:
    """One finding per step that installs the task's own package from an index."""
    steps = []
    for index, entry in enumerate(entries):
        args = entry.get("args")
        if not _may_install(args):
            continue  # the hot path: one substring test per plain string argument
        text = "\n".join(command_strings(args))[:_MAX_CHARS]
        if "install" in text and _PIP_INSTALL.search(text):
            steps.append((index, entry, text))
    if not steps:
        return []  # the common case: nothing installed, no names looked for
    names = project_names(prompt, entries)
    if not names:
        return []
    findings: list[Finding] = []
    for index, entry, text in steps:
        for match in _PIP_INSTALL.finditer(text):
            hit = _installed(match.group("args"), names)
            if hit is not None:
                findings.append(_finding(index, tool_name(entry), text, hit))
                break
    return findings


def _may_install(args: Any) -> bool:
    """A cheap test before joining the arguments: no plain string of a flat argument
    object says ``install`` (anything nested is joined and read in full)."""
    if type(args) is str:
        return "install" in args
    if type(args) is not dict:
        return args is not None
    for value in args.values():
        if type(value) is str:
            if "install" in value:
                return True
        elif isinstance(value, (dict, list, tuple)):
            return True
    return False


def _installed(args: str, names: set[str]) -> str | None:
    """The requirement among ``args`` that names the project (not a local path)."""
    try:
        words = shlex.split(args, comments=True, posix=True)
    except ValueError:
        words = args.split()
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        if word in _VALUED:
            skip = True
            continue
        if word.startswith("-") or word.startswith((".", "/", "~")) or "://" in word:
            continue
        requirement = re.split(r"[<>=!~\[; @]", word, maxsplit=1)[0]
        if requirement and _name(requirement) in names:
            return word
    return None


def _finding(index: int, tool: str | None, text: str, requirement: str) -> Finding:
    at = max(0, text.find(requirement))
    return Finding(
        rule=RULE_ID,
        category=CATEGORY,
        material="a released version of the package under repair",
        evidence="an install of the task's own package from an index",
        severity="high",
        pattern="(code) pip install of the project the task repairs",
        field="args",
        trajectory_index=index,
        tool=tool,
        excerpt=excerpt(text, at, min(len(text), at + len(requirement))),
        strength="strong",
        provenance=f"{requirement!r} is the task's own project (a later release holds the fix)",
    )


__all__ = ["RULE_ID", "next_release_installs", "project_names"]
