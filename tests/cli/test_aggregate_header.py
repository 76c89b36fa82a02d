"""The leaderboard page of an aggregate names every batch it merged (issue 24: the
header showed one run id for an aggregate of several batches).

Through the real commands, in order: ``score`` two batches, ``aggregate`` them under a
run id of its own, ``leaderboard --html``; the page's header is read back with the
stdlib's HTML parser.
"""

from __future__ import annotations

import json
from html.parser import HTMLParser
from pathlib import Path

from .helpers import HONEST, exited, invoke, record, run_dir


class _Provenance(HTMLParser):
    """The header's ``<dd data-field=...>`` values, by field."""

    def __init__(self) -> None:
        super().__init__()
        self.fields: dict[str, str] = {}
        self._field: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "dd":
            self._field = dict(attrs).get("data-field")

    def handle_endtag(self, tag: str) -> None:
        self._field = None if tag == "dd" else self._field

    def handle_data(self, data: str) -> None:
        if self._field is not None:
            self.fields[self._field] = self.fields.get(self._field, "") + data


def _header(page: Path) -> dict[str, str]:
    parser = _Provenance()
    parser.feed(page.read_text("utf-8"))
    return parser.fields


def _scored_batches(root: Path, names: list[str]) -> None:
    for name in names:
        # One setup, a task of its own per batch (an aggregate keeps each task's latest).
        results = run_dir(root, name, [record(f"task-{name}", command=HONEST)], model="m")
        exited(invoke("score", str(results)), 0)


def test_an_aggregate_page_names_each_batch_it_merged(tmp_path: Path) -> None:
    batches = ["run_a", "run_b", "run_c", "run_d"]
    _scored_batches(tmp_path / "runs", batches)
    agg = tmp_path / "agg"
    exited(invoke("aggregate", str(tmp_path / "runs"), "-o", str(agg), "--run-id", "agg-1"), 0)
    rows = json.loads((agg / "rows.json").read_text("utf-8"))
    assert sorted(r["batchRunId"] for r in rows) == batches
    assert {r["runId"] for r in rows} == {"agg-1"}

    page = tmp_path / "page.html"
    exited(invoke("leaderboard", str(agg / "rows.json"), "--html", str(page)), 0)
    header = _header(page)
    assert header["run id"] == "agg-1"
    assert header["aggregate of"] == "4 run(s): run_a, run_b, run_c (+1 more)"
    board = json.loads(invoke("leaderboard", str(agg / "rows.json"), "--json").output)
    assert board["provenance"]["batchRunIds"] == batches


def test_a_batch_page_has_no_aggregate_line(tmp_path: Path) -> None:
    """Rows no aggregate touched: one run id, no "aggregate of", no batchRunId written."""
    _scored_batches(tmp_path / "runs", ["run_a"])
    rows_file = tmp_path / "runs" / "run_a" / "rows.json"
    assert all("batchRunId" not in r for r in json.loads(rows_file.read_text("utf-8")))
    page = tmp_path / "page.html"
    exited(invoke("leaderboard", str(rows_file), "--html", str(page)), 0)
    header = _header(page)
    assert header["run id"] == "run_a" and "aggregate of" not in header
