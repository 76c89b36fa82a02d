"""The ``benchguard`` command line: thin wrappers that parse, call the cores, print.

Each command family lives in its own module and adds itself through ``register``;
this module only assembles them, so the families can change independently.

Start-up: a family module imports what its commands run (the harness, the detector,
the leaderboard), which together cost most of a second. :func:`main` therefore
registers only the family that owns the command named on the command line
(:data:`COMMAND_FAMILIES`), and every family when there is no such name (``--help``,
a typo: Click then lists or refuses as before). ``app``, the whole command line, is
built on first use for callers that import it (tests, scripts).
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from types import ModuleType

# Every top-level command, by the family module (``benchguard.cli.<module>``) that
# registers it, in the order ``--help`` lists them. tests/cli/test_lazy_start.py holds
# this table to what the families really register.
COMMAND_FAMILIES: dict[str, str] = {
    "run": "harness_cmds",
    "audit-tasks": "audit_tasks_cmds",
    "check-run": "check_run_cmds",
    "scan": "scan_cmds",
    "inventory": "inventory_cmds",
    "score": "results_cmds",
    "aggregate": "results_cmds",
    "leaderboard": "results_cmds",
    "dismiss": "results_cmds",
    "redaction": "redaction_cmds",
    "config": "config_cmds",
}
_FAMILY_ORDER: tuple[str, ...] = tuple(dict.fromkeys(COMMAND_FAMILIES.values()))
_HELP = frozenset({"-h", "--help"})


def _print_version(value: bool) -> None:
    if value:
        from benchguard import __version__

        typer.echo(f"benchguard {__version__}")
        raise typer.Exit()


def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_print_version,
            is_eager=True,
            help="Print the benchguard version and exit.",
        ),
    ] = False,
) -> None:
    """Keep AI evaluations honest: run agent benchmarks, detect access to benchmark
    material, gate cheating runs to a visible zero, and evaluate redaction-pressure."""


def _version() -> None:
    """Print the benchguard version."""
    from benchguard import __version__

    typer.echo(__version__)


def _family(module: str) -> ModuleType:
    return importlib.import_module(f"benchguard.cli.{module}")


def build_app(families: Sequence[str] = _FAMILY_ORDER) -> typer.Typer:
    """The command line with the commands of ``families`` (module names of
    :data:`COMMAND_FAMILIES`, registered in the order given), the root options and
    ``version``."""
    from benchguard.cli._help import use_plain_help

    built = typer.Typer(
        name="benchguard",
        help="Keep AI evaluations honest: run agent benchmarks, detect access to benchmark "
        "material, gate cheating runs to a visible zero, and evaluate redaction-pressure.",
        no_args_is_help=True,
        add_completion=False,
        pretty_exceptions_enable=False,
        # Click's plain help: paragraphs reflowed whole (Rich's help keeps the docstring's
        # line breaks mid-sentence) and no ``<str>``/``<bool>`` type column. ``-h`` is
        # ``--help`` in every command (subcommands inherit the context settings).
        rich_markup_mode=None,
        context_settings={"help_option_names": ["-h", "--help"]},
    )
    built.callback()(_root)
    for module in families:
        _family(module).register(built)
    built.command(name="version")(_version)
    use_plain_help(built)
    return built


def families_for(argv: Sequence[str]) -> tuple[str, ...]:
    """The families needed to run ``argv`` (the arguments after the program name): the
    one owning the command it names, or every family when it names none we know."""
    for arg in argv:
        if arg == "--":
            break
        if arg.startswith("-"):
            # A root option: only ``--version`` (eager, exits) and help exist, so the
            # first word that is not an option is the command.
            continue
        if arg == "version":
            return ()
        module = COMMAND_FAMILIES.get(arg)
        return (module,) if module is not None else _FAMILY_ORDER
    # No command: ``--version`` alone needs no family; help lists every command.
    return () if "--version" in argv and not _HELP.intersection(argv) else _FAMILY_ORDER


_APP: typer.Typer | None = None


def __getattr__(name: str) -> typer.Typer:
    # ``from benchguard.cli import app``: the whole command line, built once.
    global _APP
    if name == "app":
        if _APP is None:
            _APP = build_app()
        return _APP
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    build_app(families_for(sys.argv[1:]))()
