"""One exit policy for every command (docs/exit-codes.md), through the real CLI: 0 clean,
1 gated or flagged, 2 bad input, 3 incomplete; 2 wins over 1, 1 over 3."""

from __future__ import annotations

import copy
import json
import shutil
from pathlib import Path

import pytest

from benchguard.workflows.exit_policy import verdict_exit_code
from cli.helpers import CHEAT, HONEST, REPO, exited, invoke, record, run_dir

FIXTURES = Path(__file__).parents[1] / "importers" / "fixtures"


@pytest.mark.parametrize(
    ("bad", "gated", "incomplete", "code"),
    [
        (False, False, False, 0),
        (False, False, True, 3),
        (False, True, False, 1),
        (False, True, True, 1),
        (True, False, False, 2),
        (True, True, True, 2),
        (True, False, True, 2),
    ],
)
def test_precedence_is_bad_input_then_verdict_then_incomplete(
    bad: bool, gated: bool, incomplete: bool, code: int
) -> None:
    assert verdict_exit_code(bad_input=bad, gated=gated, incomplete=incomplete) == code


def test_a_review_status_exits_0_unless_asked_to_fail_on_it() -> None:
    """The hook the detection work's ``review`` status plugs into."""
    assert verdict_exit_code(review=True) == 0
    assert verdict_exit_code(review=True, fail_on_review=True) == 1
    assert verdict_exit_code(review=True, fail_on_review=True, bad_input=True) == 2


def test_score_of_a_gated_log_exits_1_as_scan_does(tmp_path: Path) -> None:
    """Guards the CI step that scores logs: a cheating run must not pass it."""
    cheat = run_dir(tmp_path, "run_b", [record("log-rotate", 0, CHEAT)])
    honest = run_dir(tmp_path, "run_a", [record("log-rotate", 0, HONEST)])
    for results, code in ((cheat, 1), (honest, 0)):
        exited(invoke("scan", str(results)), code)
        exited(invoke("score", str(results)), code)
        for fmt in ("json", "sarif", "junit"):
            exited(invoke("score", str(results), "--format", fmt), code)


def test_score_of_an_imported_gated_log_exits_1(tmp_path: Path) -> None:
    log = tmp_path / "inspect_log.json"
    shutil.copy(FIXTURES / "inspect_log.json", log)
    exited(invoke("scan", str(log)), 1)
    exited(invoke("score", str(log)), 1)


def test_score_bad_input_wins_over_a_gated_run(tmp_path: Path) -> None:
    cheat = run_dir(tmp_path, "run_b", [record("log-rotate", 0, CHEAT)])
    bad = tmp_path / "broken" / "results.json"
    bad.parent.mkdir()
    bad.write_text("[{", encoding="utf-8")
    result = invoke("score", str(cheat), str(bad))
    exited(result, 2)
    assert (cheat.parent / "rows.json").is_file()  # the good input is still written


def test_score_incomplete_is_3_and_a_gated_run_wins_over_it(tmp_path: Path) -> None:
    honest = run_dir(tmp_path, "a", [record("log-rotate", 0, HONEST), "junk"])
    result = invoke("score", str(honest))
    exited(result, 3)
    assert "record 1 is not an object" in result.stderr
    cheat = run_dir(tmp_path, "b", [record("log-rotate", 0, CHEAT), "junk"])
    exited(invoke("score", str(cheat)), 1)


def test_scan_footer_names_the_exit_code_the_process_really_ends_with(tmp_path: Path) -> None:
    """Guards against a footer saying "exit code 3" over a process that exits 1."""
    tree = tmp_path / "logs"
    run_dir(tree, "run_b", [record("log-rotate", 0, CHEAT)])
    (tree / "notes.json").write_text('{"not": "a log"}', encoding="utf-8")
    result = invoke("scan", str(tree))
    exited(result, 1)
    footer = result.stdout.strip().splitlines()[-1]
    assert "INCOMPLETE" in footer and footer.endswith("exit code 1"), footer
    # The skipped file is named in the table's summary, as pytest names collection errors.
    assert f"incomplete: {tree / 'notes.json'}: not a log format we read" in result.stdout
    clean = invoke("scan", str(run_dir(tmp_path, "ok", [record("t", 0, HONEST)])))
    exited(clean, 0)
    assert clean.stdout.strip().splitlines()[-1].endswith("exit code 0")


def _errored_inspect_log(path: Path) -> Path:
    """An Inspect log whose two samples both errored before any tool call."""
    document = json.loads((FIXTURES / "inspect_log.json").read_text(encoding="utf-8"))
    (sample,) = document["samples"]
    samples = []
    for index in (1, 2):
        errored = copy.deepcopy(sample)
        errored["id"] = f"login-{index}"
        errored["messages"] = [m for m in sample["messages"] if m["role"] in ("system", "user")]
        errored["output"] = {"model": sample["output"]["model"], "choices": []}
        errored["events"] = []
        errored["error"] = {"message": "RuntimeError: timed out", "traceback": ""}
        samples.append(errored)
    document["samples"], document["status"] = samples, "error"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


