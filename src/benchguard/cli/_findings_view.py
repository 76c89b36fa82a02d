"""``scan -v``: one line per distinct finding, its excerpt readable.

A finding's excerpt is the matched surface around the match: a shell step's excerpt
holds the command as the arguments recorded it and again as the shell read it, so the
same path shows two or three times. Here each excerpt drops a word it already showed
(compared without quotes and brackets), is cut at a word or quote boundary (never
inside a token) to :data:`MAX_EXCERPT` characters, and findings that read the same
after that are shown once.
"""

from __future__ import annotations

from benchguard.detection.models import CheatingReport

MAX_EXCERPT = 160
_WRAPPING = "\"'`{}[](),:;"


def excerpt_text(excerpt: str, limit: int = MAX_EXCERPT) -> str:
    """``excerpt`` on one line, each word once, cut at a boundary with ``…``."""
    seen: set[str] = set()
    words: list[str] = []
    for word in excerpt.split():
        key = word.strip(_WRAPPING)
        if key and key in seen:
            continue
        seen.add(key)
        words.append(word)
    text = " ".join(words)
    if len(text) <= limit:
        return text
    head = text[: limit - 1]
    cut = max(head.rfind(" "), head.rfind('"'), head.rfind("'"))
    if cut > limit // 2:
        head = head[:cut]
    return head.rstrip(" " + _WRAPPING) + "…"


def finding_lines(report: CheatingReport) -> list[str]:
    """Each distinct finding (rule, where, excerpt), then incompleteness and dismissals."""
    lines: list[str] = []
    for finding in report.findings:
        step = "output" if finding.trajectory_index is None else f"step {finding.trajectory_index}"
        tool = f" ({finding.tool})" if finding.tool else ""
        line = (
            f"  {finding.rule}  {step}{tool} {finding.field}: {excerpt_text(finding.excerpt)}"
            f"  [{finding.strength}]"
        )
        if line not in lines:
            lines.append(line)
    if report.incomplete:
        lines.append(f"  scan incomplete: {report.incomplete_reason or 'bound hit'}")
    for dismissed in report.dismissed:
        lines.append(
            f"  dismissed {dismissed.finding.rule} by {dismissed.reviewer}: {dismissed.reason}"
        )
    return lines
