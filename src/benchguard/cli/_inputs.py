"""The input collection ``scan`` and ``score`` share lives in the workflows layer."""

from __future__ import annotations

from benchguard.workflows._inputs import CollectedInputs, InputFile, collect_inputs

__all__ = ["CollectedInputs", "InputFile", "collect_inputs"]
