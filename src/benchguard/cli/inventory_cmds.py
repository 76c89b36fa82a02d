"""``benchguard inventory HOME``: which rules a home would generate before a run.

Thin: :func:`benchguard.workflows.inventory.inventory_home` computes the baseline
exactly as the harness does (the profile's own entries plus the top-level entries of
granted paths; the environment dotfiles are added by the inventory itself) and builds
the rules; this module prints a table or JSON.
``--inventory-root`` (or ``BENCHGUARD_INVENTORY_ROOTS``) adds roots as ``benchguard run``
does. Exit codes: 0 ok (with or without rules); 2 bad input (a missing or unreadable
HOME or root, an unknown profile), with a message naming it, never a traceback.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table
from rich.text import Text

from benchguard.cli._output import fail, plain_console
from benchguard.cli._profiles import ProfilesOption
from benchguard.cli._view import print_table
from benchguard.detection.inventory import (
    CATEGORY,
)
from benchguard.detection.models import Rule
from benchguard.errors import BenchguardError
from benchguard.harness.integrity import (
    INVENTORY_ROOT_FLAG,
    INVENTORY_ROOTS_ENV,
)
from benchguard.workflows.inventory import InventoryOptions, inventory_home
from benchguard.workflows.profiles import describe_names

# Characters of a pattern shown in the table; the middle is elided so both the home
# prefix and the entry's own name and boundary stay visible.
PATTERN_HEAD_CHARS = 24
PATTERN_TAIL_CHARS = 40

# Markup off: home entries and patterns (``z[bold]``, ``a[/b]``) print as themselves.
_out = plain_console()
_err = plain_console(stderr=True)


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""
    app.command(name="inventory")(inventory)


def inventory(
    home: Annotated[Path, typer.Argument(help="The agent home to inventory.", show_default=False)],
    profile: ProfilesOption = None,
    granted: Annotated[
        list[Path] | None,
        typer.Option(
            "--granted",
            help="A path granted to the agent (repeatable); its top-level home entry is "
            "exempt. A quoted '~/...' is read relative to HOME.",
            show_default=False,
        ),
    ] = None,
    roots: Annotated[
        list[Path] | None,
        typer.Option(
            INVENTORY_ROOT_FLAG,
            help="Another directory to inventory, e.g. /tmp (repeatable; env "
            f"{INVENTORY_ROOTS_ENV}, '{os.pathsep}'-separated). Must exist.",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print a JSON list of rules instead of a table.")
    ] = False,
) -> None:
    """Show the prior-run rules a home would generate: path rules and content fingerprints.

    Exit codes: 0 done, 2 bad input (docs/exit-codes.md).
    """
    try:
        result = inventory_home(InventoryOptions(home, profile, granted, roots))
    except BenchguardError as exc:
        raise fail(_err, exc) from None
    if as_json:
        typer.echo(json.dumps([rule.model_dump(mode="json") for rule in result.rules], indent=2))
        return
    print_table(_out, _rules_table(result.home, result.rules))
    paths = sum(rule_kind(rule) == "path" for rule in result.rules)
    extra = ", ".join(map(str, result.extra_roots))
    _out.print(
        f"{result.home}: {paths} leftover(s), {len(result.rules) - paths} content "
        f"fingerprint(s); profile {describe_names(result.profiles)}; exempt: "
        f"{', '.join(result.exempt) or 'none'}"
        + (f"; entries fingerprinted inside: {', '.join(result.inside)}" if result.inside else "")
        + (f"; extra roots: {extra}" if extra else ""),
        soft_wrap=True,
    )


def rule_kind(rule: Rule) -> str:
    """``path`` for a path rule, ``content`` for a fingerprint."""
    return "content" if rule.id.endswith("/content") else "path"


def rule_entry(rule: Rule) -> str:
    """The entry a rule was generated for: a home entry's name, an extra root's entry
    by its full path (ids are ``<category>/<entry>/<kind>``)."""
    entry = rule.id.removeprefix(CATEGORY + "/").rsplit("/", 1)[0]
    return entry.removeprefix("root:")


def shorten_pattern(pattern: str) -> str:
    """The pattern with its middle elided when too long for a table cell."""
    if len(pattern) <= PATTERN_HEAD_CHARS + PATTERN_TAIL_CHARS + 1:
        return pattern
    return pattern[:PATTERN_HEAD_CHARS] + "…" + pattern[-PATTERN_TAIL_CHARS:]


def _rules_table(home: Path, rules: tuple[Rule, ...]) -> Table:
    table = Table(title=Text(f"Inventory of {home}"), title_justify="left", header_style="bold")
    table.add_column("id", overflow="fold")
    table.add_column("kind")
    table.add_column("entry", overflow="fold")
    table.add_column("patterns", overflow="fold")
    for rule in rules:
        table.add_row(
            Text(rule.id),
            rule_kind(rule),
            Text(rule_entry(rule)),
            Text("\n".join(shorten_pattern(p) for p in rule.patterns)),
        )
    return table
