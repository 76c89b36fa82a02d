"""Streaming import (``stream_path``) against the whole-file reader (``import_path``).

Every file the whole-file reader can read must give the same records and problems
streamed, whatever the layout (pretty-printed, compact, CRLF, BOM, blank lines) and
whatever text the records hold (brackets, braces and escaped quotes inside strings,
non-ASCII split across chunk boundaries). The inputs the whole-file reader refuses as
a whole (a truncated list, one corrupt element) are read element by element: the
valid records are kept, each broken one named by position and line, and the file
still does not read clean.
"""

from __future__ import annotations

import io
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from benchguard.detection.detector import DEFAULT_RECORD_BUDGET_S, Detector, annotate_records
from benchguard.detection.inventory import build_inventory_rules
from benchguard.detection.rules import load_ruleset
from benchguard.engines import FileScan, scan_one_file
from benchguard.engines.work import _scan_in_file
from benchguard.importers import json_stream, results_json
from benchguard.importers.json_stream import BrokenArray, array_elements, stream_json_lines
from benchguard.importers.registry import import_path, stream_path
from benchguard.importers.transcript import RecordStream, UnreadableLogError, json_lines
from benchguard.results.io import ResultsDocument, dumps

REPO = Path(__file__).resolve().parents[2]


def _streamed(
    path: Path, format_name: str | None = None
) -> tuple[str, list[dict[str, Any]], list[str]]:
    stream = stream_path(path, format_name)
    records = list(stream.records)
    return stream.format, records, list(stream.problems)


def _whole(
    path: Path, format_name: str | None = None
) -> tuple[str, list[dict[str, Any]], list[str]]:
    imported = import_path(path, format_name)
    return imported.format, imported.records, imported.problems


def _record(index: int, text: str = "") -> dict[str, Any]:
    return {
        "name": f"task-{index}",
        "input": "Fix it. Print done.",
        "output": f"done {text}",
        "trajectory": [
            {"name": "exec", "args": {"command": f"cat f{index}.py"}, "result": text},
            {"name": "write_file", "args": {"path": "a.py", "content": text}, "result": "ok"},
        ],
    }


# Text a naive splitter would take for structure.
_HOSTILE_TEXT = [
    'a "quoted" ] } ) , word',
    "ends in a backslash \\",
    '\\\\" }, {',
    "[[[{{{",
    "]]]}}},\n\n{",
    "caf\u00e9 \u65e5\u672c\u8a9e \U0001f600 \u2028 \u0085",
    "\n}\n]\n",
    "   }",
    "",
]


def _corpus() -> list[dict[str, Any]]:
    return [_record(i, text) for i, text in enumerate(_HOSTILE_TEXT)]


def _fixture_files() -> list[Path]:
    roots = [REPO / "tests" / "importers" / "fixtures", REPO / "examples"]
    found = [
        p
        for root in roots
        for p in root.rglob("*")
        if p.is_file() and p.suffix in (".json", ".jsonl", ".traj", ".eval")
    ]
    return sorted(found)


@pytest.mark.parametrize("path", _fixture_files(), ids=lambda p: str(p.relative_to(REPO)))
def test_every_fixture_streams_as_it_reads_whole(path: Path) -> None:
    try:
        whole = _whole(path)
    except ValueError as exc:
        with pytest.raises(type(exc)):
            _streamed(path)
        return
    assert _streamed(path) == whole


@pytest.mark.parametrize(
    "layout",
    [
        pytest.param(lambda v: json.dumps(v, indent=2), id="indent2"),
        pytest.param(lambda v: json.dumps(v, indent=1, ensure_ascii=False), id="indent1-utf8"),
        pytest.param(lambda v: json.dumps(v), id="compact"),
        pytest.param(lambda v: json.dumps(v, separators=(",", ":")), id="minified"),
        pytest.param(lambda v: json.dumps(v, indent="\t").replace("\n", "\r\n"), id="crlf-tabs"),
        pytest.param(lambda v: "\ufeff\n\n" + json.dumps(v, indent=4) + "\n\n", id="bom-blank"),
        pytest.param(lambda v: "[" + ",\n".join(json.dumps(r) for r in v) + "]", id="one-per-line"),
    ],
)
@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_list_layouts_stream_identically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, layout: Any, chunk: int
) -> None:
    monkeypatch.setattr(json_stream, "CHUNK_BYTES", chunk)
    monkeypatch.setattr(json_stream, "_FIRST_WINDOW", 16)
    path = tmp_path / "results.json"
    path.write_bytes(layout(_corpus()).encode("utf-8"))
    streamed = _streamed(path)
    assert streamed == _whole(path)
    assert len(streamed[1]) == len(_HOSTILE_TEXT)


