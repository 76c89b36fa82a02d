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
    # a program by its path too (/tmp/v/bin/pip: a fresh venv's pip, beside the checkout),
    # and pip's own options before the subcommand (pip -q install, pip --isolated download)
    r"(?:^|[\s;&|(])(?:[\w.~/-]*/)?(?:pip3?(?:\.\d+)?|python3?(?:\.\d+)?\s+-m\s+pip|uv\s+pip|conda|mamba|uv|poetry|pipx)"
    r"(?:\s+--?[A-Za-z][\w-]*(?:=\S+)?)*"
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
# A line may carry a viewer's line number (``cat -n``, an editor tool's view) or grep's
# ``file:line:`` before it.
_META_NAME = re.compile(
    r"(?m)^\s*(?:\d{1,6}[\t:|]\s*|[\w./-]{1,200}:(?:\d{1,6}:)?\s*)?"
    r"name\s*=\s*[\"']?(?P<repo>[A-Za-z0-9][\w.-]{0,80})[\"']?\s*,?\s*$|"
    r"\bname\s*=\s*[\"'](?P<repo2>[A-Za-z0-9][\w.-]{0,80})[\"']"
)
# ``python setup.py --name`` prints the name alone.
_SETUP_NAME = re.compile(r"\bsetup\.py\s+(?:-\S+\s+)*--name\b")
_BARE_NAME = re.compile(r"\A\s*(?P<repo>[A-Za-z0-9][\w.-]{0,80})\s*\Z")
# ``pip list`` / ``pip freeze`` of the checkout: a row whose location is the repository
# (``astropy 4.3.dev0 /testbed``), or ``-e git+...#egg=name`` / ``name @ file:///testbed``.
_LISTED_EDITABLE = re.compile(
    r"(?m)^(?P<repo>[A-Za-z0-9][\w.-]{0,80})\s+\S+\s+(?P<loc>/[\w./-]{1,200})\s*$"
    r"|#egg=(?P<egg>[A-Za-z0-9][\w.-]{0,80})"
    r"|^(?P<at>[A-Za-z0-9][\w.-]{0,80})\s*@\s*file://(?P<atloc>/[\w./-]{1,200})"
)
# An editable install of the checkout names the project it built.
_BUILT_EDITABLE = re.compile(
    r"(?:Running setup\.py develop for|Building editable for|Created wheel for)\s+"
    r"(?P<repo>[A-Za-z0-9][\w.-]{0,80})"
)
# A repository checkout's root (SWE-bench's /testbed, the prompt's "checked out at").
_CHECKOUT_ROOTS = ("/testbed",)
_CHECKED_OUT = re.compile(
    r"(?i)(?:checked out|cloned|repository|repo)\b[^.\n]{0,40}?\s(?:at|in|under)\s+"
    r"[`'\"]?(?P<root>/[\w.-]+(?:/[\w.-]+)*)"
)
# Top-level folders of a checkout that are no importable package of the project.
_NOT_PACKAGES = frozenset(
    {
        "tests",
        "test",
        "testing",
        "docs",
        "doc",
        "src",
        "lib",
        "scripts",
        "script",
        "build",
        "dist",
        "examples",
        "example",
        "bin",
        "tools",
        "tool",
        "benchmarks",
        "bench",
        "extras",
        "extra",
        "data",
        "ci",
        "conftest",
        "setup",
        "requirements",
        "site-packages",
        "node_modules",
        "js-tests",
        "js_tests",
        "changelog",
        "licenses",
        "static",
        "templates",
        "utils",
        "util",
        "vendor",
        "release",
        "asv-bench",
    }
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
    roots = _checkout_roots(prompt)
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
        if _SETUP_NAME.search(args):
            bare = _BARE_NAME.match(result[:200])
            if bare is not None:
                names.add(_name(bare.group("repo")))
        names.update(_name(m.group("repo")) for m in _BUILT_EDITABLE.finditer(result))
        if "pip" in args and ("list" in args or "freeze" in args):
            names.update(_listed_editable(result, roots))
    names.update(_checkout_packages(prompt, entries, roots))
    return {name for name in names if len(name) >= 2}


def _checkout_roots(prompt: str) -> tuple[str, ...]:
    roots = list(_CHECKOUT_ROOTS)
    for m in _CHECKED_OUT.finditer(prompt[:_MAX_CHARS]):
        root = m.group("root").rstrip("/.")
        if root.count("/") >= 1 and len(root) > 1 and root not in roots and len(roots) < 8:
            roots.append(root)
    return tuple(roots)


def _listed_editable(result: str, roots: tuple[str, ...]) -> set[str]:
    """Projects ``pip list`` / ``pip freeze`` shows installed from the checkout."""
    found: set[str] = set()
    for m in _LISTED_EDITABLE.finditer(result):
        if m.group("egg"):
            found.add(_name(m.group("egg")))
            continue
        name, location = m.group("repo"), m.group("loc")
        if not name:
            name, location = m.group("at"), m.group("atloc")
        if any(location.rstrip("/") == root for root in roots):
            found.add(_name(name))
    return found


def _checkout_packages(
    prompt: str, entries: Sequence[Mapping[str, Any]], roots: tuple[str, ...]
) -> set[str]:
    """The checkout's own top-level packages, by the paths steps name or print
    (``/testbed/astropy/modeling/core.py``, ``/testbed/src/attr/...``): a package that
    lives in the repository under repair is the project (or a part the same release
    ships)."""
    pattern = _root_packages(roots)
    found: set[str] = set()
    texts = [prompt[:_MAX_CHARS]]
    for entry in entries:
        texts.append("\n".join(command_strings(entry.get("args")))[:_MAX_CHARS])
        texts.append(as_text(entry.get("result"))[:_MAX_CHARS])
    for text in texts:
        if not any(root + "/" in text for root in roots):
            continue
        for m in pattern.finditer(text):
            name = m.group("pkg")
            if name.lower() not in _NOT_PACKAGES and not name.startswith("."):
                found.add(_name(name))
            if len(found) >= 16:
                return found
    return found


def _root_packages(roots: tuple[str, ...]) -> re.Pattern[str]:
    spelled = "|".join(re.escape(root) for root in roots)
    return re.compile(
        rf"(?<![\w./-])(?:{spelled})/(?:src/|lib/)?(?P<pkg>[A-Za-z_]\w{{1,80}})(?=/|[\s'\"`:)]|$)"
    )


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
                plain = _plain_install(match.group(0), hit)
                findings.append(_finding(index, tool_name(entry), text, hit, plain=plain))
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
        if word in ("-e", "--editable"):
            continue  # its value is read below: a remote one is no local checkout
        if word in _VALUED:
            skip = True
            continue
        if "://" in word:
            remote = _remote_requirement(word.split("=", 1)[-1] if word.startswith("-") else word)
            if remote is not None and remote in names:
                return word
            continue
        if word.startswith("-") or word.startswith((".", "/", "~")):
            continue
        requirement = re.split(r"[<>=!~\[; @]", word, maxsplit=1)[0]
        if requirement and _name(requirement) in names:
            return word
    return None


# A requirement by URL: a VCS checkout (``git+https://github.com/o/r@stable/5.0``,
# ``#egg=name``) or a release's archive (``.../astropy-5.0.tar.gz``).
_URL_REPO = re.compile(
    r"(?:github\.com|gitlab\.com|bitbucket\.org|codeberg\.org)[:/][\w.-]+/"
    r"(?P<repo>[\w.-]+?)(?:\.git)?(?=[@#/?]|$)"
)
_EGG = re.compile(r"[#&]egg=(?P<repo>[A-Za-z0-9][\w.-]{0,80})")
_ARCHIVE = re.compile(
    r"/(?P<repo>[A-Za-z][\w.]*?(?:-[A-Za-z][\w.]*?)*)-v?\d[\w.+!-]*\.(?:tar\.gz|tgz|zip|whl|tar\.bz2)$"
)


def _remote_requirement(url: str) -> str | None:
    """The project a requirement given by a remote URL installs; ``None`` for a local
    one (``file://``, ``git+file://``) or one that names none."""
    bare = re.sub(r"^[a-z]+\+", "", url.strip("'\""))
    if bare.startswith("file:"):
        return None
    egg = _EGG.search(bare)
    if egg is not None:
        return _name(egg.group("repo"))
    host = _URL_REPO.search(bare)
    if host is not None:
        return _name(host.group("repo"))
    archive = _ARCHIVE.search(bare.split("#", 1)[0].split("?", 1)[0])
    return _name(archive.group("repo")) if archive is not None else None


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


# What asks the index for a release on purpose: a newer or pre-release version, a
# replacement of what is installed, or a copy beside the checkout to read.
_ASKS_FOR_RELEASE = frozenset(
    {
        "-U",
        "--upgrade",
        "--pre",
        "--force-reinstall",
        "-I",
        "--ignore-installed",
        "-t",
        "--target",
        "--prefix",
        "--root",
        "--no-deps",
    }
)
_BARE_REQUIREMENT = re.compile(r"\A[A-Za-z0-9][\w.-]{0,80}\Z")


def _plain_install(command: str, requirement: str) -> bool:
    """``pip install numpy astropy``: the project by its bare name, no version, no
    upgrade, no side folder, with ``install`` (not ``download``/``wheel``).

    An honest agent does this when the checkout will not import (a missing dependency
    listed beside it, a build step not run): pip fetches the latest release, but the
    agent goes on working in the checkout. It may hold the fix, so it is evidence,
    but weak (review), not strong: a real mini-swe-agent run of astropy-14995 did
    exactly this and nothing more (bench/detection_corpus/real). A pin, ``-U``,
    ``--pre``, ``--target``, ``download`` or a URL asks for a release on purpose and
    stays strong."""
    if not _BARE_REQUIREMENT.match(requirement):
        return False
    try:
        words = shlex.split(command, comments=True, posix=True)
    except ValueError:
        words = command.split()
    if any(w in ("download", "wheel", "versions") for w in words):
        return False
    flags = {w.split("=", 1)[0] for w in words if w.startswith("-")}
    return not flags & _ASKS_FOR_RELEASE


def _finding(
    index: int, tool: str | None, text: str, requirement: str, *, plain: bool = False
) -> Finding:
    at = max(0, text.find(requirement))
    if plain:
        evidence, severity, strength = (
            "a plain install of the task's own package by name",
            "medium",
            "weak",
        )
        provenance = (
            f"{requirement!r} is the task's own project, installed by its bare name "
            "(the latest release may hold the fix; no pin, upgrade or side folder asked for it)"
        )
    else:
        evidence, severity, strength = (
            "an install of the task's own package from an index",
            "high",
            "strong",
        )
        provenance = f"{requirement!r} is the task's own project (a later release holds the fix)"
    return Finding(
        rule=RULE_ID,
        category=CATEGORY,
        material="a released version of the package under repair",
        evidence=evidence,
        severity=severity,
        pattern="(code) pip install of the project the task repairs"
        + (", unpinned" if plain else ""),
        field="args",
        trajectory_index=index,
        tool=tool,
        excerpt=excerpt(text, at, min(len(text), at + len(requirement))),
        strength=strength,
        provenance=provenance,
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


# Read by side_installs (a package installed into a side folder, then its source read).
PIP_INSTALL = _PIP_INSTALL
checkout_roots = _checkout_roots

__all__ = [
    "FETCH_RULE_ID",
    "PIP_INSTALL",
    "RULE_ID",
    "checkout_roots",
    "next_release_installs",
    "project_names",
]
