"""The ``--profile`` option, one declaration for every command that takes it."""

from __future__ import annotations

from typing import Annotated

import typer

from benchguard.errors import BadInputError

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


def one_profile_for_run(flags: list[str] | None) -> str | None:
    """The one profile ``run`` gives its harness (``None``: the configured one).

    The harness builds a batch's rules, home baseline and material fingerprints from a
    single profile, so a run cannot take a union yet; several names are refused (bad
    input) rather than one kept silently. ``scan`` and ``score`` take the union.
    """
    names = list(dict.fromkeys(flags or ()))
    if len(names) > 1:
        raise BadInputError(
            f"--profile given {len(names)} times ({', '.join(names)}): benchguard run uses "
            "one profile per batch; give one (scan and score of its results.json take the "
            "union of several)"
        )
    return names[0] if names else None


__all__ = ["ProfilesOption", "one_profile_for_run"]
