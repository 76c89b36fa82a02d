"""Standard input as an input lives in the workflows layer (``workflows._stdin``)."""

from __future__ import annotations

from benchguard.workflows._stdin import STDIN_LABEL, STDIN_NAME, spooled_stdin

__all__ = ["STDIN_LABEL", "STDIN_NAME", "spooled_stdin"]
