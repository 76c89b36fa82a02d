"""The inventory workflow: which rules a home would generate before a run.

:func:`inventory_home` computes the baseline exactly as the harness does (the
profiles' own entries plus the top-level entries of granted paths; the environment
dotfiles are added by the inventory itself), adds the extra roots ``benchguard run``
would (flags, then the environment, then the config file), and builds the rules. A
home or root that cannot be used is a :class:`benchguard.errors.BadInputError`;
nothing here prints.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from benchguard.detection.inventory import (
    ENVIRONMENT_DOTFILES,
    NESTED_ENVIRONMENT_DIRS,
    baseline_from_granted_paths,
    build_inventory_rules,
    list_home_entries,
)
from benchguard.detection.models import Rule
from benchguard.detection.rules import profile_baseline
from benchguard.errors import BadInputError
from benchguard.harness.integrity import (
    INVENTORY_ROOTS_ENV,
    check_roots_against_home,
    resolve_inventory_roots,
)
from benchguard.workflows.profiles import profile_names
from benchguard.workflows.settings import values


@dataclass(frozen=True)
class InventoryOptions:
    """The command's options as given; each field is the flag of the same name."""

    home: Path
    profile: Sequence[str] | None = None
    granted: Sequence[Path] | None = None
    roots: Sequence[Path] | None = None


@dataclass(frozen=True)
class InventoryResult:
    """The rules and what the summary line names."""

    # The home, made absolute (its literal path is part of every path pattern).
    home: Path
    rules: tuple[Rule, ...]
    profiles: tuple[str, ...]
    extra_roots: tuple[Path, ...]
    # Home entries left out as baseline or environment.
    exempt: tuple[str, ...]
    # Environment folders whose entries are fingerprinted one by one ("~/.config").
    inside: tuple[str, ...]


def inventory_home(options: InventoryOptions) -> InventoryResult:
    """The rules for ``options.home``; :class:`BadInputError` naming what cannot be used."""
    absolute = Path(os.path.abspath(options.home))
    settings = values({"profile": None})
    names = profile_names(options.profile, settings["profile"])
    roots = list(options.roots or ())
    if not roots and not os.environ.get(INVENTORY_ROOTS_ENV, "").strip():
        # Flags, then the environment, then the config file's inventory_roots.
        roots = list(settings["inventory_roots"])
    problem = unreadable_home(absolute)
    if problem is not None:
        raise BadInputError(problem)
    # An unknown profile's message already lists the built-in ones.
    owned = frozenset().union(*(profile_baseline(name) for name in names))
    baseline = owned | baseline_from_granted_paths(
        absolute, [str(path) for path in options.granted or ()]
    )
    extra_roots = resolve_inventory_roots(os.environ, roots)
    check_roots_against_home(extra_roots, absolute)
    rules = build_inventory_rules(absolute, baseline=baseline, extra_roots=extra_roots)
    exempt = tuple(
        name
        for name in list_home_entries(absolute)
        if name in baseline or name in ENVIRONMENT_DOTFILES
    )
    inside = tuple(
        "~/" + folder
        for folder in NESTED_ENVIRONMENT_DIRS
        if folder not in baseline and (absolute / folder).is_dir()
    )
    return InventoryResult(absolute, tuple(rules), names, tuple(extra_roots), exempt, inside)


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


__all__ = ["InventoryOptions", "InventoryResult", "inventory_home", "unreadable_home"]
