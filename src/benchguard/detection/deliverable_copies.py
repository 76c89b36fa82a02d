"""Leftovers found by the task's own deliverable name: a copy of what the prompt says
to write, read from another folder in the home or from /tmp, that the agent never
wrote itself (detector version 12).

An earlier run of the same task leaves its deliverable behind under a folder name no
rule can know (``~/k8s-fix-old/report.md``, ``/tmp/sum_attempt1/sum.py``); the file's
*name* is the prompt's. So, per record: the file names the prompt asks for (``Write
sum.py``, ``a report to report.md``), and every canonical path a step's arguments name
(the shell reader's spelling) whose last component is one of them, inside the home
(one folder down or deeper) or in /tmp. Not evidence: the agent wrote a file of that
name earlier or in the same step (its own deliverable read back), the path is inside
the recorded workspace, or it is the path the prompt gives. In /tmp, or in a folder
whose name says it is an earlier attempt (old, prev, backup, attempt, copy, last),
and when the read printed something (a failed read of a name is an agent checking
for its own file), the finding is strong. Elsewhere in the home it is no finding at
all: the agent's own workspace is usually there, and an imported log does not say
which folder that is.

What it cannot see: a copy renamed, a deliverable the prompt names without an
extension, a read by code that computes the name. Pure and bounded (the first
:data:`MAX_PROMPT_CHARS` of the prompt, :data:`MAX_NAMES` names).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping, Sequence
from typing import Any

from benchguard.detection.shell import command_strings
from benchguard.detection.surfaces import Surface, excerpt
from benchguard.record.report import Finding
from benchguard.record.rules import Strength

RULE_ID = "prior-run-leftovers/deliverable-copy"
CATEGORY = "prior-run-leftovers"
MAX_PROMPT_CHARS = 16 << 10
MAX_NAMES = 8

# A file the prompt asks the agent to produce: a verb of writing, then (within the
# sentence) a file name with an extension.
_ASKED = re.compile(
    r"(?i)\b(?:write|create|save|produce|generate|output|put|store|report|deliver)\b"
    r"[^.\n]{0,80}?(?<![\w./~-])((?:~?/?[\w.-]+/)*[\w-]+\.[A-Za-z]\w{0,7})(?![\w/])"
)
# A canonical path line of the args surface: in the home (``~/dir/.../name``) or /tmp.
_PATH_LINE = re.compile(r"^(?:~/[^\n/]+(?:/[^\n/]+)*|/(?:var/)?tmp(?:/[^\n/]+)+)$", re.M)
# A path typed in the arguments: in the home (any spelling) or /tmp.
_RAW_PATH = re.compile(
    r"(?<![\w.~/-])(?:~|/(?:var/)?tmp|/home/[\w.-]+|/root)(?:/[^\s'\"`;|&<>()\\]+)+"
)
_HOME = re.compile(r"^/(?:home/[\w.-]+|root)(?=/|$)")
# A folder name that says it holds an earlier attempt.
_EARLIER = re.compile(
    r"(?i)(?:^|[-_.])(?:old|prev|previous|prior|backup|bak|attempt\d*|copy|last|orig|archive)(?:$|[-_.\d])"
)
# Writing a file of this name: a redirection, tee, a heredoc target, cp/mv onto it, or
# a write tool's path with content.
_WRITE_MARK = re.compile(
    r"(?:>>?|\btee\b|\bcp\b|\bmv\b|\binstall\b|\btouch\b|-o\s|--output|\bwrite|\bcreate|"
    r"\bfile_text\b|\bcontent\b|\bnew_str\b|\bsave)",
    re.I,
)
_CONTENT_KEYS = frozenset({"file_text", "content", "contents", "new_str", "text", "data"})


def asked_names(prompt: str) -> dict[str, str | None]:
    """The deliverables' file names the prompt asks for, each with the full path it
    gives (``None`` when it gives only the name)."""
    names: dict[str, str | None] = {}
    for match in _ASKED.finditer(prompt[:MAX_PROMPT_CHARS]):
        given = match.group(1)
        base = posixpath.basename(given)
        if base and base not in names:
            names[base] = given if "/" in given else None
        if len(names) >= MAX_NAMES:
            break
    return names


def deliverable_copies(
    entries: Sequence[Mapping[str, Any]],
    surfaces: Sequence[Surface],
    prompt: str,
    workdir: str | None,
) -> list[Finding]:
    """One finding per step reading a copy of the prompt's deliverable it never wrote."""
    names = asked_names(prompt)
    if not names:
        return []
    written: set[str] = set()
    findings: list[Finding] = []
    # The workspace: the recorded one, and any folder a bare ``pwd`` printed (an
    # imported log knows no workdir, but the agent often asks its shell).
    workspaces = [w for w in (_spelled_workdir(workdir),) if w]
    for index, entry in enumerate(entries):
        if 2 * index >= len(surfaces):
            break
        surface = surfaces[2 * index].text
        # The common case: the step names no deliverable and asks for no pwd (substring
        # tests on the surface, which holds the typed arguments).
        named = [name for name in names if name in surface]
        if not named and "pwd" not in surface:
            continue
        args = entry.get("args")
        args_text = args if isinstance(args, str) else "\n".join(command_strings(args))
        hit = None
        wrote = {name for name in named if name in args_text and _writes(name, entry, args_text)}
        paths = [m.group(0) for m in _PATH_LINE.finditer(surface)] if named else []
        if named:
            paths += [_HOME.sub("~", m.group(0)) for m in _RAW_PATH.finditer(args_text)]
        for path in paths:
            path = posixpath.normpath(path)
            base = posixpath.basename(path)
            if base not in names or base in written or base in wrote:
                continue
            folder = posixpath.dirname(path)
            if folder in ("~", "") or any(_under(path, w) for w in workspaces):
                continue
            given = names[base]
            if given is not None and path.endswith(given.lstrip("~").lstrip("/")):
                continue
            if _strength(path) is None or not (
                _printed(entry.get("result")) or _copied(args_text, entry.get("result"))
            ):
                continue
            hit = path
            break
        written |= wrote
        printed = _printed_pwd(args_text, entry.get("result"))
        if printed is not None and len(workspaces) < MAX_NAMES:
            workspaces.append(printed)
        if hit is not None:
            findings.append(_finding(index, entry, hit))
    return findings


