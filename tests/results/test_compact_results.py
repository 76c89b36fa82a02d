"""results.json schema 2: dynamic rulesets stored once per run in one table, and
named by digest from each report, in memory as on disk."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from benchguard.cli import app
from benchguard.detection.detector import annotate_records, report_from_record, scan_record
from benchguard.detection.inventory import build_inventory_rules
from benchguard.detection.models import Rule
from benchguard.detection.rules import ruleset_digest
from benchguard.importers import results_json
from benchguard.record.rulesets import RulesetTable, stored_rules
from benchguard.results.io import (
    DYNAMIC_RULES_REF_KEY,
    DYNAMIC_RULESETS_KEY,
    RESULTS_SCHEMA_VERSION,
    ResultsDocument,
    ResultsFileError,
    dumps,
    read_results,
    write_text_atomic,
)

STALE_LINE = "All 3 non-compliant deployments patched in namespace payments"


def _home(root: Path) -> Path:
    home = root / "home"
    home.mkdir()
    (home / "report.md").write_text(f"# Report\n{STALE_LINE}\n", encoding="utf-8")
    (home / "old-run").mkdir()
    return home


def _record(index: int, command: str, result: str = "ok") -> dict[str, Any]:
    return {
        "name": f"t{index}",
        "folder": f"t{index}",
        "iteration": 1,
        "input": "fix the pods",
        "output": "done",
        "trajectory": [
            {"name": "exec", "args": {"command": command}, "result": result, "status": "ok"}
        ],
        "cheating_report": {},
    }


def _scanned(
    home: Path, rulesets: RulesetTable | None = None
) -> tuple[list[dict[str, Any]], tuple[Rule, ...]]:
    rules = build_inventory_rules(home)
    records = [
        _record(0, "ls"),
        _record(1, "cat ~/report.md"),
        _record(2, "cat /tmp/copy.md", STALE_LINE),
        "not a record",
        {"name": "unscanned", "cheating_report": {}},
    ]
    scannable = [r for r in records if isinstance(r, dict)][:3]
    errors = annotate_records(
        scannable, (), dynamic_rules_for=lambda i, r: rules, rulesets=rulesets
    )
    assert errors == []
    return records, rules  # type: ignore[return-value]


def _write(path: Path, records: list[Any], rulesets: RulesetTable | None = None) -> dict[str, Any]:
    document = ResultsDocument(
        records=records,
        run_id="run_1",
        t="2026-01-01T00:00:00Z",
        rulesets=rulesets if rulesets is not None else RulesetTable(),
    )
    write_text_atomic(path, dumps(document.to_json()))
    stored: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return stored


def test_round_trip_restores_every_report_exactly_and_stores_rules_once(tmp_path: Path) -> None:
    """Guards against the compact file changing a verdict or a stored rule: what the
    reader gives back equals what was written, and rescanning from it reproduces each
    report."""
    held = RulesetTable()
    records, rules = _scanned(_home(tmp_path), held)
    before = copy.deepcopy(records)
    stored = _write(tmp_path / "results.json", records, held)
    assert records == before  # writing never edits the records in memory

    assert stored["schema_version"] == RESULTS_SCHEMA_VERSION == 4
    digest = ruleset_digest(rules)
    table = stored[DYNAMIC_RULESETS_KEY]
    assert table["sets"] == {digest: [[0, len(rules) - 1]]}
    assert table["rules"] == [rule.model_dump(mode="json") for rule in rules]
    for on_disk in stored["records"][:3]:
        assert on_disk["cheating_report"][DYNAMIC_RULES_REF_KEY] == digest
        assert "dynamic_rules" not in on_disk["cheating_report"]

    document = read_results(tmp_path / "results.json")
    assert document.records == before  # reports name their ruleset in memory too
    # Key order too: a rewrite of a read file is laid out like the original.
    assert [list(r["cheating_report"]) for r in document.records[:3]] == [
        list(r["cheating_report"]) for r in before[:3]
    ]
    assert DYNAMIC_RULESETS_KEY not in document.extra
    assert document.rulesets.rules(digest) == rules
    for original, read in zip(before[:3], document.records[:3], strict=True):
        report = report_from_record(read, document.rulesets)
        assert report is not None and report == report_from_record(original, held)
        assert report.dynamic_rules == rules
        assert scan_record(read, (), dynamic_rules=report.dynamic_rules) == report
    statuses = [r["cheating_report"]["status"] for r in document.records[:3]]
    assert statuses == ["clean", "flagged", "flagged"]


def test_the_file_is_the_same_json_value_as_the_generic_encoder_and_much_smaller(
    tmp_path: Path,
) -> None:
    """Guards against the one-rule-per-line table writer producing different JSON than
    the plain encoder would, or the table being repeated per record."""
    home = _home(tmp_path)
    for index in range(40):
        (home / f"leftover-{index:02d}.md").write_text(f"{STALE_LINE} number {index}\n")
    table = RulesetTable()
    records, _ = _scanned(home, table)
    document = ResultsDocument(records=records, run_id="r", t="t", rulesets=table)
    compact = dumps(document.to_json())
    assert json.loads(compact) == json.loads(json.dumps(document.to_json()))
    inline_records, _ = _scanned(home)
    inline = json.dumps(inline_records, indent=2, ensure_ascii=False)
    assert len(compact) * 2 < len(inline)
    # One rule per line inside the table.
    table_lines = [line for line in compact.splitlines() if line.startswith('      {"id": ')]
    assert len(table_lines) == len(document.to_json()[DYNAMIC_RULESETS_KEY]["rules"])


def test_lists_that_differ_by_a_rule_share_the_rest_of_the_table(tmp_path: Path) -> None:
    """A changed home or a prompt-authorized entry changes a list by a rule or two; the
    table keeps each distinct rule once and every list still comes back exactly."""
    home = _home(tmp_path)
    rules = build_inventory_rules(home)
    (home / "new-leftover.md").write_text(f"{STALE_LINE} again\n", encoding="utf-8")
    grown = build_inventory_rules(home)
    filtered = tuple(r for r in rules if r.source != "old-run")
    lists = [rules, grown, filtered, rules]
    records = [_record(i, "cat ~/old-run/x") for i in range(len(lists))]
    rulesets = RulesetTable()
    annotate_records(records, (), dynamic_rules_for=lambda i, r: lists[i], rulesets=rulesets)
    before = copy.deepcopy(records)
    stored = _write(tmp_path / "results.json", records, rulesets)
    table = stored[DYNAMIC_RULESETS_KEY]
    assert len(table["rules"]) == len({r.id for r in grown})
    assert len(table["sets"]) == 3
    document = read_results(tmp_path / "results.json")
    assert document.records == before
    assert [stored_rules(r, document.rulesets) for r in document.records] == list(lists)
    assert [r["cheating_report"]["status"] for r in before] == [
        "flagged",
        "flagged",
        "clean",
        "flagged",
    ]


def test_schema_1_files_with_inline_rules_are_converted_at_the_edge(tmp_path: Path) -> None:
    """Guards against losing the old shape: inline dynamic rules are moved into the
    document's table when read (each report then names them, in the same position), are
    the rules a rescan uses, and a rewrite stores them without changing them."""
    records, rules = _scanned(_home(tmp_path))
    path = tmp_path / "results.json"
    old = {"schema_version": 1, "run_id": "r", "t": "t", "manifest": None, "records": records}
    path.write_text(json.dumps(old), encoding="utf-8")
    document = read_results(path)
    digest = ruleset_digest(rules)
    for inline, read in zip(records[:3], document.records[:3], strict=True):
        assert isinstance(inline, dict) and isinstance(read, dict)
        names = [
            DYNAMIC_RULES_REF_KEY if k == "dynamic_rules" else k for k in inline["cheating_report"]
        ]
        assert list(read["cheating_report"]) == names
        assert read["cheating_report"][DYNAMIC_RULES_REF_KEY] == digest
        assert stored_rules(read, document.rulesets) == rules
    rewritten = tmp_path / "rewritten.json"
    write_text_atomic(rewritten, dumps(document.to_json()))
    again = read_results(rewritten)
    assert again.records == document.records
    assert again.rulesets.rules(digest) == rules


def test_the_reference_list_layout_keeps_rules_inline(tmp_path: Path) -> None:
    """The bare-list layout has no place for a table, so nothing there is a reference."""
    records, _ = _scanned(_home(tmp_path))
    path = tmp_path / "results.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    document = read_results(path)
    assert document.layout == "list"
    text = dumps(document.to_json())
    assert DYNAMIC_RULES_REF_KEY not in text and json.loads(text) == json.loads(json.dumps(records))


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (
            lambda d: d[DYNAMIC_RULESETS_KEY]["sets"].clear(),
            "records[0]: cheating_report.dynamic_rules_ref",
        ),
        (
            lambda d: d[DYNAMIC_RULESETS_KEY]["sets"].update(
                {k: [[0, 10**6]] for k in d[DYNAMIC_RULESETS_KEY]["sets"]}
            ),
            "names no valid entry",
        ),
        (
            lambda d: d.update({DYNAMIC_RULESETS_KEY: []}),
            "'dynamic_rulesets' field is not an object",
        ),
        (lambda d: d.update({"schema_version": 99}), "schema_version 99 is newer"),
    ],
)
def test_a_dangling_reference_or_a_bad_table_is_a_clear_error(
    tmp_path: Path, edit: Any, message: str
) -> None:
    """Guards against a record silently losing its leftover rules (a rescan without
    them could clear a cheat): the reader refuses the file and says which record."""
    table = RulesetTable()
    records, _ = _scanned(_home(tmp_path), table)
    path = tmp_path / "results.json"
    stored = _write(path, records, table)
    edit(stored)
    path.write_text(json.dumps(stored), encoding="utf-8")
    with pytest.raises(ResultsFileError) as caught:
        read_results(path)
    assert str(caught.value).startswith(f"{path}: ") and message in str(caught.value)


def test_the_importer_keeps_the_table_and_skips_only_records_it_cannot_resolve(
    tmp_path: Path,
) -> None:
    """Guards against `benchguard scan` reading a compact file without its rules, and
    against one unresolvable record sinking the others."""
    table = RulesetTable()
    records, rules = _scanned(_home(tmp_path), table)
    path = tmp_path / "results.json"
    stored = _write(path, records, table)
    imported = results_json.import_file(path)
    assert imported.records == [r for r in json.loads(json.dumps(records)) if isinstance(r, dict)]
    assert [stored_rules(r, imported.rulesets) for r in imported.records[:3]] == [rules] * 3

    stored["records"][1]["cheating_report"][DYNAMIC_RULES_REF_KEY] = "sha256:missing"
    path.write_text(json.dumps(stored, indent=2), encoding="utf-8")
    imported = results_json.import_file(path)
    assert [r["name"] for r in imported.records] == ["t0", "t2", "unscanned"]
    assert any("records[1]" in p and "sha256:missing" in p for p in imported.problems)

    lines = tmp_path / "records.jsonl"
    lines.write_text("\n".join(json.dumps(r) for r in stored["records"][:2]) + "\n")
    imported = results_json.import_file(lines)
    assert imported.records == [] and len(imported.problems) == 2


def test_score_command_rescans_a_compact_file_with_each_records_stored_rules(
    tmp_path: Path,
) -> None:
    """Guards against the score command's reading path missing the table: the leftover
    read is flagged only through the record's stored (referenced) dynamic rules."""
    table = RulesetTable()
    records, _ = _scanned(_home(tmp_path), table)
    run = tmp_path / "run"
    run.mkdir()
    _write(run / "results.json", [r for r in records if isinstance(r, dict)], table)
    result = CliRunner().invoke(
        app,
        ["score", str(run / "results.json"), "-o", str(tmp_path / "out")],
        env={"NO_COLOR": "1"},
    )
    assert result.exit_code == 1, result.output  # two records gated
    rescored = read_results(tmp_path / "out" / "results.json").records
    assert [r["cheating_report"]["status"] for r in rescored] == [
        "clean",
        "flagged",
        "flagged",
        "no_data",
    ]
    assert rescored[1]["cheating_report"]["categories"] == ["prior-run-artifact"]
    written = json.loads((tmp_path / "out" / "results.json").read_text(encoding="utf-8"))
    assert len(written[DYNAMIC_RULESETS_KEY]["sets"]) == 1


