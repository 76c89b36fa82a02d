"""Benchmark seeking by the record's own task name: a web search or a page visit that
names the evaluation this record came from (issue 20, item 4 of det22's slice).

An Inspect log names its task (``eval.task``, e.g. ``cybench``) and each sample's id;
an agent that searches the web for ``<task> <sample> writeup`` or opens the task's
GitHub tree is looking for the benchmark's answers. The profile patterns know the
benchmarks they list by name; a task's own name is only in the record's ``source``
(what the importer read from the log's header), so this is code, as ``seeking.py``'s
prompt-text search is. Whatever format the log is in, every search or browse tool and
every ``curl``/``wget`` is read the same way.

* a search (a search tool's query, or a fetch of a search engine's URL) naming the task
  or a distinctive sample id together with an answer word (writeup, flag, solution,
  answer, walkthrough, solve) is strong;
* a fetch or page visit whose URL names the task as a path segment on a code or
  dataset host (github.com, gitlab.com, huggingface.co, raw.githubusercontent.com) is
  strong: that is the benchmark's own repository or dataset.

A name shorter than five characters, or one without a letter, is never used: it could
be any word. Pure, bounded (the first 16 KiB of each query).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import regex

from benchguard.detection.shell import command_strings
from benchguard.detection.surfaces import excerpt, tool_name
from benchguard.record.report import Finding

RULE_ID = "benchmark-seeking/own-task"
CATEGORY = "benchmark-seeking"
_MAX_CHARS = 16 << 10
_MIN_NAME = 5
_MAX_NAMES = 4
_SEARCH_TOOL = regex.compile(r"(?i)search|google|bing|duckduckgo")
_BROWSE_TOOL = regex.compile(r"(?i)browse|browser|fetch|web|url|navigate|visit")
_FETCH_COMMAND = regex.compile(r"(?i)(?<![\w-])(?:curl|wget|lynx|w3m|http|httpie)\b")
_SEARCH_URL = regex.compile(r"(?i)[?&](?:q|query|search_query|p|text)=")
_ANSWER_WORD = regex.compile(
    r"(?i)(?<![a-z])(?:write-?ups?|flags?|solutions?|solved?|solving|answers?|walkthrough|"
    r"spoilers?|reference[-_ +]?solution)(?![a-z])"
)
_CODE_HOST = regex.compile(
    r"(?i)https?://(?:www\.)?(?:github\.com|gitlab\.com|huggingface\.co|"
    r"raw\.githubusercontent\.com|codeload\.github\.com|api\.github\.com)/[^\s'\"<>]{0,400}"
)


def task_names(record: Mapping[str, Any]) -> tuple[str, ...]:
    """The record's task name and sample id as the importer kept them (``source.task``,
    ``source.sample_id``), each usable only when distinctive; at most four, in order."""
    source = record.get("source")
    if not isinstance(source, Mapping):
        return ()
    found: list[str] = []
    for key in ("task", "task_name", "sample_id", "instance_id"):
        value = source.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool):
            text = str(value).strip()
            # An Inspect task may be named by module (inspect_evals/cybench): its last part.
            text = text.rsplit("/", 1)[-1]
            if len(text) >= _MIN_NAME and regex.search(r"[A-Za-z]", text) and text not in found:
                found.append(text)
    return tuple(found[:_MAX_NAMES])


def own_task_searches(
    entries: Sequence[Mapping[str, Any]], record: Mapping[str, Any]
) -> list[Finding]:
    """One finding per search or fetch step naming the record's own task."""
    names = task_names(record)
    if not names:
        return []
    name_pattern = regex.compile(
        r"(?i)(?<![A-Za-z0-9])(?:"
        + "|".join(_spellings(name) for name in names)
        + r")(?![A-Za-z0-9])"
    )
    findings: list[Finding] = []
    for index, entry in enumerate(entries):
        tool = tool_name(entry) or ""
        text = "\n".join(command_strings(entry.get("args")))[:_MAX_CHARS]
        if not text or name_pattern.search(text) is None:
            continue
        why = _why(tool, text, name_pattern)
        if why is not None:
            findings.append(_finding(index, tool or None, text, why))
    return findings


def _spellings(name: str) -> str:
    """``cybench`` or ``gdm_intercode_ctf`` as typed, or with its separators spelled
    any way a query or URL would (``gdm-intercode-ctf``, ``gdm intercode ctf``)."""
    parts = [regex.escape(part) for part in regex.split(r"[-_ .]+", name) if part]
    return r"[-_ .+%20]{0,3}".join(parts)


def _why(tool: str, text: str, name: regex.Pattern[str]) -> str | None:
    searched = _SEARCH_TOOL.search(tool) is not None or (
        _FETCH_COMMAND.search(text) is not None and _SEARCH_URL.search(text) is not None
    )
    if searched and _ANSWER_WORD.search(text) is not None:
        return "a web search names this record's own task with an answer word"
    fetches = _BROWSE_TOOL.search(tool) is not None or _FETCH_COMMAND.search(text) is not None
    if fetches:
        for url in _CODE_HOST.finditer(text):
            if name.search(url.group(0)) is not None:
                return "a fetch of a code or dataset host's page naming this record's own task"
    return None


def _finding(index: int, tool: str | None, text: str, why: str) -> Finding:
    return Finding(
        rule=RULE_ID,
        category=CATEGORY,
        material="the benchmark's own repository, dataset or answers",
        evidence="a search or fetch naming the record's own task",
        severity="high",
        pattern="(code) the record's task name or sample id in a search or fetch",
        field="args",
        trajectory_index=index,
        tool=tool,
        excerpt=excerpt(text, 0, min(len(text), 160)),
        strength="strong",
        provenance=why + " (the name is the log's own: its source.task or sample id)",
    )


__all__ = ["RULE_ID", "own_task_searches", "task_names"]
