"""CLI commands: scan_cmds (filled in by its component)."""

from __future__ import annotations

import typer


def register(app: typer.Typer) -> None:
    """Add this family's commands to ``app``."""
