"""``benchguard score``: rescan stored or imported records, apply reviewed dismissals,
gate, finalize and write results.json, rows.json and manifest.json.

Thin: the options become a :class:`~benchguard.workflows.score_command.ScoreOptions`
(one field per parameter, of the same name, so an option is added as a parameter and a
field), :func:`~benchguard.workflows.score_command.score_command` checks and scores,
:mod:`benchguard.cli._score_view` prints, and the command exits with the result's code.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from benchguard.cli._engine import SchedulerOption, WorkersOption
from benchguard.cli._help import choices
from benchguard.cli._knowledge import (
    BaseCommitOption,
    InstancesOption,
    MaterialOption,
    RepoOption,
)
from benchguard.cli._output import fail, plain_console
from benchguard.cli._profiles import ProfilesOption
from benchguard.cli._score_view import print_score
from benchguard.engines import ENGINE_NAMES
from benchguard.errors import BenchguardError
from benchguard.results.formats import OUTPUT_FORMATS
from benchguard.workflows.score_command import ScoreOptions, score_command


def score(
    results: Annotated[
        list[Path],
        typer.Argument(
            help="results.json files (list or object layout), any other log scan reads "
            "(Inspect .eval/.json, verifiers traces, SWE-agent, mini-swe-agent, Claude "
            "Code), or directories searched (recursively, sorted) for results.json files.",
            show_default=False,
        ),
    ],
    profile: ProfilesOption = None,
    rules: Annotated[
        Path | None,
        typer.Option(
            "--rules", help="Extra rules YAML, appended to the profile.", show_default=False
        ),
    ] = None,
    dismissals: Annotated[
        Path | None,
        typer.Option(
            "--dismissals", help="Reviewed dismissals (YAML or JSON) to apply.", show_default=False
        ),
    ] = None,
    engine: Annotated[
        str | None,
        typer.Option(
            "--engine",
            help="Rescan engine (default: serial).",
            show_default=False,
            metavar=choices(ENGINE_NAMES),
        ),
    ] = None,
    scheduler: SchedulerOption = None,
    workers: WorkersOption = None,
    out_dir: Annotated[
        Path | None,
        typer.Option(
            "-o",
            "--out",
            help="Write here instead of beside each input; with several inputs, each "
            "input's location relative to their common directory is mirrored under DIR "
            "(created with any missing parents).",
            show_default=False,
        ),
    ] = None,
    output_format: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="What to print (default: table).",
            show_default=False,
            metavar=choices(OUTPUT_FORMATS),
        ),
    ] = None,
    fail_on_review: Annotated[
        bool,
        typer.Option(
            "--fail-on-review",
            help="Exit 1 when a record is sent to review (only weak findings; not gated).",
        ),
    ] = False,
    material: MaterialOption = None,
    repo: RepoOption = None,
    base_commit: BaseCommitOption = None,
    instances: InstancesOption = None,
) -> None:
    """Rescan, apply dismissals, gate and finalize; write results.json, rows.json, manifest.json.

    Exit codes, as scan's: 0 clean (records sent to review, with only weak findings, are
    counted, not gated, and exit 0 unless --fail-on-review), 1 a run gated or flagged, 2
    bad input (every readable input is still scored and written), 3 a record not
    rescored; 2 wins over 1, 1 over 3 (docs/exit-codes.md).
    """
    try:
        result = score_command(ScoreOptions(**locals()))
    except BenchguardError as exc:
        # Bad flags, config, rules or dismissals, or an engine that cannot run: nothing
        # was scored. An unknown profile's message already lists the built-in ones.
        raise fail(plain_console(stderr=True), exc) from None
    print_score(result)
    if result.exit_code:
        raise typer.Exit(code=result.exit_code)
