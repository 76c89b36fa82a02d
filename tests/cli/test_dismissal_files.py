"""Hand-written dismissal files: every missing field named at once, date defaulting to
today as `dismiss` does, iteration 0 for an imported log's record."""

from __future__ import annotations

import datetime as dt
import json
import shutil
from pathlib import Path

from cli.helpers import REPO, exited, invoke

LOG = REPO / "examples" / "logs" / "inspect_fix_login.eval"


def test_every_missing_field_is_reported_at_once(tmp_path: Path) -> None:
    dismissals = tmp_path / "d.json"
    dismissals.write_text(json.dumps([{"task": "fix_login/login-1"}]), encoding="utf-8")
    result = invoke("scan", str(LOG), "--dismissals", str(dismissals))
    exited(result, 2)
    for field in ("iteration", "rule", "reviewer", "reason"):
        assert f"{field}: Field required" in result.stderr, result.stderr
    assert "date" not in result.stderr  # optional: today


def test_a_dateless_entry_for_an_imported_log_applies_at_iteration_0(tmp_path: Path) -> None:
    log = tmp_path / LOG.name
    shutil.copy(LOG, log)
    exited(invoke("score", str(log)), 1)
    stored = json.loads((tmp_path / f"{LOG.name}.benchguard" / "results.json").read_text())
    (record,) = stored["records"]
    rules = sorted({f["rule"] for f in record["cheating_report"]["findings"]})
    dismissals = tmp_path / "d.json"
    dismissals.write_text(
        json.dumps(
            [
                {
                    "task": "fix_login/login-1",
                    "iteration": 0,
                    "rule": rule,
                    "reviewer": "ana",
                    "reason": "the prompt cites it",
                }
                for rule in rules
            ]
        ),
        encoding="utf-8",
    )
    rescored = invoke("score", str(log), "--dismissals", str(dismissals), "--format", "json")
    exited(rescored, 0)
    ((row,),) = [entry["rows"] for entry in json.loads(rescored.stdout)]
    assert row["catastrophic"] is False and row["iteration"] == 0
    stored = json.loads((tmp_path / f"{LOG.name}.benchguard" / "results.json").read_text())
    dates = {d["date"] for d in stored["records"][0]["cheating_report"]["dismissed"]}
    assert dates == {dt.date.today().isoformat()}


def test_the_docs_say_imported_logs_have_iteration_0() -> None:
    text = " ".join((REPO / "docs" / "scoring.md").read_text(encoding="utf-8").split())
    assert "`iteration` is **0**: imported logs carry no harness iteration" in text
