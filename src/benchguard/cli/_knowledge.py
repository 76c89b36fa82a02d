"""What the harness knows, for foreign logs: one declaration of ``--material``,
``--repo``, ``--base-commit`` and ``--instances`` for ``scan`` and ``score`` (the checks
and their use live in :mod:`benchguard.workflows.foreign`)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

RepoOption = Annotated[
    Path | None,
    typer.Option(
        "--repo",
        help="The task's git repository: commit hashes in git-history findings are "
        "resolved against it (with --base-commit or --instances): conclusive or dropped.",
        show_default=False,
    ),
]
BaseCommitOption = Annotated[
    str | None,
    typer.Option("--base-commit", help="The task's base commit in --repo.", show_default=False),
]
InstancesOption = Annotated[
    Path | None,
    typer.Option(
        "--instances",
        help="A SWE-bench-style instances file (JSON or JSONL: instance_id, base_commit, "
        "created_at); each record's base commit is its instance's.",
        show_default=False,
    ),
]
MaterialOption = Annotated[
    Path | None,
    typer.Option(
        "--material",
        help="The benchmark's own material (tasks, tests, solutions): fingerprinted as "
        "the harness does; a tool result showing it is conclusive.",
        show_default=False,
    ),
]
