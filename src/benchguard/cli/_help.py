"""Help text that reads like the other tools': ``--format [table|json|sarif|junit]``,
``--rules PATH``, flags with no type at all, never ``<str>``, ``<bool>`` or
``<list[Path]>``.

Typer's help writes each parameter's Python type in angle brackets unless the
parameter has a metavar. Choice options declare theirs (:func:`choices`); every other
parameter gets one from its type when the command is built (:class:`PlainHelpCommand`,
installed on every registered command by :func:`use_plain_help`), so a new option needs
nothing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import typer
from typer.core import TyperArgument, TyperCommand, TyperOption

from benchguard.workflows.exit_policy import EXIT_CODES_DOC


def choices(values: Iterable[str]) -> str:
    """The metavar listing ``values``: ``[a|b|c]``."""
    return "[" + "|".join(values) + "]"


_TYPE_METAVARS = {"Path": "PATH", "int": "N", "float": "NUMBER"}


def _type_metavar(param: TyperOption | TyperArgument) -> str:
    desc = param.type_descriptor
    if desc.is_choice:
        return choices(str(c) for c in desc.choices or ())
    if desc.is_path:
        return "PATH"
    if desc.is_ranged:
        return "N"
    name = param.bare_type()
    if name.startswith("list[") and name.endswith("]"):
        name = name[5:-1]
    return _TYPE_METAVARS.get(name, "TEXT")


def _no_type(ctx: object) -> None:
    return None


class PlainHelpCommand(TyperCommand):
    """A command whose every parameter shows a metavar, not a Python type."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if EXIT_CODES_DOC not in (self.help or "") and not self.epilog:
            # The codes are written once, in the page; every command's help points there.
            self.epilog = f"Exit codes: 0 ok, 2 bad input; see {EXIT_CODES_DOC}."
        for param in self.params:
            if isinstance(param, TyperArgument):
                if param.metavar is None:
                    param.metavar = (param.name or "arg").upper()
                # The argument's name already says what it is; its type column would
                # repeat it as ``<list[Path]>``.
                param.display_type_rich = _no_type  # type: ignore[method-assign]
            elif isinstance(param, TyperOption) and not param.is_flag and param.metavar is None:
                param.metavar = _type_metavar(param)


def use_plain_help(app: typer.Typer) -> None:
    """Build every command registered on ``app`` (and its sub-apps) as a
    :class:`PlainHelpCommand`, and wrap help text at spaces only."""
    _no_hyphen_breaks()
    for info in app.registered_commands:
        if info.cls in (None, TyperCommand):
            info.cls = PlainHelpCommand
    for group in app.registered_groups:
        if group.typer_instance is not None:
            use_plain_help(group.typer_instance)


def _no_hyphen_breaks() -> None:
    # Help paragraphs are wrapped by the text wrapper of the Click copy Typer ships; by
    # default it also breaks inside hyphenated words ("redaction-" / "pressure",
    # "docs/exit-" / "codes.md"), which splits names and paths a reader copies. Only
    # help text is wrapped by it (it is imported when a help paragraph is wrapped).
    try:
        from typer._click import _textwrap
    except ImportError:  # a Typer without its own Click copy: leave its wrapper be
        return
    base = _textwrap.TextWrapper
    if getattr(base, "benchguard_no_hyphen_breaks", False):
        return

    class _SpacesOnly(base):  # type: ignore[misc, valid-type]
        benchguard_no_hyphen_breaks = True

        def __init__(self, *args: Any, **kwargs: Any) -> None:
            kwargs.setdefault("break_on_hyphens", False)
            super().__init__(*args, **kwargs)

    _textwrap.TextWrapper = _SpacesOnly  # type: ignore[misc]
