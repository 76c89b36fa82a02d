"""Compatibility re-exports: the fail-closed reading of a stored report lives in
``benchguard.record.report``; these names stay so existing imports keep working."""

from __future__ import annotations

from benchguard.record.report import (
    KNOWN_STATUSES,
    carries_evidence,
    is_marked,
    is_marked_incomplete,
    stored_status,
)

__all__ = [
    "KNOWN_STATUSES",
    "carries_evidence",
    "is_marked",
    "is_marked_incomplete",
    "stored_status",
]