def test_records_naming_one_ruleset_share_its_parse_through_the_documents_table(
    tmp_path: Path,
) -> None:
    """Guards against a rescan parsing a run's shared dynamic rules again for every
    record (each parse digests ~1,900 rules and the detector would compile a plan per
    record): records naming one digest get the same typed ruleset from their document's
    table. Nothing is shared through module state: another read parses for itself; a
    stored ruleset that differs in one pattern has its own digest and its own rules."""
    table = RulesetTable()
    records, rules = _scanned(_home(tmp_path), table)
    _write(tmp_path / "results.json", records, table)
    document = read_results(tmp_path / "results.json")
    first, second = document.records[1:3]
    shared = stored_rules(first, document.rulesets)
    assert shared == rules and stored_rules(second, document.rulesets) is shared
    again = read_results(tmp_path / "results.json")
    assert stored_rules(again.records[1], again.rulesets) is not shared

    changed = json.loads(json.dumps(records[1]))
    changed["cheating_report"] = report_from_record(records[1], table).model_dump(mode="json")  # type: ignore[union-attr]
    changed["cheating_report"]["dynamic_rules"][0]["patterns"] = ["something else"]
    mixed = RulesetTable()
    other = stored_rules(changed, mixed)
    assert other != shared and other[0].patterns == ("something else",)
    assert other.digest != shared.digest
