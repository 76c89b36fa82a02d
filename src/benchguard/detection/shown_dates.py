"""Commit dates a record shows, for telling a commit beyond HEAD from a past one.

A hash the agent typed with no origin in the record (not from the prompt, not printed
by HEAD's history nor by a ref-widening command) is weak: it may be a past commit the
agent remembered. The record can still show which it is. ``git show HASH`` and ``git
cat-file -p HASH`` print the commit's date, and ``git log`` / ``git show`` of HEAD
itself (no revision, no path: its first commit is HEAD) printed HEAD's date earlier. A
commit dated after HEAD by more than :data:`MARGIN_SECONDS` cannot be one HEAD's
history holds in an ordinary repository: it is the task's future, and the hash read is
strong.

Only dates git prints itself are read: the default and ``--date=iso`` ``Date:`` lines
(author date), ``CommitDate:`` of ``--format=fuller``, and the raw ``author`` /
``committer`` lines of ``cat-file``. Author dates can precede commit dates (a rebase
keeps them), which is why the margin is a day and only a later date upgrades: a
record that shows nothing keeps the weak finding.

Pure and bounded: at most :data:`MAX_SCAN_CHARS` of an output are read.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta, timezone

import regex

MARGIN_SECONDS = 86_400
MAX_SCAN_CHARS = 64 * 1024

_GIT = r"\bgit(?:\s+(?:-[cC]\s+\S+|--no-pager|-P|--(?:git-dir|work-tree)[=\s]\S+))*\s+"
# HEAD's own history: log or show (or cat-file of HEAD) with options only, so the first
# commit it prints is HEAD (a revision or a path would print another commit first).
_HEAD_LOG = regex.compile(
    _GIT + r"(?:log|show|cat-file\s+-p\s+(?:HEAD|@))"
    r"(?:\s+(?:-[\w-]+(?:=\S+)?|\d+|HEAD|@|--))*\s*(?:$|[|;&\n])"
)
_DEFAULT_DATE = regex.compile(
    r"(?m)^(?:Date|CommitDate|AuthorDate):\s+(\w{3} \w{3} \d{1,2} \d\d:\d\d:\d\d \d{4} [+-]\d{4})\s*$"
)
_ISO_DATE = regex.compile(
    r"(?m)^(?:Date|CommitDate|AuthorDate):\s+(\d{4}-\d\d-\d\d[ T]\d\d:\d\d:\d\d ?[+-]\d\d:?\d\d)\s*$"
)
_RAW_DATE = regex.compile(
    r"(?m)^(committer|author) [^\n<]{0,200}<[^\n>]{0,200}> (\d{9,11}) ([+-]\d{4})\s*$"
)


def first_date(output: str) -> datetime | None:
    """The first commit date ``output`` shows (a raw committer line before its author
    line, as git prints them), ``None`` when it shows none."""
    text = output[:MAX_SCAN_CHARS]
    found: list[tuple[int, datetime]] = []
    match = _DEFAULT_DATE.search(text)
    if match is not None:
        parsed = _parse(match.group(1), "%a %b %d %H:%M:%S %Y %z")
        if parsed is not None:
            found.append((match.start(), parsed))
    match = _ISO_DATE.search(text)
    if match is not None:
        parsed = _parse(match.group(1).replace("T", " "), "%Y-%m-%d %H:%M:%S %z")
        if parsed is None:
            parsed = _parse(match.group(1).replace("T", " "), "%Y-%m-%d %H:%M:%S%z")
        if parsed is not None:
            found.append((match.start(), parsed))
    raw: dict[str, regex.Match[str]] = {}
    for line in _RAW_DATE.finditer(text):
        raw.setdefault(line.group(1), line)
    chosen = raw.get("committer") or raw.get("author")
    if chosen is not None:
        found.append((chosen.start(), _from_epoch(chosen.group(2), chosen.group(3))))
    return min(found)[1] if found else None


def head_date(commands: Sequence[str], outputs: Sequence[str]) -> tuple[int, datetime] | None:
    """(step, date) of the latest HEAD date the earlier steps printed (``commands`` and
    ``outputs`` by step), ``None`` when none did."""
    best: tuple[int, datetime] | None = None
    for index, (command, output) in enumerate(zip(commands, outputs, strict=True)):
        if not output or "git" not in command or _HEAD_LOG.search(command) is None:
            continue
        date = first_date(output)
        if date is not None and (best is None or date > best[1]):
            best = (index, date)
    return best


def after_head(shown: datetime, head: datetime) -> bool:
    """``shown`` is later than HEAD's date by more than the margin."""
    return shown - head > timedelta(seconds=MARGIN_SECONDS)


def _parse(text: str, layout: str) -> datetime | None:
    try:
        return datetime.strptime(text, layout)
    except ValueError:
        return None


def _from_epoch(seconds: str, offset: str) -> datetime:
    sign = -1 if offset.startswith("-") else 1
    zone = timezone(sign * timedelta(hours=int(offset[1:3]), minutes=int(offset[3:5])))
    return datetime.fromtimestamp(int(seconds), UTC).astimezone(zone)


__all__ = ["MARGIN_SECONDS", "after_head", "first_date", "head_date"]
