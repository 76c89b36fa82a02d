"""One error hierarchy for benchguard, and the one place errors become exit codes.

Every error a person can act on derives from :class:`BenchguardError`: it carries the
full message (naming the file, field or value and what is allowed), the bare
``reason`` (what is wrong, without the name), and the exit code the CLI ends with.
Each layer subclasses one of the kinds below, so a command catches
``BenchguardError`` once instead of a list of unrelated classes, and
:func:`exit_code_for` is the only mapping from errors to exit codes.

Exit codes are the project's documented ones: 0 ok, 1 findings (or attention where a
command documents it), 2 bad input, 3 incomplete work (something skipped, errored or
interrupted). A layer's error that also has to stay a ``ValueError`` for older callers
inherits from both, e.g. ``class RulesetError(BadInputError, ValueError)``.
"""

from __future__ import annotations

from typing import ClassVar

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_BAD_INPUT = 2
EXIT_INCOMPLETE = 3

EXIT_CODES: dict[int, str] = {
    EXIT_OK: "ok",
    EXIT_FINDINGS: "findings, or attention where the command documents it",
    EXIT_BAD_INPUT: "bad input: a flag, file, field or value that cannot be used",
    EXIT_INCOMPLETE: "incomplete work: something was skipped, errored or interrupted",
}


class BenchguardError(Exception):
    """An error for a person: ``str(error)`` is the whole message, ``reason`` the part
    that says what is wrong (without the file or flag it is about)."""

    exit_code: ClassVar[int] = EXIT_BAD_INPUT

    def __init__(self, message: str, *, reason: str | None = None) -> None:
        super().__init__(message)
        # Stored privately: a subclass may compute ``reason`` with its own property.
        self._reason = message if reason is None else reason

    @property
    def reason(self) -> str:
        return self._reason

    @reason.setter
    def reason(self, value: str) -> None:
        self._reason = value


class BadInputError(BenchguardError):
    """A flag, file, field or value that cannot be used (exit 2)."""

    exit_code: ClassVar[int] = EXIT_BAD_INPUT


class ConfigError(BadInputError):
    """A configuration file or a setting in it that cannot be used."""


class EngineError(BadInputError):
    """A scan engine or scheduler that cannot be used as asked."""


class IncompleteWorkError(BenchguardError):
    """Work that was skipped, errored or interrupted part-way (exit 3)."""

    exit_code: ClassVar[int] = EXIT_INCOMPLETE


def exit_code_for(error: BaseException) -> int:
    """The exit code a command ends with for ``error``: its own for a benchguard error,
    bad input for anything else a command chose to report rather than crash on."""
    if isinstance(error, BenchguardError):
        return error.exit_code
    return EXIT_BAD_INPUT
