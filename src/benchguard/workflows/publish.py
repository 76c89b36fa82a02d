"""The publish workflow: read rows.json files (named, or found under directories), keep
each run's latest row, rank the setups, and write the HTML page if asked."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from benchguard.errors import BadInputError
from benchguard.results.aggregate import ROWS_FILENAME, dedupe_latest
from benchguard.results.io import ResultsFileError, read_rows, write_text_atomic
from benchguard.results.leaderboard import (
    UNVERIFIED_POLICIES,
    Leaderboard,
    ReviewPolicy,
    UnverifiedPolicy,
    build_leaderboard,
    render_html,
)
from benchguard.results.rows import ResultRow
from benchguard.scoring.zeroes import DEFAULT_REVIEW_POLICY
from benchguard.workflows._inputs import collect_inputs


def parse_policy(value: str, option: str = "--unverified") -> UnverifiedPolicy:
    """``value`` as a policy (for ``--unverified`` or ``--review``); :class:`BadInputError`
    listing the allowed ones."""
    for policy in UNVERIFIED_POLICIES:
        if policy == value:
            return policy
    raise BadInputError(f"{option} {value!r}: allowed values are {', '.join(UNVERIFIED_POLICIES)}")


def publish(
    rows_files: Sequence[Path],
    *,
    policy: UnverifiedPolicy,
    html_file: Path | None = None,
    review_policy: ReviewPolicy = DEFAULT_REVIEW_POLICY,
) -> Leaderboard:
    """The leaderboard of every row in ``rows_files``; the page written to ``html_file``.
    :class:`ResultsFileError` for a rows file that cannot be read (or a directory with
    none), :class:`BadInputError` for a page that cannot be written."""
    found = collect_inputs(rows_files, lambda path: path.name == ROWS_FILENAME)
    if found.empty_dirs:
        raise ResultsFileError(found.empty_dirs[0], f"no {ROWS_FILENAME} files found")
    rows: list[ResultRow] = []
    for item in found.files:
        rows.extend(read_rows(item.path))
    board = build_leaderboard(
        dedupe_latest(rows), unverified_policy=policy, review_policy=review_policy
    )
    if html_file is not None:
        try:
            write_text_atomic(html_file, render_html(board))
        except OSError as exc:
            raise BadInputError(f"{html_file}: cannot write: {exc.strerror or exc}") from None
    return board
