"""Tables for people at a terminal, plain aligned lines everywhere else.

In a pipe or a CI log a Rich table becomes an 80-column box whose cells wrap into
unreadable fragments, so when the console is not a terminal the same table is printed
as one line per row: columns padded to their widest cell and separated by two spaces,
never wrapped. Cells are untrusted text (file names, record names): control
characters are shown escaped, so a record name cannot move the cursor or clear a CI
log's screen.
"""

from __future__ import annotations

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

_GAP = "  "


def print_table(console: Console, table: Table) -> None:
    """``table`` as a Rich table on a terminal, else as plain aligned lines."""
    if console.is_terminal:
        console.print(table)
        return
    for line in plain_lines(table):
        typer.echo(line, err=console.stderr)


def plain_lines(table: Table) -> list[str]:
    """The title (if any), the header and one line per row, aligned, never wrapped."""
    columns = [
        [printable(str(column.header)), *(_cell_text(cell) for cell in column.cells)]
        for column in table.columns
    ]
    if not columns:
        return []
    widths = [max(len(cell) for cell in cells) for cells in columns]
    justify = [column.justify for column in table.columns]
    lines = [printable(_cell_text(table.title))] if table.title else []
    caption = [printable(_cell_text(table.caption))] if table.caption else []
    for row in range(len(columns[0])):
        cells = []
        for position, cells_of_column in enumerate(columns):
            cell = cells_of_column[row]
            last = position == len(columns) - 1
            if justify[position] == "right":
                cell = cell.rjust(widths[position])
            elif not last:
                cell = cell.ljust(widths[position])
            cells.append(cell)
        lines.append(_GAP.join(cells).rstrip())
    return lines + caption


def printable(text: str) -> str:
    """``text`` with control characters (escape sequences, carriage returns, line
    breaks) shown as escapes, so one cell stays one line and cannot restyle a log."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


def _cell_text(cell: object) -> str:
    # A renderer joins a cell's several values with line breaks; on one line they are
    # separated by "; " instead (any other control character is escaped).
    text = cell.plain if isinstance(cell, Text) else "" if cell is None else str(cell)
    return printable(text.replace("\n", "; "))