@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_json_lines_stream_identically(tmp_path: Path, newline: str) -> None:
    lines = [json.dumps(r, ensure_ascii=False) for r in _corpus()]
    lines[3:3] = ["", "   ", "not json", '{"output": NaN}', '{"output": "\\ud800 lone"}']
    lines.append('{"output": "big", "iteration": 123456789012345678901234567890}')
    lines.append('{"output": "\u00e9' + "x" * 50 + '"')  # a killed writer's last line
    path = tmp_path / "results.jsonl"
    path.write_bytes(newline.join(lines).encode("utf-8") + b"\n{\xff\xfe}\n")
    # (Detection reads binary lines: a file of lone CRs is named by its format.)
    streamed = _streamed(path, "benchguard")
    assert streamed == _whole(path, "benchguard")
    assert any("line 6" in p for p in streamed[2])


def test_verifiers_traces_stream_identically(fixtures: Path, tmp_path: Path) -> None:
    source = (fixtures / "verifiers_traces.jsonl").read_bytes()
    path = tmp_path / "traces.jsonl"
    path.write_bytes(source + b"\r\n\r\n{broken\r\n" + source.replace(b"\n", b"\r\n"))
    assert _streamed(path) == _whole(path)


def test_nan_surrogates_and_big_integers_read_as_json_reads_them(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_bytes(
        b'[\n {"output": NaN, "duration_s": Infinity, "trajectory": []},\n'
        b' {"output": "\\ud800\\udfff \\udc00", "iteration": 123456789012345678901},\n'
        b' {"output": "x", "exit_code": 18446744073709551616, "scores": {"n": -9223372036854775809}}\n]'
    )
    streamed = _streamed(path)
    assert streamed == _whole(path)
    assert streamed[1][2]["scores"]["n"] == -9223372036854775809


def test_a_truncated_final_element_keeps_the_records_before_it(tmp_path: Path) -> None:
    records = _corpus()
    text = json.dumps(records, indent=2)
    cut = text[: text.rindex('"name"')]
    path = tmp_path / "results.json"
    path.write_text(cut, encoding="utf-8")
    intact = tmp_path / "intact.json"
    intact.write_text(json.dumps(records[:-1], indent=2), encoding="utf-8")
    with pytest.raises(ValueError, match="not valid JSON"):
        import_path(path)  # the whole-file reader refuses the file
    fmt, kept, problems = _streamed(path)
    assert (fmt, kept) == _whole(intact)[:2]
    assert len(problems) == 1
    assert f"record [{len(records) - 1}]" in problems[0]
    assert "truncated" in problems[0] and "the rest of the file is not read" in problems[0]


def test_a_corrupt_element_is_named_and_the_rest_is_read(tmp_path: Path) -> None:
    records = _corpus()
    text = json.dumps(records, indent=2).replace('"output": "done [[[{{{"', '"output": tru', 1)
    path = tmp_path / "results.json"
    path.write_text(text, encoding="utf-8")
    _, kept, problems = _streamed(path)
    assert [r["name"] for r in kept] == [r["name"] for r in records if r["name"] != "task-3"]
    line = text[: text.index('"output": tru')].count("\n") + 1
    assert len(problems) == 1
    assert problems[0].startswith(f"{path}: record [3] (line ")
    assert f"not valid JSON (Expecting value, line {line} column " in problems[0]
    assert int(problems[0].split("(line ")[1].split(")")[0]) <= line


def test_nesting_past_the_bound_costs_only_that_element(tmp_path: Path) -> None:
    deep = "[" * 20_000 + "]" * 20_000
    path = tmp_path / "results.json"
    path.write_text(f"[{json.dumps(_record(0))}, {deep}, {json.dumps(_record(2))}]")
    _, kept, problems = _streamed(path)
    assert [r["name"] for r in kept] == ["task-0", "task-2"]
    assert problems == [
        f"{path}: record [1] (line 1): nested deeper than 4096 levels; not read; skipped"
    ]


def _names_and_peak(stream: RecordStream) -> tuple[list[Any], int]:
    """The streamed records' names, and the traced memory peak while reading them."""
    tracemalloc.start()
    try:
        names = [record.get("name") for record in stream.records]
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return names, peak


def test_a_record_over_the_cap_is_skipped_without_being_held(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json_stream, "MAX_VALUE_BYTES", 1 << 20)
    monkeypatch.setattr(json_stream, "CHUNK_BYTES", 64 << 10)
    big = _record(1, "x" * (30 << 20))  # 60 MB: the text twice
    path = tmp_path / "results.json"
    path.write_text(json.dumps([_record(0), big, _record(2)], indent=1), encoding="utf-8")
    stream = stream_path(path)
    names, peak = _names_and_peak(stream)
    assert names == ["task-0", "task-2"]
    assert len(stream.problems) == 1 and "record [1]" in stream.problems[0]
    assert f"larger than {1 << 20} bytes" in stream.problems[0]
    # orjson, given at most the cap to find the element's end, reserves about 12 times
    # what it is given (address space, mostly untouched, but traced here).
    assert peak < 16 << 20, f"peak {peak} bytes while skipping a 60 MB record"


def test_a_jsonl_line_over_the_cap_is_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(json_stream, "MAX_VALUE_BYTES", 1 << 16)
    path = tmp_path / "results.jsonl"
    path.write_text(
        "\n".join(json.dumps(r) for r in (_record(0), _record(1, "y" * 100_000), _record(2)))
    )
    _, kept, problems = _streamed(path)
    assert [r["name"] for r in kept] == ["task-0", "task-2"]
    assert problems == [f"{path}: line 2: longer than 65536 bytes; not read; skipped"]


def test_memory_follows_the_largest_record_not_the_file(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    records = [_record(i, f"line {i}\n" * 4000) for i in range(300)]  # ~ 30 MB
    path.write_text(json.dumps(records, indent=1), encoding="utf-8")
    largest = max(len(json.dumps(r, indent=1)) for r in records)
    assert path.stat().st_size > 100 * largest
    stream = stream_path(path)
    names, peak = _names_and_peak(stream)
    count = len(names)
    assert count == 300
    # The constant is the read chunk (1 MiB) and orjson's window; a whole-file read
    # would hold the file's 30 MB twice over.
    assert peak < 4 * largest + 3 * json_stream.CHUNK_BYTES, (peak, largest)


def test_scan_of_a_truncated_list_reports_what_it_read_and_is_not_clean(tmp_path: Path) -> None:
    cheat = _record(0)
    cheat["trajectory"][0]["args"]["command"] = "cat ~/benchguard/tasks/fix-login/task.yaml"
    text = json.dumps([cheat, _record(1), _record(2)], indent=2)
    path = tmp_path / "results.json"
    path.write_text(text[: text.rindex("}")], encoding="utf-8")
    scanned = scan_one_file(str(path), load_ruleset("benchguard"))
    assert scanned.error is None
    assert [r.report.status for r in scanned.records] == ["flagged", "clean"]
    assert len(scanned.problems) == 1 and "record [2]" in scanned.problems[0]


# --- properties: the splitter against json.loads -------------------------------------

_json_text = st.text(
    alphabet=st.sampled_from(list('abc "\\/[]{},:\n\t\u00e9\u65e5\U0001f600\x00\x1f')), max_size=30
)
_json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | _json_text,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_json_text, inner, max_size=4),
    max_leaves=25,
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(_json_values, max_size=6),
    st.sampled_from([None, 0, 1, 3]),
    st.booleans(),
    st.integers(min_value=1, max_value=40),
)
def test_array_elements_are_what_json_loads_reads(
    values: list[Any], indent: int | None, ascii_only: bool, chunk: int
) -> None:
    data = json.dumps(values, indent=indent, ensure_ascii=ascii_only).encode("utf-8")
    read = [e.value for e in array_elements(io.BytesIO(data), chunk=chunk)]
    assert json.dumps(read) == json.dumps(json.loads(data))


