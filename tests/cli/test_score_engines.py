"""`benchguard score` over many files and directory trees, with the serial and dask engines."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest

from benchguard.detection.detector import scan_record
from benchguard.detection.models import CheatingReport, Rule
from benchguard.detection.rules import load_ruleset
from benchguard.engines import scan_records
from benchguard.results.io import (
    DYNAMIC_RULESETS_KEY,
    RESULTS_SCHEMA_VERSION,
    ResultsDocument,
    dumps,
    read_results,
)
from benchguard.results.rescore import rescan_documents
from cli.helpers import CHEAT, HONEST, invoke, record, run_dir

# A leftover-file rule recorded by the harness's pre-run inventory: only a rescan that
# passes each record's own stored dynamic rules can flag the read below.
LEFTOVER = Rule(
    id="prior-run-artifact/q3-figures.md/path",
    category="prior-run-artifact",
    material="prior-run leftover ~/q3-figures.md",
    patterns=(r"(?<![\w~])(?:~|\$HOME)/q3\-figures\.md(?![\w-]|\.[\w-])",),
    source="q3-figures.md",
)
OUTPUTS = ["manifest.json", "results.json", "rows.json"]


def _leftover_record(folder: str, iteration: int) -> dict[str, Any]:
    stored = {"status": "clean", "dynamic_rules": [LEFTOVER.model_dump(mode="json")]}
    return record(folder, iteration, "cat ~/q3-figures.md", cheating_report=stored)


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """Two run directories (one nested a level deeper), with honest, cheating,
    leftover-reading and empty records, plus a hidden directory that must be ignored."""
    root = tmp_path / "runs"
    run_dir(root, "run_a", [record("log-rotate", 0, HONEST), _leftover_record("opa", 0),
                             record("opa", 1, HONEST, trajectory=[], output="")])  # fmt: skip
    run_dir(root / "week2", "run_b", [record("log-rotate", 0, CHEAT),
                                       record("log-rotate", 1, HONEST)])  # fmt: skip
    run_dir(root, ".trash", [record("log-rotate", 0, CHEAT)])
    return root


def _compact_run_dir(root: Path, name: str, records: list[Any]) -> Path:
    """A run in the harness's object layout, schema 2: each report's dynamic rules are
    stored once in the run-level ``dynamic_rulesets`` table and named by reference."""
    results = run_dir(root, name, [])
    document = ResultsDocument(records=records, run_id=name, t="2026-01-01T00:00:00Z")
    results.write_text(dumps(document.to_json()), encoding="utf-8")
    stored = json.loads(results.read_text(encoding="utf-8"))
    assert (
        stored["schema_version"] == RESULTS_SCHEMA_VERSION and stored[DYNAMIC_RULESETS_KEY]["rules"]
    )
    assert all("dynamic_rules" not in r["cheating_report"] for r in stored["records"])
    return results


def _outputs(root: Path) -> dict[str, str]:
    return {
        str(path.relative_to(root)): path.read_text(encoding="utf-8")
        for path in sorted(root.rglob("*.json"))
    }


def test_serial_and_dask_write_identical_scored_results_and_rows(
    tree: Path, tmp_path: Path
) -> None:
    """Guards against the engine changing a verdict: the same inputs scored by the
    serial engine and by dask's local processes scheduler give byte-identical files,
    and the per-record stored dynamic rules reach the dask workers, whether stored
    inline (a bare list) or by reference into a schema-2 ``dynamic_rulesets`` table."""
    _compact_run_dir(tree, "run_c", [_leftover_record("opa", 0), record("opa", 1, HONEST)])
    serial_out, dask_out = tmp_path / "serial", tmp_path / "dask"
    serial = invoke("score", str(tree), "-o", str(serial_out), "--engine", "serial")
    # Exit 1 from both: the tree holds gated runs (docs/exit-codes.md).
    assert serial.exit_code == 1, serial.output
    parallel = invoke("score", str(tree), "-o", str(dask_out), "--engine", "dask", "--workers", "2")
    assert parallel.exit_code == 1, parallel.output
    assert _outputs(serial_out) == _outputs(dask_out)
    assert sorted(_outputs(dask_out)) == [
        f"{run}/{name}" for run in ("run_a", "run_c", "week2/run_b") for name in OUTPUTS
    ]

    run_a = json.loads((dask_out / "run_a" / "results.json").read_text(encoding="utf-8"))
    assert [r["cheating_report"]["status"] for r in run_a] == ["clean", "flagged", "no_data"]
    assert run_a[1]["cheating_report"]["categories"] == ["prior-run-artifact"]
    rows_b = json.loads((dask_out / "week2" / "run_b" / "rows.json").read_text(encoding="utf-8"))
    assert [(r["runId"], r["outcomeScore"]) for r in rows_b] == [("run_b", 0.0), ("run_b", 1.0)]
    run_c = json.loads((dask_out / "run_c" / "results.json").read_text(encoding="utf-8"))
    assert run_c["schema_version"] == RESULTS_SCHEMA_VERSION
    assert [r["cheating_report"]["status"] for r in run_c["records"]] == ["flagged", "clean"]
    assert run_c["records"][0]["cheating_report"]["categories"] == ["prior-run-artifact"]
    rows_c = json.loads((dask_out / "run_c" / "rows.json").read_text(encoding="utf-8"))
    assert [r["outcomeScore"] for r in rows_c] == [0.0, 1.0]


def test_a_directory_tree_is_scored_in_place_and_rescoring_is_stable(tree: Path) -> None:
    """Guards against a walk that misses nested runs, reads a hidden directory, or on a
    second pass mistakes its own rows.json/manifest.json for results files."""
    first = invoke("score", str(tree))
    assert first.exit_code == 1, first.output  # a gated run in the tree
    for run in (tree / "run_a", tree / "week2" / "run_b"):
        assert sorted(p.name for p in run.iterdir()) == OUTPUTS
    assert sorted(p.name for p in (tree / ".trash").iterdir()) == ["manifest.json", "results.json"]
    assert "total" in first.stdout
    before = _outputs(tree)
    second = invoke("score", str(tree))
    assert second.exit_code == 1, second.output
    assert _outputs(tree) == before


def test_a_bad_file_among_good_ones_is_reported_and_the_good_ones_are_written(
    tree: Path,
) -> None:
    """Guards against one broken results file sinking the batch, or being skipped
    silently: it is named with exit 2, and every good file is still written."""
    broken = tree / "run_c"
    broken.mkdir()
    (broken / "results.json").write_text('[{"folder": "x",', encoding="utf-8")
    result = invoke("score", str(tree))
    assert result.exit_code == 2
    assert f"{broken / 'results.json'}: invalid JSON" in result.stderr
    assert "Traceback" not in result.output
    assert (tree / "run_a" / "rows.json").is_file()
    assert (tree / "week2" / "run_b" / "rows.json").is_file()
    assert sorted(p.name for p in broken.iterdir()) == ["results.json"]


def test_out_dir_with_several_inputs_mirrors_their_locations(tmp_path: Path) -> None:
    """Guards against several inputs overwriting each other in one -o directory: two
    runs with the same directory name in different places keep separate outputs."""
    first = run_dir(tmp_path / "lab1", "run", [record("log-rotate", 0, CHEAT)])
    second = run_dir(tmp_path / "lab2", "run", [record("log-rotate", 0, HONEST)])
    out = tmp_path / "scored"
    result = invoke("score", str(first), str(second), "-o", str(out))
    assert result.exit_code == 1, result.output  # lab1 is gated
    assert sorted(str(p.relative_to(out)) for p in out.rglob("*.json")) == [
        f"{lab}/run/{name}" for lab in ("lab1", "lab2") for name in OUTPUTS
    ]
    flagged = json.loads((out / "lab1" / "run" / "rows.json").read_text(encoding="utf-8"))
    honest = json.loads((out / "lab2" / "run" / "rows.json").read_text(encoding="utf-8"))
    assert flagged[0]["catastrophic"] is True and honest[0]["catastrophic"] is False
    assert sorted(p.name for p in first.parent.iterdir()) == ["manifest.json", "results.json"]


def test_two_inputs_that_would_write_the_same_directory_are_refused(tmp_path: Path) -> None:
    """Guards against a second input in the same directory silently replacing the
    first one's results.json: the first is written, the second is an error."""
    results = run_dir(tmp_path, "run", [record("log-rotate", 0, HONEST)])
    copy = results.with_name("copy.json")
    copy.write_text(results.read_text(encoding="utf-8"), encoding="utf-8")
    result = invoke("score", str(results), str(copy))
    assert result.exit_code == 2
    assert f"{copy}: its outputs would overwrite those of {results}" in result.stderr
    assert (results.parent / "rows.json").is_file()