def test_a_scan_where_no_record_had_anything_to_scan_exits_3_and_says_so(tmp_path: Path) -> None:
    log = _errored_inspect_log(tmp_path / "errored.json")
    result = invoke("scan", str(log))
    exited(result, 3)
    assert "2 no data" in result.stdout
    assert "no record had anything to scan (2 record(s), all no data)" in result.stdout
    as_json = invoke("scan", str(log), "--json")
    exited(as_json, 3)
    assert any(
        e["report"] is None and "no record had anything" in e["skipped"]
        for e in json.loads(as_json.stdout)
    )


def test_scan_of_a_missing_path_prints_one_line(tmp_path: Path) -> None:
    result = invoke("scan", str(tmp_path / "nonexistent"))
    exited(result, 2)
    assert result.stderr.strip().splitlines() == [
        f"error: {tmp_path / 'nonexistent'}: no such file or directory"
    ]


def test_aggregate_with_a_skipped_rows_file_is_incomplete(tmp_path: Path) -> None:
    results = run_dir(tmp_path / "runs", "run_a", [record("log-rotate", 0, HONEST)])
    exited(invoke("score", str(results)), 0)
    broken = tmp_path / "runs" / "run_z" / "rows.json"
    broken.parent.mkdir()
    broken.write_text("[{", encoding="utf-8")
    result = invoke("aggregate", str(tmp_path / "runs"), "-o", str(tmp_path / "board"))
    exited(result, 3)
    assert str(broken) in result.stderr


COMMANDS = (
    (),
    ("run",),
    ("scan",),
    ("score",),
    ("aggregate",),
    ("leaderboard",),
    ("dismiss",),
    ("inventory",),
    ("config",),
    ("version",),
    ("redaction",),
    ("redaction", "eval"),
    ("redaction", "score"),
    ("redaction", "show"),
)


@pytest.mark.parametrize("command", COMMANDS, ids=lambda c: " ".join(c) or "benchguard")
def test_dash_h_is_help_and_help_names_exit_codes_without_python_types(
    command: tuple[str, ...],
) -> None:
    short, long = invoke(*command, "-h"), invoke(*command, "--help")
    exited(short, 0)
    assert short.stdout == long.stdout and short.stdout.startswith("Usage: benchguard")
    text = short.stdout
    for python_type in ("<str>", "<bool>", "<path>", "<int", "<list["):
        assert python_type not in text, (python_type, text)
    if command and command != ("version",):
        assert "docs/exit-codes.md" in text, text


def test_help_lists_the_choices_of_choice_options() -> None:
    scan = invoke("scan", "-h").stdout
    assert "--format [table|json|sarif|junit]" in scan
    assert "--engine [serial|dask]" in scan
    assert "--input-format [benchguard|inspect|" in scan
    run = invoke("run", "-h").stdout
    assert "--sandbox [none|bwrap]" in run and "--audit [auto|fanotify|strace|none]" in run
    assert "--unverified [zero|include|exclude]" in invoke("leaderboard", "-h").stdout


def test_help_paragraphs_are_reflowed_never_broken_mid_sentence_or_mid_word() -> None:
    """Rich's help kept the docstring's own line breaks ("2 for bad input,\\n3 when...")
    and the wrapper split hyphenated names across lines."""
    for command in (("run",), ("scan",), ("score",), ("redaction",)):
        lines = invoke(*command, "-h").stdout.splitlines()
        assert not any(line.rstrip().endswith("-") for line in lines), lines
    scan = invoke("scan", "-h").stdout
    paragraph = scan.split("\n\n")[2]
    assert paragraph.lstrip().startswith("Exit codes:")
    widths = [len(line) for line in paragraph.splitlines()[:-1]]
    assert all(w > 60 for w in widths), paragraph  # filled lines, no early breaks


def test_the_redaction_preset_choices_are_the_environments() -> None:
    from benchguard.cli.redaction_cmds import PRESET_CHOICES
    from redaction_pressure.knobs import PRESETS

    assert "[" + "|".join(PRESETS) + "]" == PRESET_CHOICES


def test_the_exit_codes_page_exists_and_every_command_is_in_it() -> None:
    page = (REPO / "docs" / "exit-codes.md").read_text(encoding="utf-8")
    for command in ("run", "scan", "score", "aggregate", "leaderboard", "dismiss"):
        assert f"| `{command}` |" in page
