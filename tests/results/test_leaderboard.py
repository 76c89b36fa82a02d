"""The leaderboard's standings, provenance and HTML page, read without a browser."""

from __future__ import annotations

from html.parser import HTMLParser
from typing import Any

from benchguard.results.leaderboard import (
    LEADERBOARD_SCHEMA_VERSION,
    REASONS_SHOWN,
    build_leaderboard,
    render_html,
)
from benchguard.results.rows import SCHEMA_VERSION, CatastrophicDetail, ResultRow

INTEGRITY = "IntegrityCatastrophic"
VERIFICATION = "VerificationCatastrophic"


def row(setup: str, task: str, iteration: int = 0, **fields: Any) -> ResultRow:
    base: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "setup_id": setup,
        "run_id": "run_1",
        "t": "2026-01-01T00:00:00Z",
        "task_folder": task,
        "iteration": iteration,
        "model": "m",
        "harness": "h",
        "status": "success",
        "outcome_score": 1.0,
        "correctness_score": 1.0,
        "scoring_version": "v1",
        "integrity_status": "clean",
    }
    return ResultRow(**{**base, **fields})


def gated(setup: str, task: str, iteration: int = 0, reasons: int = 1, **fields: Any) -> ResultRow:
    details = tuple(CatastrophicDetail(name=f"rule-{i}", reason=f"why {i}") for i in range(reasons))
    return row(
        setup,
        task,
        iteration,
        outcome_score=0.0,
        catastrophic=True,
        catastrophic_kinds=(INTEGRITY,),
        catastrophic_details={INTEGRITY: details},
        integrity_status="flagged",
        **fields,
    )