def test_an_out_dir_inside_the_tree_is_not_read_back(tree: Path) -> None:
    """Guards against scoring one's own outputs on the next run (doubling every run)."""
    out = tree / "scored"
    assert invoke("score", str(tree), "-o", str(out)).exit_code == 1  # gated runs
    again = invoke("score", str(tree), "-o", str(out))
    assert again.exit_code == 1, again.output
    assert not (out / "scored").exists()
    assert sorted(str(p.relative_to(out)) for p in out.rglob("results.json")) == [
        "run_a/results.json",
        "week2/run_b/results.json",
    ]


def test_a_dismissal_is_unmatched_only_if_no_input_matches_it(tree: Path) -> None:
    """Guards against a dismissal for one run being reported as matching nothing just
    because the other runs scored in the same command do not hold that record."""
    dismissals = tree.parent / "dismissals.json"
    entry = {"run_id": "run_b", "task": "log-rotate", "iteration": 0,
             "rule": "task-definition/path", "reviewer": "ana", "reason": "told to",
             "date": "2026-01-05"}  # fmt: skip
    dismissals.write_text(json.dumps([entry]), encoding="utf-8")
    result = invoke("score", str(tree), "--dismissals", str(dismissals))
    assert result.exit_code == 1, result.output  # run_a's leftover read is still gated
    assert "matched no finding" not in result.stderr
    rows = json.loads((tree / "week2" / "run_b" / "rows.json").read_text(encoding="utf-8"))
    assert rows[0]["dismissedFindings"] == 1 and rows[0]["catastrophic"] is False

    typo = tree.parent / "typo.json"
    typo.write_text(json.dumps([{**entry, "rule": "typo/path"}]), encoding="utf-8")
    result = invoke("score", str(tree), "--dismissals", str(typo))
    assert result.exit_code == 1
    assert result.stderr.count("matched no finding") == 1


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--engine", "spark"), "--engine 'spark': choose one of: serial, dask"),
        (("--scheduler", "threads"), "--scheduler applies only to --engine dask"),
    ],
)
def test_bad_engine_options_exit_2_before_writing(
    tree: Path, args: tuple[str, ...], message: str
) -> None:
    result = invoke("score", str(tree), *args)
    assert result.exit_code == 2 and message in result.stderr
    assert not (tree / "run_a" / "rows.json").exists()


