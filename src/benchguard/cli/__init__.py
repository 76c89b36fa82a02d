"""The ``benchguard`` command line: thin wrappers that parse, call the cores, print.

Each command family lives in its own module and adds itself through ``register``;
this module only assembles them, so the families can change independently.
"""

from __future__ import annotations

from typing import Annotated

import typer

from benchguard.cli import (
    audit_tasks_cmds,
    config_cmds,
    harness_cmds,
    inventory_cmds,
    redaction_cmds,
    results_cmds,
    scan_cmds,
)
from benchguard.cli._help import use_plain_help

app = typer.Typer(
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


def _print_version(value: bool) -> None:
    if value:
        from benchguard import __version__

        typer.echo(f"benchguard {__version__}")
        raise typer.Exit()


@app.callback()
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


for _family in (
    harness_cmds,
    audit_tasks_cmds,
    scan_cmds,
    inventory_cmds,
    results_cmds,
    redaction_cmds,
    config_cmds,
):
    _family.register(app)


@app.command()
def version() -> None:
    """Print the benchguard version."""
    from benchguard import __version__

    typer.echo(__version__)


use_plain_help(app)


def main() -> None:
    app()
