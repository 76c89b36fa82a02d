"""Consoles and message lines for the CLI, safe for untrusted text.

File names, record fields, task names, rule ids, patterns and error messages come from
files and flags the operator does not control. Rich would read ``[/i]`` in them as
markup (and crash on an unmatched closing tag, or swallow ``[bold]``) and ``:smile:``
as an emoji code. Every console made here has markup and emoji replacement off, so a
plain string prints as itself; the only styling is what a ``Text`` span adds.

Off a terminal (a pipe, a CI log, a file) nothing is wrapped: Rich would hard-wrap every
message at 80 columns, splitting a path or a command to copy (``benchguard score
RUN/results.json --dismissals RUN/dismissals.yaml``) across lines. Each print then
defaults to ``soft_wrap``; tables go through :func:`benchguard.cli._view.print_table`,
plain aligned lines off a terminal.
"""

from __future__ import annotations

from typing import Any

import typer
from rich.console import Console
from rich.text import Text

from benchguard.errors import EXIT_BAD_INPUT, BenchguardError, exit_code_for


class PlainConsole(Console):
    """A console whose prints are never hard-wrapped when it is not a terminal. The
    check is made at each print: the same console may write to a terminal in one run
    and to a pipe (or a test's captured stream) in another."""

    def print(self, *objects: Any, soft_wrap: bool | None = None, **kwargs: Any) -> None:
        if soft_wrap is None and not self.is_terminal:
            soft_wrap = True
        super().print(*objects, soft_wrap=soft_wrap, **kwargs)


def plain_console(*, stderr: bool = False, width: int | None = None) -> Console:
    """A console that never interprets markup, emoji codes or highlighting in strings,
    and never wraps off a terminal."""
    return PlainConsole(stderr=stderr, width=width, markup=False, emoji=False, highlight=False)


def labelled(label: str, style: str, message: str) -> Text:
    """``label`` styled, then ``message`` verbatim."""
    return Text.assemble((label, style), message)


def print_error(console: Console, message: str) -> None:
    console.print(labelled("error: ", "bold red", message), soft_wrap=True)


def print_warning(console: Console, message: str) -> None:
    console.print(labelled("warning: ", "bold yellow", message), soft_wrap=True)


def bad_input(console: Console, message: str) -> typer.Exit:
    """Print ``message`` as an error and return the exit for bad input, to ``raise``."""
    print_error(console, message)
    return typer.Exit(code=EXIT_BAD_INPUT)


def fail(console: Console, error: BenchguardError) -> typer.Exit:
    """Print ``error`` and return the exit its kind maps to (see
    :func:`benchguard.errors.exit_code_for`), to ``raise``."""
    print_error(console, str(error))
    return typer.Exit(code=exit_code_for(error))


__all__ = [
    "EXIT_BAD_INPUT",
    "PlainConsole",
    "bad_input",
    "fail",
    "labelled",
    "plain_console",
    "print_error",
    "print_warning",
]