def test_an_empty_directory_is_bad_input(tmp_path: Path) -> None:
    result = invoke("score", str(tmp_path))
    assert result.exit_code == 2
    assert f"{tmp_path}: no results.json files found" in result.stderr


def test_one_batch_rescan_equals_record_by_record_rescans(tree: Path) -> None:
    """Guards against the batch phase pairing a report with the wrong record or the
    wrong stored dynamic rules across documents."""
    documents = [read_results(path) for path in sorted(tree.rglob("results.json"))]
    rules = load_ruleset()
    batch = rescan_documents(
        documents,
        rules,
        lambda records, rs, dynamic: scan_records(records, rs, dynamic_rules=dynamic),
    )
    assert batch == [_record_by_record(document, rules) for document in documents]


def _record_by_record(
    document: ResultsDocument, rules: Sequence[Rule]
) -> dict[int, CheatingReport]:
    """The oracle: the detector on each record alone, with the dynamic rules its own
    stored report names."""
    return {
        index: scan_record(
            item,
            rules,
            dynamic_rules=tuple(
                Rule.model_validate(rule)
                for rule in (
                    document.rulesets.stored(item["cheating_report"]["dynamic_rules_ref"])
                    if "dynamic_rules_ref" in item["cheating_report"]
                    else ()
                )
            ),
        )
        for index, item in enumerate(document.records)
    }


@pytest.mark.skipif(os.name != "posix", reason="POSIX file modes")
def test_an_unwritable_target_is_reported_and_the_others_are_written(tree: Path) -> None:
    """Guards against a write failure for one run losing the others' outputs."""
    blocked = tree / "week2" / "run_b" / "rows.json"
    blocked.mkdir()  # a directory where a file must go: the write fails on any user
    result = invoke("score", str(tree))
    assert result.exit_code == 2
    assert "cannot write outputs" in result.stderr
    assert (tree / "run_a" / "rows.json").is_file()
    stored = json.loads((tree / "week2" / "run_b" / "results.json").read_text(encoding="utf-8"))
    assert stored[0]["cheating_report"] == {}  # nothing written half-way for that run
