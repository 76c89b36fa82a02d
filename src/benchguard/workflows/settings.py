"""Effective settings for a command: its flags over the configuration file over the
built-in defaults (see :mod:`benchguard.config`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchguard.config import Setting, find_config, resolve
from benchguard.detection.rules import AUTO_PROFILE

DEFAULTS: dict[str, Any] = {
    # Recognised from each log by scan and score; the default profile for a run.
    "profile": AUTO_PROFILE,
    "rules": None,
    "dismissals": None,
    "inventory_roots": [],
    "format": "table",
    "engine": "serial",
    "scheduler": None,
    "workers": None,
}


def effective(flags: Mapping[str, Any]) -> dict[str, Setting]:
    """Every setting with its source; ``ConfigError`` for a configuration file that
    cannot be used (the command reports it as bad input)."""
    return resolve(find_config(), flags, DEFAULTS)


def values(flags: Mapping[str, Any]) -> dict[str, Any]:
    """Just the effective values."""
    return {key: setting.value for key, setting in effective(flags).items()}