@settings(max_examples=200, deadline=None)
@given(st.lists(_json_values | _json_text.map(lambda t: t + "{"), max_size=6))
def test_json_lines_read_as_the_text_reader_reads_them(values: list[Any]) -> None:
    text = "\n".join(v if isinstance(v, str) else json.dumps(v) for v in values)
    data = text.encode("utf-8")
    streamed = [
        (x.number, json.dumps(x.value), x.error) for x in stream_json_lines(io.BytesIO(data))
    ]
    reference = [
        (x.number, json.dumps(x.value), x.error)
        for x in json_lines(io.TextIOWrapper(io.BytesIO(data), encoding="utf-8", errors="replace"))
    ]
    assert streamed == reference


def test_broken_structure_is_a_broken_array() -> None:
    for data in (b"[1 2]", b'[{"a": 1}', b"[1,", b'[{"a": 1}] trailing'):
        with pytest.raises(BrokenArray):
            list(array_elements(io.BytesIO(data)))


# --- the harness's results object ------------------------------------------------------


def _harness_document(tmp_path: Path, records: list[dict[str, Any]]) -> dict[str, Any]:
    """A results document whose records carry the inventory rules the harness made
    (stored by reference in the file's dynamic rules table)."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    (home / "report.md").write_text("# Report\nAll 3 pods patched in payments\n")
    inventory = build_inventory_rules(home)
    annotate_records(records, load_ruleset(), dynamic_rules_for=lambda _i, _r: inventory)
    document: dict[str, Any] = ResultsDocument(
        records=records, run_id="run_1", t="2026-11-30T00:00:00Z"
    ).to_json()
    return document


@pytest.mark.parametrize("chunk", [5, 64, 1 << 20])
def test_the_harness_results_object_streams_identically(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int
) -> None:
    monkeypatch.setattr(json_stream, "CHUNK_BYTES", chunk)
    records = _corpus()
    records[1]["trajectory"][0]["args"]["command"] = "cat ~/report.md"
    path = tmp_path / "results.json"
    path.write_text(dumps(_harness_document(tmp_path, records)), encoding="utf-8")
    assert b'"dynamic_rules_ref"' in path.read_bytes()  # the table is used by reference
    streamed = _streamed(path)
    assert streamed == _whole(path)
    assert streamed[2] == [] and len(streamed[1]) == len(records)
    ref = streamed[1][1]["cheating_report"]["dynamic_rules_ref"]
    assert stream_path(path).rulesets is not None
    assert import_path(path).rulesets.rules(ref)  # the file's table came with the records


def test_a_one_line_results_object_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "results.json"
    path.write_text(json.dumps(_harness_document(tmp_path, _corpus())), encoding="utf-8")
    assert _streamed(path) == _whole(path)


def test_a_truncated_results_object_is_refused_as_before(tmp_path: Path) -> None:
    # Cut off, the object has no table at its end to resolve its records with: it is
    # read whole, and refused as a whole, as it always was (the scan fails closed).
    text = dumps(_harness_document(tmp_path, _corpus()))
    path = tmp_path / "results.json"
    path.write_text(text[: text.index('"name": "task-4"')], encoding="utf-8")
    with pytest.raises(UnreadableLogError) as whole:
        import_path(path)
    with pytest.raises(UnreadableLogError) as streamed:
        _streamed(path)
    assert str(streamed.value) == str(whole.value)
    scanned = scan_one_file(str(path), load_ruleset("benchguard"))
    assert scanned.error == str(whole.value) and scanned.records == ()


def test_a_table_that_differs_from_the_one_read_ahead_is_a_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "results.json"
    path.write_text(dumps(_harness_document(tmp_path, _corpus())), encoding="utf-8")
    real = json_stream.last_member

    def tampered(handle: Any, key: str, *args: Any, **kwargs: Any) -> tuple[bool, Any]:
        found, table = real(handle, key, *args, **kwargs)
        return found, {**table, "rules": table["rules"][:1]}

    monkeypatch.setattr(results_json, "last_member", tampered)
    _, _, problems = _streamed(path)
    assert any("read ahead from the end of the file is not the one" in p for p in problems)


def test_duplicate_records_keys_are_all_scanned_and_said(tmp_path: Path) -> None:
    cheat = _record(9)
    cheat["trajectory"][0]["args"]["command"] = "cat ~/benchguard/tasks/fix-login/task.yaml"
    body = {"schema_version": 2, "run_id": "r", "records": [cheat]}
    text = json.dumps(body, indent=2)[:-2] + ',\n  "records": [],\n  "dynamic_rulesets": null\n}'
    path = tmp_path / "results.json"
    path.write_text(text, encoding="utf-8")
    scanned = scan_one_file(str(path), load_ruleset("benchguard"))
    assert [r.report.status for r in scanned.records] == ["flagged"]
    assert any("'records' appears 2 times" in p for p in scanned.problems)


def test_results_object_memory_follows_the_largest_record(tmp_path: Path) -> None:
    records = [_record(i, f"line {i}\n" * 4000) for i in range(200)]
    path = tmp_path / "results.json"
    path.write_text(dumps(_harness_document(tmp_path, records)), encoding="utf-8")
    largest = max(len(json.dumps(r, indent=2)) for r in records)
    assert path.stat().st_size > 100 * largest
    stream = stream_path(path)
    names, peak = _names_and_peak(stream)
    count = len(names)
    assert count == 200 and stream.problems == []
    assert peak < 4 * largest + 3 * json_stream.CHUNK_BYTES, (peak, largest)


def test_an_eval_archive_streams_sample_by_sample(eval_archive: Path) -> None:
    stream = stream_path(eval_archive)
    first = next(stream.records)  # read before the other members are decompressed
    rest = list(stream.records)
    assert (stream.format, [first, *rest], stream.problems) == _whole(eval_archive)


# --- reports: a streamed scan against a scan of the whole-file import ------------------


def _whole_file_scan(path: Path, rules: Any) -> FileScan:
    """What ``scan_one_file`` gave before streaming: the file imported whole, then each
    record scanned."""
    imported = import_path(path)
    detector = Detector()
    return FileScan(
        path=str(path),
        format=imported.format,
        records=tuple(
            _scan_in_file(
                record, index, rules, DEFAULT_RECORD_BUDGET_S, imported.rulesets, None, detector
            )
            for index, record in enumerate(imported.records)
        ),
        problems=tuple(imported.problems),
        bytes=path.stat().st_size,
    )


def test_reports_are_byte_identical_to_the_whole_file_scan(tmp_path: Path) -> None:
    rules = load_ruleset("benchguard")
    cheat = _record(7)
    cheat["trajectory"][0]["args"]["command"] = "cat ~/benchguard/tasks/fix-login/task.yaml"
    records = [*_corpus(), cheat]
    records[1]["trajectory"][0]["args"]["command"] = "cat ~/report.md"
    files = {
        "pretty.json": json.dumps(records, indent=2),
        "compact.json": json.dumps(records),
        "crlf.json": "\ufeff" + json.dumps(records, indent=1).replace("\n", "\r\n"),
        "lines.jsonl": "\n\n".join(json.dumps(r) for r in records) + "\nnot json\n",
        "harness.json": dumps(_harness_document(tmp_path, [dict(r) for r in records])),
    }
    paths = [tmp_path / name for name in files]
    for path in paths:
        path.write_text(files[path.name], encoding="utf-8")
    paths += [p for p in _fixture_files() if p.suffix != ".eval"]
    flagged = 0
    for path in paths:
        streamed = scan_one_file(str(path), rules)
        if streamed.error is not None:
            continue
        whole = _whole_file_scan(path, rules)
        assert streamed.model_dump_json() == whole.model_dump_json(), path
        flagged += sum(r.report.status == "flagged" for r in streamed.records)
    assert flagged >= 5  # the planted reads were seen, in every layout
