"""Publication: leaderboard rows, aggregation across runs, the leaderboard, dismissals.

Rows read the scored records and never recompute a score; the leaderboard reads rows.
"""

from __future__ import annotations

from benchguard.results.aggregate import aggregate, build_manifests, dedupe_latest, rebatch_rows
from benchguard.results.leaderboard import Leaderboard, build_leaderboard, render_html, render_table
from benchguard.results.rows import (
    SCHEMA_VERSION,
    CatastrophicDetail,
    Manifest,
    ResultRow,
    build_rows,
    setup_id_for,
)

__all__ = [
    "SCHEMA_VERSION",
    "CatastrophicDetail",
    "Leaderboard",
    "Manifest",
    "ResultRow",
    "aggregate",
    "build_leaderboard",
    "build_manifests",
    "build_rows",
    "dedupe_latest",
    "rebatch_rows",
    "render_html",
    "render_table",
    "setup_id_for",
]
