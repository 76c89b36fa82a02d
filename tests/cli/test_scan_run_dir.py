"""A walked harness run directory is read as its results.json alone."""

from __future__ import annotations

import json
from pathlib import Path

from cli.helpers import CHEAT, exited, invoke, record, run_dir


def test_scan_of_a_run_directory_skips_the_journal_and_stored_rulesets(tmp_path: Path) -> None:
    """Guards against `scan results/` counting the harness's journal (batch.json,
    runs/*.json) and stored rulesets as more records, or failing on batch.json."""
    results = run_dir(tmp_path / "results", "run_1", [record("log-rotate", 0, CHEAT)])
    run = results.parent
    (run / "batch.json").write_text(json.dumps({"plan": []}), encoding="utf-8")
    (run / "runs").mkdir()
    (run / "runs" / "000000.json").write_text(json.dumps(record("log-rotate")), "utf-8")
    (run / "rulesets").mkdir()
    (run / "rulesets" / "sha256-x.json").write_text("[]", encoding="utf-8")
    result = invoke("scan", str(tmp_path / "results"), "--all")
    exited(result, 1)
    assert "1 file(s), 1 record(s): 1 flagged" in result.stdout
    assert "batch.json" not in result.output and "INCOMPLETE" not in result.stdout
    # Outside a run directory, such names are ordinary logs.
    loose = tmp_path / "loose"
    loose.mkdir()
    (loose / "000000.json").write_text(json.dumps([record("log-rotate", 0, CHEAT)]), "utf-8")
    exited(invoke("scan", str(loose)), 1)
