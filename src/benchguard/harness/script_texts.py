"""Whether a program text a check gives inline (an awk program, a sed script) can
start another program.

The text is the task's own, but ``awk 'BEGIN{system("./run.sh")}'`` and
``sed -n 'e ./run.sh'`` run a workspace file as surely as ``sh run.sh``. awk is read
broadly (any ``system``, any single ``|``, which opens a pipe to or from a command,
any ``@load``/``@include``); sed by a walk over its commands, refusing what it does
not know (fail closed). Both return the reason, or None when the text only reads.
"""

from __future__ import annotations

import re

# gawk's indirect call (f = "system"; @f("./x")) names the function in a string; and
# print's '>' (always a redirection outside parentheses) writes to a file it names.
_AWK_RUNS = re.compile(r"\bsystem\b|(?<!\|)\|(?!\|)|@load|@include|@\w+\s*\(")
_AWK_WRITES = re.compile(r"\bprintf?\b[^;{}\n()]*>")
# sed commands that take no argument, or an optional number.
_SED_PLAIN = set("=dDgGhHnNpPxzFlLqQ")
_SED_TO_EOL = set("aicrRwWbtT:v#")
MAX_SED_COMMANDS = 500


def awk_runs_programs(text: str) -> str | None:
    found = _AWK_RUNS.search(text)
    if found is not None:
        return f"the awk program can start a command ({found.group(0)!r})"
    if _AWK_WRITES.search(text):
        return "the awk program writes to a file (print > FILE), which can be a grading file"
    return None


def sed_runs_programs(text: str, writes: list[str] | None = None) -> str | None:
    """The reason ``text`` (a sed script) can run a command: its ``e`` command or the
    ``e`` flag of ``s``; or that the script is not understood. The files its ``w`` and
    ``W`` commands and the ``w`` flag of ``s`` write are added to ``writes``."""
    i, count = 0, 0
    while i < len(text):
        count += 1
        if count > MAX_SED_COMMANDS:
            return "the sed script is too long to be read"
        while i < len(text) and text[i] in " \t\n;{}!":
            i += 1
        if i >= len(text):
            return None
        i = _skip_address(text, i)
        if i < 0:
            return "the sed script's address is not understood"
        while i < len(text) and text[i] in " \t!":
            i += 1
        if i >= len(text):
            return "the sed script ends after an address"
        command = text[i]
        i += 1
        if command in "{}":
            continue
        if command == "e":
            return "the sed script runs a command (e)"
        if command in _SED_PLAIN:
            while i < len(text) and text[i].isdigit():
                i += 1
            continue
        if command in _SED_TO_EOL:
            end = text.find("\n", i)
            if command in "bt" + "T":
                semi = text.find(";", i)
                end = semi if semi >= 0 and (end < 0 or semi < end) else end
            if command in "wW" and writes is not None:
                writes.append(text[i : len(text) if end < 0 else end].strip())
            i = len(text) if end < 0 else end
            continue
        if command in "sy":
            i = _skip_delimited(text, i, 2)
            if i < 0:
                return f"the sed {command} command is not closed"
            if command == "s":
                start = i
                while i < len(text) and (text[i].isalnum()):
                    i += 1
                flags = text[start:i]
                if "e" in flags:
                    return "the sed s command runs its result as a command (flag e)"
                if "w" in flags:
                    end = text.find("\n", i)
                    if writes is not None:
                        writes.append(text[i : len(text) if end < 0 else end].strip())
                    i = len(text) if end < 0 else end
            continue
        return f"the sed command {command!r} is not understood"
    return None


def _skip_address(text: str, i: int) -> int:
    """The index after the address at ``i`` (none, one or a range); -1 if malformed."""
    for part in range(2):
        if i < len(text) and (text[i].isdigit() or text[i] == "$"):
            i += 1
            while i < len(text) and (text[i].isdigit() or text[i] == "~"):
                i += 1
        elif i < len(text) and text[i] in "/\\":
            if text[i] == "\\":
                i += 1
            i = _skip_delimited(text, i, 1)
            if i < 0:
                return -1
            while i < len(text) and text[i] in "IM":
                i += 1
        elif part == 1 and i < len(text) and text[i] == "+":
            i += 1
            while i < len(text) and text[i].isdigit():
                i += 1
        if part == 0 and i < len(text) and text[i] == ",":
            i += 1
            continue
        break
    return i


def _skip_delimited(text: str, i: int, parts: int) -> int:
    """At ``i`` a delimiter, then ``parts`` fields ending in it (``\\`` escapes)."""
    if i >= len(text) or text[i] in "\n\\":
        return -1
    delimiter = text[i]
    i += 1
    for _ in range(parts):
        while i < len(text) and text[i] != delimiter:
            i += 2 if text[i] == "\\" else 1
        if i >= len(text):
            return -1
        i += 1
    return i
