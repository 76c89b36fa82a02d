"""The page's items from issue 24, in headless Chromium (DOM after the script ran, and
a screenshot): flagged runs counted, gated rows never "success", setup ids wrapping at
their separators only, and the per-task view."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from benchguard.results.leaderboard import build_leaderboard, render_html

from .test_leaderboard import gated, row
from .test_leaderboard_browser import CHROMIUM, _dump_dom

SETUP = "a-rather-long-model-name-with-many-parts_and-a-harness"


def _page(tmp_path: Path) -> Path:
    rows = [
        gated(SETUP, "t1", 0, status="success"),
        gated(SETUP, "t2", 0, status="success"),
        row("honest", "t1", status="success"),
    ]
    page = tmp_path / "leaderboard.html"
    page.write_text(render_html(build_leaderboard(rows)), "utf-8")
    return page


def test_the_page_counts_flagged_runs_and_never_says_success_for_a_gated_row(
    tmp_path: Path,
) -> None:
    html = _page(tmp_path).read_text("utf-8")
    assert '0</span>/2 verified clean · <span class="score">2</span> flagged' in html
    assert "gated; agent finished" in html and ">success<" not in html
    assert "a-<wbr>rather-<wbr>long" in html
    assert 'id="tasks"' in html and 'data-task="t2"' in html


@pytest.mark.slow
def test_the_page_in_headless_chromium(tmp_path: Path) -> None:
    if shutil.which(CHROMIUM) is None:
        pytest.skip(f"{CHROMIUM} is not installed (make system-deps installs it)")
    page = _page(tmp_path)
    dom = _dump_dom(page.as_uri(), tmp_path / "profile")
    assert dom.runs.get("data-sortable") == "ready"
    texts = [text for _, text in dom.run_rows]
    assert texts and not any("success" in text for text in texts), texts
    assert any("gated; agent finished" in text for text in texts)
    shot = tmp_path / "page.png"
    subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         f"--user-data-dir={tmp_path / 'profile2'}", "--window-size=640,1600",
         f"--screenshot={shot}", page.as_uri()],
        capture_output=True, timeout=180, check=True,
    )  # fmt: skip
    data = shot.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000
