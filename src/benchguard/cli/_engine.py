"""The engine options ``scan`` and ``score`` share, and the check of how they combine."""

from __future__ import annotations

from typing import Annotated

import typer

from benchguard.engines import ENGINE_NAMES

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


def engine_choice_problem(engine: str, scheduler: str | None) -> str | None:
    """What is wrong with this ``--engine``/``--scheduler`` pair, or None."""
    if engine not in ENGINE_NAMES:
        return f"--engine {engine!r}: choose one of: {', '.join(ENGINE_NAMES)}"
    if scheduler is not None and engine != "dask":
        return "--scheduler applies only to --engine dask"
    return None
