"""The mark of a run the machine failed, not the agent (``harness.box_shortage``).

A record carries it under ``infrastructure_error`` (the reason) and its ``error`` starts
with :data:`INFRASTRUCTURE_PREFIX`. It lives in the record layer because three layers
read it: the harness sets it and reruns such runs on ``--resume``, the scorer does not
gate a scan the shortage left incomplete (in a batch and in ``benchguard score`` alike),
and the row builder publishes that scan as ``unverified``, not ``flagged``.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from typing import Any

INFRASTRUCTURE_PREFIX = "infrastructure error: "
# The record's mark (its value: the reason). The batch reads it: such a run is errored
# (no credit), never gated for a scan it left incomplete, and run again by --resume.
INFRASTRUCTURE_ERROR_KEY = "infrastructure_error"


def mark_infrastructure(record: MutableMapping[str, Any], reason: str) -> None:
    """Error the run being recorded for a shortage of the machine (``reason``): its
    error says so first, an error the agent already had is kept after it (a full disk
    fails the agent's own writes too), and the record carries the mark."""
    earlier = record.get("error")
    message = INFRASTRUCTURE_PREFIX + reason
    if isinstance(earlier, str) and earlier:
        message += f" (and before it: {earlier})"
    record["status"] = "error"
    record["error"] = message
    record[INFRASTRUCTURE_ERROR_KEY] = reason


def infrastructure_reason(record: Mapping[str, Any] | object) -> str | None:
    """The mark's reason on a record (a mapping or a RunRecord), or None."""
    value = (
        record.get(INFRASTRUCTURE_ERROR_KEY)
        if isinstance(record, Mapping)
        else getattr(record, INFRASTRUCTURE_ERROR_KEY, None)
    )
    return value if isinstance(value, str) and value else None
