"""The error hierarchy: each kind maps to its documented exit code in one place."""

from __future__ import annotations

import pytest

from benchguard.errors import (
    EXIT_BAD_INPUT,
    EXIT_CODES,
    EXIT_INCOMPLETE,
    BadInputError,
    BenchguardError,
    ConfigError,
    EngineError,
    IncompleteWorkError,
    exit_code_for,
)


class _LayerError(BadInputError, ValueError):
    """A layer's error that older callers still catch as ValueError."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{path}: {reason}", reason=reason)


def test_kinds_map_to_documented_exit_codes() -> None:
    assert exit_code_for(BadInputError("x")) == EXIT_BAD_INPUT == 2
    assert exit_code_for(ConfigError("x")) == 2
    assert exit_code_for(EngineError("x")) == 2
    assert exit_code_for(IncompleteWorkError("x")) == EXIT_INCOMPLETE == 3
    assert exit_code_for(RuntimeError("x")) == EXIT_BAD_INPUT
    assert sorted(EXIT_CODES) == [0, 1, 2, 3]


def test_layer_error_keeps_value_error_and_reason() -> None:
    with pytest.raises(ValueError, match=r"^a\.yaml: bad key$") as caught:
        raise _LayerError("a.yaml", "bad key")
    assert isinstance(caught.value, BenchguardError)
    assert caught.value.reason == "bad key"
    assert BenchguardError("whole message").reason == "whole message"


class _AssignedReason(BadInputError, ValueError):
    """A layer's error that assigns its reason after init (like ResultsFileError)."""

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.reason = message


def test_subclasses_may_assign_their_reason() -> None:
    assigned = _AssignedReason("r.json", "bad")
    assert assigned.reason == "bad" and str(assigned) == "r.json: bad"
