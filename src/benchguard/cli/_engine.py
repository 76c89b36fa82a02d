"""The engine options ``scan`` and ``score`` share; how they combine is checked by
:func:`benchguard.engines.engine_choice_problem`, re-exported here."""

from __future__ import annotations

from typing import Annotated

import typer

from benchguard.engines import engine_choice_problem

SchedulerOption = Annotated[
    str | None,
    typer.Option(
        "--scheduler",
        help="dask only: processes (default), threads, synchronous, or a distributed "
        "scheduler address (needs the 'distributed' package).",
        show_default=False,
    ),
]
WorkersOption = Annotated[
    int | None,
    typer.Option(
        "--workers", min=1, help="dask local workers (default: CPU count).", show_default=False
    ),
]

__all__ = ["SchedulerOption", "WorkersOption", "engine_choice_problem"]
