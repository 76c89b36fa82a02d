"""How ``benchguard run`` reports each run to a person: what the agent did, then what the
task's checks said, then the gate, in words that never confuse the two.

The stored ``status`` (``success``, ``error``, ``timeout``, ``interrupted``) says whether
the agent process ran to its end; it is not whether the task was solved. The line says
"agent finished" for it, then "task passed", "task failed: check 'X'" (naming the check
that failed) or "gated" (a cheating run, scored 0 whatever its checks said). Only these
words change: results.json and rows.json keep their status values.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from benchguard.results.rows import ResultRow

AGENT_WORDS = {
    "success": "agent finished",
    "error": "agent errored",
    "timeout": "agent timed out",
    "interrupted": "run interrupted",
}


def run_line(row: ResultRow, checks: Sequence[Mapping[str, Any]] = ()) -> str:
    """``sum-numbers#1: agent finished; task failed: check 'total' (outcome 0.00);
    integrity clean``; ``checks`` is the record's verification report."""
    agent = AGENT_WORDS.get(row.status, f"agent {row.status}")
    outcome = "not scored" if row.outcome_score is None else f"outcome {row.outcome_score:.2f}"
    failed = [str(c.get("name") or "?") for c in checks if c.get("passed") is False]
    if row.catastrophic:
        kinds = ", ".join(row.catastrophic_kinds) or "catastrophic"
        task = f"gated to 0 ({kinds})"
    elif row.outcome_score is None:
        task = "task not scored"
    elif failed:
        more = f" (+{len(failed) - 1} more)" if len(failed) > 1 else ""
        task = f"task failed: check {failed[0]!r}{more} ({outcome})"
    elif row.outcome_score >= 1.0:
        task = f"task passed ({outcome})"
    else:
        task = f"task scored below full marks ({outcome})"
    why = f"; {row.error}" if row.error else ""
    return (
        f"{row.task_folder}#{row.iteration}: {agent}; {task}; integrity {row.integrity_status}{why}"
    )


class _Plain(logging.Formatter):
    """``warning: message``, the style of every other line benchguard prints."""

    def format(self, record: logging.LogRecord) -> str:
        return f"{record.levelname.lower()}: {record.getMessage()}"


def plain_logging() -> None:
    """Log warnings (from the harness and its helpers) as ``warning: ...`` on stderr."""
    handler = logging.StreamHandler()
    handler.setFormatter(_Plain())
    logging.basicConfig(level=logging.WARNING, handlers=[handler], force=True)
