"""The scan's input gaps live in the workflows layer (``workflows._scan_gaps``)."""

from __future__ import annotations

from benchguard.workflows._scan_gaps import (
    EXIT_INCOMPLETE,
    FORMAT_PROFILES,
    InputGap,
    coverage_warnings,
    input_gaps,
    summary_line,
)

__all__ = [
    "EXIT_INCOMPLETE",
    "FORMAT_PROFILES",
    "InputGap",
    "coverage_warnings",
    "input_gaps",
    "summary_line",
]
