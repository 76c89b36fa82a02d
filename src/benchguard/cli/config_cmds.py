"""``benchguard config``: the effective settings and where each came from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from benchguard.cli._output import fail, plain_console
from benchguard.cli._settings import effective
from benchguard.cli._view import print_table, printable
from benchguard.config import ALLOWED_KEYS, KEYS, find_config
from benchguard.errors import ConfigError


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""
    app.command(name="config")(config)


def config(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of a table.")] = False,
) -> None:
    """Print the effective settings (file over defaults) and where each came from.

    The file is benchguard.toml, or [tool.benchguard] in pyproject.toml, found from the
    working directory upward (BENCHGUARD_CONFIG names one; empty turns the search off).
    Allowed keys: profile, rules, dismissals, inventory_roots, format, engine,
    scheduler, workers. Flags given to a command override the file.

    Exit codes: 0 done, 2 bad input (docs/exit-codes.md).
    """
    err = plain_console(stderr=True)
    try:
        found = find_config()
        settings = effective({})
    except ConfigError as exc:
        raise fail(err, exc) from None
    shown = {key: _jsonable(settings[key].value) for key in ALLOWED_KEYS}
    if as_json:
        document = {
            "file": str(found.path) if found else None,
            "settings": {
                key: {"value": shown[key], "source": settings[key].source} for key in ALLOWED_KEYS
            },
        }
        typer.echo(json.dumps(document, indent=2, ensure_ascii=False))
        return
    out = plain_console()
    out.print(
        Text(printable(f"config file: {found.label if found else 'none found'}")), soft_wrap=True
    )
    table = Table(title="effective settings")
    for column in ("key", "value", "source", "meaning"):
        table.add_column(column)
    for key in ALLOWED_KEYS:
        value = shown[key]
        text = "" if value is None else ", ".join(value) if isinstance(value, list) else str(value)
        table.add_row(
            key, Text(printable(text)), Text(printable(settings[key].source)), KEYS[key].help
        )
    print_table(out, table)


def _jsonable(value: object) -> object:
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, list):
        return [str(v) for v in value]
    return value