class _Page(HTMLParser):
    """Text per element id and per run row, plus every tag seen with its attributes."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str]]] = []
        self.text_by_id: dict[str, str] = {}
        self.run_rows: list[dict[str, Any]] = []
        self._open_ids: list[tuple[str, str]] = []
        self._in_runs = False
        self._in_details = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        data = {k: v or "" for k, v in attrs}
        self.tags.append((tag, data))
        if "id" in data:
            self._open_ids.append((tag, data["id"]))
            self.text_by_id.setdefault(data["id"], "")
        if tag == "table" and data.get("id") == "runs":
            self._in_runs = True
        elif self._in_runs and tag == "tr" and "data-task" in data:
            self.run_rows.append({"attrs": data, "text": "", "folded": ""})
        elif tag == "details":
            self._in_details += 1

    def handle_endtag(self, tag: str) -> None:
        if self._open_ids and self._open_ids[-1][0] == tag:
            self._open_ids.pop()
        if tag == "table":
            self._in_runs = False
        elif tag == "details":
            self._in_details -= 1

    def handle_data(self, data: str) -> None:
        for _, element_id in self._open_ids:
            self.text_by_id[element_id] += data
        if self._in_runs and self.run_rows:
            self.run_rows[-1]["folded" if self._in_details else "text"] += data


def _page(rows: list[ResultRow]) -> _Page:
    parsed = _Page()
    parsed.feed(render_html(build_leaderboard(rows)))
    return parsed


def test_provenance_comes_from_the_rows_and_the_page_shows_it() -> None:
    rows = [
        row("a", "t1", run_id="run_2", t="2026-03-01T10:00:00Z"),
        row("b", "t1", run_id="run_1", t="2026-03-02T09:00:00Z"),
        row("b", "t2", run_id="run_1", t="2026-02-01T00:00:00Z", schema_version=2),
    ]
    board = build_leaderboard(rows)
    p = board.provenance
    assert p.run_ids == ("run_1", "run_2")
    assert p.generated_at == "2026-03-02T09:00:00Z"  # the latest row, not the clock
    assert p.row_schema_versions == (2, SCHEMA_VERSION) and p.scoring_versions == ("v1",)
    assert board.to_json()["schemaVersion"] == LEADERBOARD_SCHEMA_VERSION
    as_json = board.model_dump(mode="json", by_alias=True)
    assert as_json["provenance"]["generatedAt"] == "2026-03-02T09:00:00Z"

    tags = _page(rows).tags
    fields = {d["data-field"] for t, d in tags if t == "dd" and "data-field" in d}
    assert {"run ids", "generated", "row schema", "scoring", "leaderboard schema"} <= fields
    html = render_html(board)
    assert "run_1, run_2" in html and "2026-03-02T09:00:00Z" in html


def test_the_page_is_deterministic_for_the_same_rows() -> None:
    """Guards against a clock or set order leaking into a published page."""
    rows = [gated("b", "t1", reasons=4), row("a", "t2"), row("a", "t1", integrity_status="no_data")]
    assert render_html(build_leaderboard(rows)) == render_html(build_leaderboard(rows[::-1]))


def test_a_gated_run_shows_a_zero_its_kind_and_its_first_reasons_with_the_rest_folded() -> None:
    page = _page([gated("cheater", "t1", reasons=REASONS_SHOWN + 3), row("honest", "t1")])
    by_setup = {r["attrs"]["data-setup"]: r for r in page.run_rows}
    cheat = by_setup["cheater"]
    assert cheat["attrs"]["class"] == "gated"
    assert "0.000" in cheat["text"] and "gated" in cheat["text"] and INTEGRITY in cheat["text"]
    shown = [f"rule-{i}" for i in range(REASONS_SHOWN)]
    folded = [f"rule-{i}" for i in range(REASONS_SHOWN, REASONS_SHOWN + 3)]
    assert all(name in cheat["text"] for name in shown)
    assert cheat["folded"].startswith("+3 more")  # the toggle, then the folded reasons
    assert all(name in cheat["folded"] and name not in cheat["text"] for name in folded)
    assert by_setup["honest"]["attrs"]["class"] == "" and "none" in by_setup["honest"]["text"]


def test_two_reasons_are_shown_without_a_toggle() -> None:
    page = _page([gated("cheater", "t1", reasons=REASONS_SHOWN)])
    assert page.run_rows[0]["folded"] == "" and "more" not in page.run_rows[0]["text"]


def test_a_historical_gated_row_without_kind_or_score_is_still_a_visible_zero() -> None:
    """Guards against an old row (catastrophic: true, no kinds, no outcome) showing a
    blank outcome and no gate: the bool stays authoritative."""
    old = row("old", "t1", outcome_score=None, catastrophic=True, schema_version=2)
    text = _page([old]).run_rows[0]["text"]
    assert "0.000" in text and "unspecified" in text


def test_standings_split_verified_clean_from_not_verified() -> None:
    rows = [
        row("mixed", "t1", 0),
        row("mixed", "t1", 1, integrity_status="no_data"),
        row("mixed", "t2", 0, integrity_status="unverified"),
        gated("mixed", "t2", 1),
    ]
    standing = build_leaderboard(rows).standings[0]
    assert standing.integrity == {
        "clean": 1,
        "flagged": 1,
        "review": 0,
        "no_data": 1,
        "unverified": 1,
    }
    published = build_leaderboard(rows).to_json()["standings"]
    assert isinstance(published, list)
    # The JSON keeps the two "not verified" counts beside the four integrity counts.
    assert (published[0]["noData"], published[0]["unverified"]) == (1, 1)
    text = " ".join(_page(rows).text_by_id["standings"].split())
    assert "1/4 verified clean · 1 flagged · 2 not verified" in text
    for chip in ("clean 1", "flagged 1", "no_data 1", "unverified 1"):
        assert chip in text


def test_the_page_loads_nothing_from_outside() -> None:
    """Guards against an external stylesheet, script, font or image sneaking in: the
    page must open the same offline, from a file, years later."""
    page = _page([gated("a", "t1"), row("b", "t1")])
    for tag, attrs in page.tags:
        assert tag not in {"link", "img", "iframe", "object", "embed"}
        assert "src" not in attrs and "href" not in attrs
    assert "url(" not in render_html(build_leaderboard([row("a", "t1")]))


def test_untrusted_text_is_escaped_in_text_and_attributes() -> None:
    """Guards against a reason, setup id or task folder from a rows file becoming markup
    (a stored-XSS vector on a page people open locally)."""
    hostile = '<script>alert("x")</script> & <img src=x onerror=alert(1)> "q\''
    rows = [
        gated(hostile, hostile, reasons=1, task_name=hostile),
        row(hostile, "t2"),
    ]
    rows[0] = rows[0].model_copy(
        update={
            "catastrophic_details": {INTEGRITY: (CatastrophicDetail(name=hostile, reason=hostile),)}
        }
    )
    page = _page(rows)
    assert [t for t, _ in page.tags].count("script") == 1  # the page's own, only
    assert not any(t == "img" for t, _ in page.tags)
    assert page.run_rows[0]["attrs"]["data-setup"] == hostile  # attribute value round-trips
    assert hostile in page.run_rows[0]["text"]
    options = [a.get("value") for t, a in page.tags if t == "option"]
    assert hostile in options
