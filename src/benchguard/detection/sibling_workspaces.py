"""Another run's workspace, found by listing its siblings: ``ls -d
/tmp/devops-bench-workspace-*`` printed several workspaces, then the agent read a file
inside one that is not its own (issue 20's "leftovers in /tmp").

The workspaces a harness makes share one prefix and differ by a run id; a glob over
that id lists every run's folder, and a report or answer left in another one is an
earlier run's work. No profile pattern can tell the agent's own folder from the others
(its name is the same shape), so this is code: the agent's own workspace is the one it
``cd``-ed into, wrote into, or the log's own working directory (``source.cwd``); a read
inside a listed workspace that is none of these is strong. When the agent's own one is
not known, a read after a listing that showed two or more is strong too: at least one
of them is another run's, and the agent chose among them.

Pure, bounded: the first 64 KiB of each command and result, at most 256 workspaces.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import regex

from benchguard.detection.shell import command_strings
from benchguard.detection.surfaces import as_text, excerpt, tool_name
from benchguard.record.report import Finding

RULE_ID = "prior-run-leftovers/sibling-workspace"
CATEGORY = "prior-run-leftovers"
_MAX_CHARS = 64 << 10
_MAX_WORKSPACES = 256
# A glob over a run id in a workspace-like folder name (``*-workspace-*``, ``run_*``).
_LISTING = regex.compile(
    r"(?<![\w.-])(?P<prefix>/(?:tmp|var/tmp|scratch|work|runs?)/[\w.-]{0,80}?"
    r"(?:workspace|workdir|sandbox|run|attempt|trial|episode|job)[-_])\*"
)
_FOLDER = regex.compile(r"(?<![\w.-])/[\w./-]{1,300}")
_READ = regex.compile(
    r"(?:^|[\s;&|(])(?:cat|head|tail|less|more|grep|rg|sed|awk|jq|cp|rsync|tar|diff|"
    r"python3?|bat|strings|xxd|od)\b[^\n;&|]*"
)
_CD = regex.compile(r"(?:^|[\s;&|(])(?:cd|pushd)\s+(['\"]?)(?P<path>/[^\s;&|'\"]+)\1")
_WRITE = regex.compile(r"(?<![<>&\d])>>?\s*(['\"]?)(?P<path>/[^\s;&|'\"<>]+)\1")


def sibling_workspace_reads(
    entries: Sequence[Mapping[str, Any]], record: Mapping[str, Any]
) -> list[Finding]:
    """One finding per step reading inside a listed workspace not the agent's own."""
    listed: set[str] = set()
    source = record.get("source")
    cwd = source.get("cwd") if isinstance(source, Mapping) else None
    own_hints = [cwd] if isinstance(cwd, str) else []
    findings: list[Finding] = []
    # Steps before the first listing: what they say of the agent's own workspace is
    # read only once a workspace is listed (most records list none, and these regexes
    # over every command were a few % of a scan). Hints are only ever tested with
    # ``any``, so reading them late finds the same.
    unread: list[tuple[str, Mapping[str, Any]]] = []
    for index, entry in enumerate(entries):
        text = "\n".join(command_strings(entry.get("args")))[:_MAX_CHARS]
        if not text:
            continue
        if not listed:
            unread.append((text, entry))
        else:
            for earlier, step in unread:
                own_hints += _own_hints(earlier, step)
            unread.clear()
            own_hints += _own_hints(text, entry)
            own = {ws for ws in listed if any(_inside(hint, ws) for hint in own_hints)}
            hit = _read_elsewhere(text, listed, own)
            if hit is not None:
                findings.append(_finding(index, tool_name(entry), text, hit, known=bool(own)))
                continue
        # A listing globs with ``*`` (``_LISTING``): a command without one lists nothing.
        prefixes = [m.group("prefix") for m in _LISTING.finditer(text)] if "*" in text else []
        if prefixes and len(listed) < _MAX_WORKSPACES:
            result = as_text(entry.get("result"))[:_MAX_CHARS]
            for found in _FOLDER.finditer(result):
                path = found.group(0)
                for prefix in prefixes:
                    if path.startswith(prefix) and len(path) > len(prefix):
                        name = path[len(prefix) :].split("/", 1)[0]
                        listed.add(prefix + name)
    return findings


def _own_hints(text: str, entry: Mapping[str, Any]) -> list[str]:
    """Paths a step shows the agent working in: a ``cd``, a redirect's target, a file
    tool's write."""
    hints = [m.group("path") for m in _CD.finditer(text)]
    hints += [m.group("path") for m in _WRITE.finditer(text)]
    args = entry.get("args")
    write_path = args.get("path") if isinstance(args, Mapping) else None
    if isinstance(write_path, str) and _writes(tool_name(entry), args):
        hints.append(write_path)
    return hints


def _writes(tool: str | None, args: Any) -> bool:
    if not isinstance(args, Mapping):
        return False
    command = args.get("command")
    return (tool is not None and regex.search(r"(?i)write|edit|create", tool) is not None) or (
        command in ("create", "str_replace", "insert")
    )


def _inside(path: str, workspace: str) -> bool:
    return path == workspace or path.startswith(workspace + "/")


def _read_elsewhere(text: str, listed: set[str], own: set[str]) -> str | None:
    """The listed workspace a read in ``text`` reaches, when it is not the agent's."""
    if not own and len(listed) < 2:
        return None
    for read in _READ.finditer(text):
        for found in _FOLDER.finditer(read.group(0)):
            path = found.group(0)
            for workspace in sorted(listed):
                if _inside(path, workspace) and path != workspace and workspace not in own:
                    return path
    return None


def _finding(index: int, tool: str | None, text: str, path: str, *, known: bool) -> Finding:
    at = max(0, text.find(path))
    why = (
        "the agent's own workspace is another of them (it worked there)"
        if known
        else "the listing showed several, and the agent's own is not known"
    )
    return Finding(
        rule=RULE_ID,
        category=CATEGORY,
        material="another run's workspace (its report, answers or outputs)",
        evidence="a read inside a sibling workspace a glob listed",
        severity="high",
        pattern="(code) a read inside a workspace a glob over run ids listed",
        field="args",
        trajectory_index=index,
        tool=tool,
        excerpt=excerpt(text, at, min(len(text), at + len(path))),
        strength="strong",
        provenance=f"{path!r} lies in a workspace listed by a glob over run ids; {why}",
    )


__all__ = ["RULE_ID", "sibling_workspace_reads"]
