"""benchguard as an Inspect extension.

Loaded through the ``benchguard`` entry point of the ``inspect_ai`` group (see
pyproject.toml): importing it registers the ``benchguard/integrity`` scorer and the
``benchguard/integrity`` hooks. The Scout scanner lives in
:mod:`benchguard.integrations.inspect.scout` (it needs inspect-scout).
"""

from __future__ import annotations

from benchguard.integrations.inspect._hooks import IntegrityHooks
from benchguard.integrations.inspect._scorer import integrity, verdict_score

try:
    # The Scout scanner registers only where inspect-scout is installed.
    from benchguard.integrations.inspect import scout as scout
except ModuleNotFoundError as exc:  # pragma: no cover - inspect-scout is a dev pin
    if exc.name != "inspect_scout":
        raise

__all__ = ["IntegrityHooks", "integrity", "verdict_score"]
