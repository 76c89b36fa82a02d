"""The ``--profile`` option, one declaration for every command that takes it."""

from __future__ import annotations

from typing import Annotated

import typer

from benchguard.workflows.profiles import one_profile_for_run

ProfilesOption = Annotated[
    list[str] | None,
    typer.Option(
        "--profile",
        help="Rule profile name or profile YAML path; repeat it for the union of several "
        "(never only the last). auto (the default of scan and score) recognises the "
        "benchmark from each log.",
        show_default=False,
        metavar="NAME|PATH",
    ),
]


__all__ = ["ProfilesOption", "one_profile_for_run"]
