"""Publication: leaderboard rows, aggregation across runs, the leaderboard, dismissals.

Rows read the scored records and never recompute a score; the leaderboard reads rows.

The names below are loaded on first use (PEP 562): importing one submodule, as
``scan`` does for its output formats, does not compile and run the leaderboard and the
aggregation on every start.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from benchguard.results.aggregate import (
        aggregate,
        build_manifests,
        dedupe_latest,
        rebatch_rows,
    )
    from benchguard.results.leaderboard import (
        Leaderboard,
        build_leaderboard,
        render_html,
        render_table,
    )
    from benchguard.results.rows import (
        SCHEMA_VERSION,
        CatastrophicDetail,
        Manifest,
        ResultRow,
        build_rows,
        setup_id_for,
    )

# Each public name and the submodule that defines it.
_HOMES = {
    "aggregate": "aggregate",
    "build_manifests": "aggregate",
    "dedupe_latest": "aggregate",
    "rebatch_rows": "aggregate",
    "Leaderboard": "leaderboard",
    "build_leaderboard": "leaderboard",
    "render_html": "leaderboard",
    "render_table": "leaderboard",
    "SCHEMA_VERSION": "rows",
    "CatastrophicDetail": "rows",
    "Manifest": "rows",
    "ResultRow": "rows",
    "build_rows": "rows",
    "setup_id_for": "rows",
}

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


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