_PWD = re.compile(r"\s*pwd\s*\Z")
_PWD_LINE = re.compile(r"\s*(/[^\s]{0,4096})\s*(?:\n|\Z)")


def _printed_pwd(command: str, result: Any) -> str | None:
    if not isinstance(result, str) or not _PWD.match(command):
        return None
    line = _PWD_LINE.match(result)
    if line is None:
        return None
    folder = posixpath.normpath(line.group(1))
    return (
        None
        if folder in ("/", "/tmp", "/root") or re.fullmatch(r"/home/[^/]+", folder)
        else _spelled_workdir(folder)
    )


def _writes(name: str, entry: Mapping[str, Any], args_text: str) -> bool:
    args = entry.get("args")
    if isinstance(args, Mapping) and any(
        isinstance(key, str) and key.lower() in _CONTENT_KEYS for key in args
    ):
        return True
    for line in args_text.splitlines():
        # Judged per command of the line: ``cp /tmp/old/sum.py . && python3 sum.py``
        # reads sum.py in its copy, and the run after it writes nothing.
        for segment in _SEGMENTS.split(line):
            if name not in segment or _copy_source_only(name, segment):
                continue
            at = segment.find(name)
            while at != -1:
                if _WRITE_MARK.search(segment[max(0, at - 200) : at]):
                    return True
                at = segment.find(name, at + 1)
    return False


# The commands of a line: a redirection's ``>`` stays inside its command.
_SEGMENTS = re.compile(r"&&|\|\||;|(?<![>&|])\|(?![|&])")


def _strength(path: str) -> Strength | None:
    if path.startswith(("/tmp/", "/var/tmp/")):
        return "strong"
    folders = path.split("/")[1:-1]
    return "strong" if any(_EARLIER.search(folder) for folder in folders) else None


_FAILED = re.compile(
    r"No such file|Permission denied|cannot (?:open|access|stat)|not found|does not exist",
    re.I,
)


def _printed(result: Any) -> bool:
    """The read printed something other than an error."""
    text = result if isinstance(result, str) else ""
    return bool(text.strip()) and not (len(text) < 2000 and _FAILED.search(text))


_COPY = re.compile(r"^\s*(?:sudo\s+)?(?:cp|mv|rsync|install)\s")


def _copy_source_only(name: str, line: str) -> bool:
    """Every copy on the line has ``name`` among its sources only, not as its target
    (``cp /tmp/old/sum.py .`` reads sum.py; ``cp sum.py /tmp/bak/sum.py`` writes it)."""
    segments = [seg for seg in re.split(r"&&|\|\||[;&|]", line) if name in seg]
    if not segments or not all(_COPY.match(seg) for seg in segments):
        return False
    return all(name not in (seg.split() or [""])[-1] for seg in segments)


# A copy or a patch application succeeds silently: no output, no error, is a read.
_SILENT_USE = re.compile(r"(?:^|[\s;&|(])(?:cp|rsync|install|git\s+apply|git\s+am|patch)\s")


def _copied(args_text: str, result: Any) -> bool:
    text = result if isinstance(result, str) else ""
    return bool(_SILENT_USE.search(args_text)) and not (len(text) < 2000 and _FAILED.search(text))


def _spelled_workdir(workdir: str | None) -> str | None:
    if not workdir or not workdir.startswith("/"):
        return None
    match = re.match(r"^/(?:home/[^/]+|root)(?=/|$)", workdir)
    return "~" + workdir[match.end() :] if match else workdir.rstrip("/")


def _under(path: str, folder: str) -> bool:
    return path == folder or path.startswith(folder.rstrip("/") + "/")


def _finding(index: int, entry: Mapping[str, Any], path: str) -> Finding:
    tool = entry.get("name") if isinstance(entry.get("name"), str) else None
    why = (
        "a file named as the prompt's deliverable, read from /tmp or an earlier "
        "attempt's folder (outside the workspace), that no earlier step wrote"
    )
    return Finding(
        rule=RULE_ID,
        category=CATEGORY,
        material="a copy of this task's deliverable an earlier run left",
        evidence="a read of the prompt's deliverable from another folder",
        severity="high",
        pattern="(code) the prompt's deliverable name outside the workspace",
        field="args",
        trajectory_index=index,
        tool=tool,
        excerpt=excerpt(path, 0, min(len(path), 160)),
        strength="strong",
        provenance=why,
    )


__all__ = ["RULE_ID", "asked_names", "deliverable_copies"]
