"""``benchguard inventory HOME``: which rules a home would generate before a run.

Thin: it computes the baseline exactly as the harness does (the profile's own entries
plus the top-level entries of granted paths; the environment dotfiles are added by
the inventory itself), calls ``build_inventory_rules`` and prints a table or JSON.
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
from benchguard.cli._settings import values
from benchguard.cli._view import print_table
from benchguard.detection.inventory import (
    CATEGORY,
    ENVIRONMENT_DOTFILES,
    NESTED_ENVIRONMENT_DIRS,
    baseline_from_granted_paths,
    build_inventory_rules,
    list_home_entries,
)
from benchguard.detection.models import Rule
from benchguard.detection.rules import (
    profile_baseline,
)
from benchguard.errors import BadInputError, BenchguardError
from benchguard.harness.integrity import (
    INVENTORY_ROOT_FLAG,
    INVENTORY_ROOTS_ENV,
    check_roots_against_home,
    resolve_inventory_roots,
)
from benchguard.workflows.profiles import describe_names, profile_names

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
    absolute = Path(os.path.abspath(home))
    try:
        settings = values({"profile": None})
        names = profile_names(profile, settings["profile"])
        if not roots and not os.environ.get(INVENTORY_ROOTS_ENV, "").strip():
            # Flags, then the environment, then the config file's inventory_roots.
            roots = list(settings["inventory_roots"])
        problem = unreadable_home(absolute)
        if problem is not None:
            raise BadInputError(problem)
        # An unknown profile's message already lists the built-in ones.
        owned = frozenset().union(*(profile_baseline(name) for name in names))
        baseline = owned | baseline_from_granted_paths(
            absolute, [str(path) for path in granted or ()]
        )
        extra_roots = resolve_inventory_roots(os.environ, roots)
        check_roots_against_home(extra_roots, absolute)
    except BenchguardError as exc:
        raise fail(_err, exc) from None
    rules = build_inventory_rules(absolute, baseline=baseline, extra_roots=extra_roots)
    if as_json:
        typer.echo(json.dumps([rule.model_dump(mode="json") for rule in rules], indent=2))
        return
    print_table(_out, _rules_table(absolute, rules))
    exempt = [
        name
        for name in list_home_entries(absolute)
        if name in baseline or name in ENVIRONMENT_DOTFILES
    ]
    paths = sum(rule_kind(rule) == "path" for rule in rules)
    inside = [
        "~/" + folder
        for folder in NESTED_ENVIRONMENT_DIRS
        if folder not in baseline and (absolute / folder).is_dir()
    ]
    _out.print(
        f"{absolute}: {paths} leftover(s), {len(rules) - paths} content fingerprint(s); "
        f"profile {describe_names(names)}; exempt: {', '.join(exempt) or 'none'}"
        + (f"; entries fingerprinted inside: {', '.join(inside)}" if inside else "")
        + (f"; extra roots: {', '.join(map(str, extra_roots))}" if extra_roots else ""),
        soft_wrap=True,
    )


def unreadable_home(home: Path) -> str | None:
    """Why ``home`` cannot be inventoried, or ``None``. The inventory itself treats an
    unlistable home as empty (it must never block a run); here that would read as
    "no leftovers", so it is an error instead."""
    try:
        with os.scandir(home):
            return None
    except FileNotFoundError:
        return f"{home}: no such directory"
    except NotADirectoryError:
        return f"{home}: not a directory"
    except OSError as exc:
        return f"{home}: cannot list ({exc.strerror or exc})"


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
