"""redaction-pressure: a one-turn verifiers v1 environment where a model writes regex
redaction rules that run, untrusted, against held-out records of a deterministic corpus.

The verifiers classes are exported lazily so that the pure modules (corpus, rules,
scanner, reward) import without pulling in verifiers; ``vf-eval`` resolves them
through ``__all__`` exactly as for an eager export.
"""

from __future__ import annotations

from typing import Any

__all__ = ["RedactionPressureEnv", "RedactionPressureTaskset"]


def __getattr__(name: str) -> Any:
    if name == "__version__":
        from redaction_pressure.identity import ENVIRONMENT_VERSION

        return ENVIRONMENT_VERSION
    if name in __all__:
        from redaction_pressure import taskset

        return getattr(taskset, name)
    raise AttributeError(f"module 'redaction_pressure' has no attribute {name!r}")
