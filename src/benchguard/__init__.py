"""benchguard: keeps AI evaluations honest.

Subpackages: ``detection`` (verdict), ``scoring`` (consequence and composition),
``results`` (publication), ``harness`` (runs agents), ``importers`` (reads other
tools' logs). The RL environment lives in the sibling package ``redaction_pressure``.
"""

from __future__ import annotations

__version__ = "0.1.0"
