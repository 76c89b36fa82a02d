"""The leaderboard page in headless Chromium: hostile text stays text after the script runs."""

from __future__ import annotations

import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import quote

import pytest

from benchguard.results.leaderboard import build_leaderboard, render_html
from benchguard.results.rows import CatastrophicDetail

from .test_leaderboard import INTEGRITY, gated, row

CHROMIUM = "/usr/bin/chromium"
# Each payload sets a marker on <body> if it ever runs as code.
HOSTILE_SETUP = "<script>document.body.setAttribute('data-pwned','setup')</script>&amp;"
HOSTILE_REASON = "<img src=x onerror=\"document.body.setAttribute('data-pwned','reason')\"> & <b>"


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.body: dict[str, str] = {}
        self.runs: dict[str, str] = {}
        self.run_rows: list[tuple[dict[str, str], str]] = []
        self.tags: list[str] = []
        self._in_runs = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        data = {k: v or "" for k, v in attrs}
        self.tags.append(tag)
        if tag == "body":
            self.body = data
        elif tag == "table" and data.get("id") == "runs":
            self._in_runs, self.runs = True, data
        elif self._in_runs and tag == "tr" and "data-task" in data:
            self.run_rows.append((data, ""))

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self._in_runs = False

    def handle_data(self, data: str) -> None:
        if self._in_runs and self.run_rows:
            attrs, text = self.run_rows[-1]
            self.run_rows[-1] = (attrs, text + data)


def _dump_dom(url: str, profile: Path) -> _Dom:
    flags = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={profile}", "--dump-dom", url,
    ]  # fmt: skip
    out = subprocess.run(flags, capture_output=True, text=True, timeout=180, check=True).stdout
    dom = _Dom()
    dom.feed(out)
    return dom


@pytest.mark.slow
def test_hostile_reason_and_setup_id_render_as_text_and_never_run(tmp_path: Path) -> None:
    """Guards against stored XSS: a rows file is untrusted, and a reason or setup id
    holding <script>, an onerror handler or "&" must show literally in the rendered page
    (after the page's own script has sorted and filtered it) and never execute."""
    if shutil.which(CHROMIUM) is None:
        pytest.skip(f"{CHROMIUM} is not installed (make system-deps installs it)")
    cheat = gated(HOSTILE_SETUP, "t1").model_copy(
        update={
            "catastrophic_details": {
                INTEGRITY: (CatastrophicDetail(name="task-definition/path", reason=HOSTILE_REASON),)
            }
        }
    )
    page = tmp_path / "leaderboard.html"
    page.write_text(render_html(build_leaderboard([cheat, row("honest", "t1")])), "utf-8")

    # Filter to the hostile setup through the URL: its id round-trips as a value too.
    url = f"{page.as_uri()}#sort=runs:outcome:asc&setup={quote(HOSTILE_SETUP, safe='')}"
    dom = _dump_dom(url, tmp_path / "profile")
    assert dom.runs.get("data-sortable") == "ready"  # the page's script did run
    assert "data-pwned" not in dom.body
    assert "img" not in dom.tags and dom.tags.count("script") == 1
    assert dom.runs["data-visible"] == "1"  # only the hostile setup's run is shown
    attrs, text = dom.run_rows[0]
    assert attrs["data-setup"] == HOSTILE_SETUP and attrs["class"] == "gated"
    assert HOSTILE_SETUP in text and HOSTILE_REASON in text
    assert "0.000" in text and INTEGRITY in text
