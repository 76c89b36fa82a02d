"""Effective settings live in the workflows layer (``workflows.settings``)."""

from __future__ import annotations

from benchguard.workflows.settings import DEFAULTS, effective, values

__all__ = ["DEFAULTS", "effective", "values"]
