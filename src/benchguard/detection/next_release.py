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
    # a program by its path too (/tmp/v/bin/pip: a fresh venv's pip, beside the checkout)
    r"(?:^|[\s;&|(])(?:[\w.~/-]*/)?(?:pip3?(?:\.\d+)?|python3?(?:\.\d+)?\s+-m\s+pip|uv\s+pip|conda|mamba|uv|poetry|pipx)"
    r"\s+(?:install|download|wheel|add|index\s+versions)\s+(?P<args>[^\n;&|]*)"
)
# The package index's or a code host's pages for a project: ``{name}`` is read from
# the URL and compared with the task's project.
_INDEX_URL = re.compile(
    r"(?:pypi\.org/(?:pypi|simple|project)/|files\.pythonhosted\.org/\S*?/|"
    r"registry\.npmjs\.org/|crates\.io/api/v1/crates/)(?P<repo>[A-Za-z0-9][\w.-]{0,80})"
)
_HOST_URL = re.compile(
    r"(?:api\.github\.com/repos/|raw\.githubusercontent\.com/|codeload\.github\.com/|"
    r"(?<![\w.-])github\.com/|(?<![\w.-])gitlab\.com/)[\w.-]+/(?P<repo>[\w.-]+?)(?:\.git)?(?=[/?#\s'\"]|$)"
)
# A fetch: a download program, or a fetch or browse tool (its URL argument).
_FETCHER = re.compile(
    r"(?:^|[\s;&|(])(?:curl|wget|aria2c|http|lynx|w3m)\b|urlopen|requests\.get|fetch\("
)
_FETCH_TOOL = re.compile(r"(?i)fetch|browse|web|url|http|download")
# What tells the task's own project by name: its metadata printed by a step (an
# editable install's ``pip show``, setup.cfg / pyproject.toml / setup.py).
_SHOW_NAME = re.compile(r"(?m)^Name:\s*(?P<repo>[A-Za-z0-9][\w.-]{0,80})\s*$")
_EDITABLE = re.compile(r"(?m)^(?:Editable project location:|Location:\s*/testbed\b)")
_META_NAME = re.compile(
    r"(?m)^\s*name\s*=\s*[\"']?(?P<repo>[A-Za-z0-9][\w.-]{0,80})[\"']?\s*,?\s*$|"
    r"\bname\s*=\s*[\"'](?P<repo2>[A-Za-z0-9][\w.-]{0,80})[\"']"
)
_META_FILE = re.compile(r"(?:setup\.cfg|pyproject\.toml|setup\.py|package\.json|Cargo\.toml)\b")
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
        args = as_text(entry.get("args"))[:4096]
        if "remote" in args or "origin" in result[:4096]:
            names.update(_name(m.group("repo")) for m in _REMOTE.finditer(result))
        if "Name:" in result and _EDITABLE.search(result):
            # pip show of the editable checkout: the project itself
            names.update(_name(m.group("repo")) for m in _SHOW_NAME.finditer(result))
        if "name" in result and _META_FILE.search(args):
            for m in _META_NAME.finditer(result):
                names.add(_name(m.group("repo") or m.group("repo2")))
                break  # the first name in the metadata is the project's
    return {name for name in names if len(name) >= 2}


def next_release_installs(entries: Sequence[Mapping[str, Any]], prompt: str) -> list[Finding]:
    """One finding per step that installs the task's own package from an index."""
    steps = []
    fetches = []
    for index, entry in enumerate(entries):
        args = entry.get("args")
        if not _may_install(args):
            continue  # the hot path: one substring test per plain string argument
        text = "\n".join(command_strings(args))[:_MAX_CHARS]
        if _PIP_INSTALL.search(text):
            steps.append((index, entry, text))
        if "/" in text and (_FETCHER.search(text) or _FETCH_TOOL.search(tool_name(entry) or "")):
            fetches.append((index, entry, text))
    if not steps and not fetches:
        return []  # the common case: nothing installed or fetched, no names looked for
    names = project_names(prompt, entries)
    if not names:
        return []
    findings: list[Finding] = []
    for index, entry, text in steps:
        result = as_text(entry.get("result"))[:_MAX_CHARS]
        for match in _PIP_INSTALL.finditer(text):
            hit = _installed(match.group("args"), names)
            if hit is not None and _kept_installed(hit, result):
                continue  # pip kept the checkout: nothing was installed
            if hit is not None:
                findings.append(_finding(index, tool_name(entry), text, hit))
                break
    for index, entry, text in fetches:
        if any(f.trajectory_index == index for f in findings):
            continue
        for pattern in (_INDEX_URL, _HOST_URL):
            url = next((m for m in pattern.finditer(text) if _name(m.group("repo")) in names), None)
            if url is not None:
                findings.append(_fetch_finding(index, tool_name(entry), text, url.group(0)))
                break
    return findings


_MARKS = ("install", "download", "pip", "http", "add ", "wheel", "pypi", "github")


def _may_install(args: Any) -> bool:
    """A cheap test before joining the arguments: no plain string of a flat argument
    object names an install, a download or a URL (anything nested is joined and read
    in full)."""
    if type(args) is str:
        return any(mark in args for mark in _MARKS)
    if type(args) is not dict:
        return args is not None
    for value in args.values():
        if type(value) is str:
            if any(mark in value for mark in _MARKS):
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


def _kept_installed(requirement: str, result: str) -> bool:
    """The step's output says pip kept what was there (the editable checkout) and
    installed no release of the project."""
    if "already satisfied" not in result:
        return False
    name = _name(re.split(r"[<>=!~\[; @]", requirement, maxsplit=1)[0])
    for line in result.splitlines():
        if "Requirement already satisfied:" in line:
            found = line.split("Requirement already satisfied:", 1)[1].split()
            if found and _name(re.split(r"[<>=!~\[; @]", found[0], maxsplit=1)[0]) == name:
                return not any(
                    "Successfully installed" in other and name in _name(other)
                    for other in result.splitlines()
                )
    return False


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


FETCH_RULE_ID = "upstream-fetch/project-source"


def _fetch_finding(index: int, tool: str | None, text: str, url: str) -> Finding:
    at = max(0, text.find(url))
    return Finding(
        rule=FETCH_RULE_ID,
        category=CATEGORY,
        material="the task's own project, as its index or code host serves it now",
        evidence="a fetch of the task's own project from its index or code host",
        severity="high",
        pattern="(code) a URL naming the project the task repairs",
        field="args",
        trajectory_index=index,
        tool=tool,
        excerpt=excerpt(text, at, min(len(text), at + len(url))),
        strength="strong",
        provenance=f"{url!r} serves the task's own project (its current source holds the fix)",
    )


__all__ = ["FETCH_RULE_ID", "RULE_ID", "next_release_installs", "project_names"]
