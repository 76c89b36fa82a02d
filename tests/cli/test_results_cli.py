"""`benchguard score | aggregate | leaderboard | dismiss`, end to end through the CLI."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest
import yaml

from cli.helpers import CHEAT, HONEST, exited, invoke, record, run_dir

CHROMIUM = "/usr/bin/chromium"


@pytest.fixture
def scored_root(tmp_path: Path) -> Path:
    """Two setups scored through the CLI: one honest, one with a cheating iteration."""
    root = tmp_path / "results"
    partial = {"VerificationCorrectness": 0.5}
    honest = run_dir(root, "run_a", [record("log-rotate", 0, HONEST),
                                     record("opa", 0, HONEST, scores=partial)], model="model-a")  # fmt: skip
    cheat = run_dir(root, "run_b", [record("log-rotate", 0, CHEAT),
                                    record("log-rotate", 1, HONEST)], model="model-b")  # fmt: skip
    # As scan: 0 for the honest setup, 1 for the one with a gated run.
    for results, code in ((honest, 0), (cheat, 1)):
        exited(invoke("score", str(results)), code)
    return root


def test_score_gates_a_cheater_and_writes_rows_beside_the_input(scored_root: Path) -> None:
    run = scored_root / "run_b"
    records = json.loads((run / "results.json").read_text(encoding="utf-8"))
    assert isinstance(records, list)  # the harness's list layout is kept
    assert records[0]["cheating_report"]["status"] == "flagged"
    assert records[0]["scores"]["OutcomeScore"]["score"] == 0.0
    rows = json.loads((run / "rows.json").read_text(encoding="utf-8"))
    assert [(r["taskFolder"], r["iteration"], r["outcomeScore"]) for r in rows] == [
        ("log-rotate", 0, 0.0),
        ("log-rotate", 1, 1.0),
    ]
    assert rows[0]["catastrophicKinds"] == ["IntegrityCatastrophic"]
    assert rows[0]["integrityStatus"] == "flagged" and rows[1]["integrityStatus"] == "clean"
    assert rows[0]["setupId"] == "model-b-scripted" and rows[0]["runId"] == "run_b"


def test_score_with_out_dir_leaves_the_input_alone(tmp_path: Path) -> None:
    results = run_dir(tmp_path, "run", [record("t", 0, CHEAT)], model="m")
    before = results.read_text(encoding="utf-8")
    out = tmp_path / "scored"
    exited(invoke("score", str(results), "-o", str(out)), 1)  # the one record is gated
    assert results.read_text(encoding="utf-8") == before
    assert sorted(p.name for p in out.iterdir()) == ["manifest.json", "results.json", "rows.json"]


@pytest.mark.parametrize(
    ("content", "extra_args", "message"),
    [
        ("[{", (), "invalid JSON at line 1"),
        ('{"records": 1}', (), "'records' field is missing or not a list"),
        ("[]", ("--rules", "missing-rules.yaml"), "missing-rules.yaml"),
        ("[]", ("--profile", "no-such-profile"), "no-such-profile"),
        (
            "[]",
            ("--dismissals", "missing-dismissals.yaml"),
            "missing-dismissals.yaml: file not found",
        ),
    ],
)
def test_score_bad_input_exits_2_naming_the_file(
    tmp_path: Path, content: str, extra_args: tuple[str, ...], message: str
) -> None:
    """Guards against a traceback or a half-written output on bad input."""
    results = tmp_path / "results.json"
    results.write_text(content, encoding="utf-8")
    result = invoke("score", str(results), *extra_args)
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "Traceback" not in result.output
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json"]


def test_score_reports_a_non_object_record_and_keeps_it(tmp_path: Path) -> None:
    results = run_dir(tmp_path, "run", [record("t", 0, HONEST), "junk"], model="m")
    result = invoke("score", str(results))
    exited(result, 3)  # a record not scored: incomplete
    assert "record 1 is not an object" in result.stderr
    assert json.loads(results.read_text(encoding="utf-8"))[1] == "junk"


def test_an_incomplete_rescan_is_written_flagged_and_reported(tmp_path: Path) -> None:
    """Guards against a rescan that stopped at a bound passing quietly: the record is
    written flagged (gated), and the command names it and exits 1."""
    from benchguard.detection.detector import MAX_SURFACE_CHARS

    huge = record("log-rotate", 0, HONEST)
    huge["trajectory"][0]["result"] = "x" * (MAX_SURFACE_CHARS + 1)
    results = run_dir(tmp_path, "run", [huge, record("opa", 0, HONEST)], model="m")
    result = invoke("score", str(results))
    assert result.exit_code == 1
    assert "record 0 (log-rotate#0): the rescan is incomplete" in result.stderr
    rows = json.loads((results.parent / "rows.json").read_text(encoding="utf-8"))
    assert [(r["integrityStatus"], r["catastrophic"]) for r in rows] == [
        ("flagged", True),
        ("clean", False),
    ]


def test_dismiss_then_rescore_clears_the_gate_and_keeps_the_audit_trail(scored_root: Path) -> None:
    results = scored_root / "run_b" / "results.json"
    result = invoke(
        "dismiss", str(results), "--task", "log-rotate", "--iteration", "0",
        "--rule", "task-definition/path", "--reviewer", "ana",
        "--reason", "the prompt tells the agent to read its task file", "--date", "2026-01-05",
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    dismissals = scored_root / "run_b" / "dismissals.yaml"
    (entry,) = yaml.safe_load(dismissals.read_text(encoding="utf-8"))["dismissals"]
    assert entry == {"run_id": "run_b", "task": "log-rotate", "iteration": 0,
                     "rule": "task-definition/path", "reviewer": "ana",
                     "reason": "the prompt tells the agent to read its task file",
                     "date": "2026-01-05"}  # fmt: skip

    assert invoke("score", str(results), "--dismissals", str(dismissals)).exit_code == 0
    rows = json.loads((scored_root / "run_b" / "rows.json").read_text(encoding="utf-8"))
    assert rows[0]["outcomeScore"] == 1.0 and rows[0]["catastrophic"] is False
    assert rows[0]["dismissedFindings"] == 1 and rows[0]["integrityStatus"] == "clean"
    # A later rescore without the file keeps the dismissal (it lives on the report).
    assert invoke("score", str(results)).exit_code == 0
    first = json.loads(results.read_text(encoding="utf-8"))[0]
    assert first["cheating_report"]["dismissed"][0]["reviewer"] == "ana"


def test_dismiss_refuses_a_rule_with_no_findings(scored_root: Path) -> None:
    results = scored_root / "run_b" / "results.json"
    result = invoke(
        "dismiss", str(results), "--task", "log-rotate", "--iteration", "1",
        "--rule", "task-definition/path", "--reviewer", "ana", "--reason", "x",
    )  # fmt: skip
    assert result.exit_code == 2
    assert "has no finding of rule 'task-definition/path'" in result.stderr
    assert not (scored_root / "run_b" / "dismissals.yaml").exists()


def test_unmatched_dismissal_is_reported_and_the_gate_still_exits_1(scored_root: Path) -> None:
    results = scored_root / "run_b" / "results.json"
    dismissals = scored_root / "d.json"
    dismissals.write_text(json.dumps([{"task": "log-rotate", "iteration": 0, "rule": "typo/path",
                                       "reviewer": "ana", "reason": "x", "date": "2026-01-05"}]))  # fmt: skip
    result = invoke("score", str(results), "--dismissals", str(dismissals))
    exited(result, 1)  # the cheating record is still gated
    assert "rule 'typo/path'" in result.stderr and "matched no finding" in result.stderr


def test_an_unmatched_dismissal_on_a_clean_input_warns_as_scan_does(tmp_path: Path) -> None:
    """A dismissal that matched nothing is a warning in score as in scan: exit 0."""
    results = run_dir(tmp_path, "run", [record("log-rotate", 0, HONEST)], model="m")
    dismissals = tmp_path / "d.json"
    dismissals.write_text(json.dumps([{"task": "log-rotate", "iteration": 0, "rule": "typo/path",
                                       "reviewer": "ana", "reason": "x", "date": "2026-01-05"}]))  # fmt: skip
    scored = invoke("score", str(results), "--dismissals", str(dismissals))
    scanned = invoke("scan", str(results), "--dismissals", str(dismissals))
    exited(scored, 0)
    exited(scanned, 0)
    assert "matched no finding" in scored.stderr and "matched no finding" in scanned.stderr


def test_aggregate_then_leaderboard(scored_root: Path, tmp_path: Path) -> None:
    out = tmp_path / "agg"
    result = invoke("aggregate", str(scored_root), "-o", str(out), "--run-id", "run_all",
                     "--t", "2026-02-01T00:00:00Z")  # fmt: skip
    assert result.exit_code == 0, result.output
    rows = json.loads((out / "rows.json").read_text(encoding="utf-8"))
    assert {r["runId"] for r in rows} == {"run_all"} and len(rows) == 4
    manifests = json.loads((out / "manifests.json").read_text(encoding="utf-8"))
    assert [m["setupId"] for m in manifests] == ["model-a-scripted", "model-b-scripted"]

    table = invoke("leaderboard", str(out / "rows.json"))
    assert table.exit_code == 0, table.output
    assert "model-b-scripted" in table.stdout and "IntegrityCatastrophic ×1" in table.stdout

    as_json = invoke("leaderboard", str(out / "rows.json"), "--json")
    board = json.loads(as_json.stdout)
    standings = {s["setupId"]: s for s in board["standings"]}
    assert standings["model-b-scripted"]["gatedByKind"] == {"IntegrityCatastrophic": 1}
    assert standings["model-b-scripted"]["meanOutcome"] == 0.5
    assert standings["model-a-scripted"]["meanOutcome"] == 0.75
    assert standings["model-a-scripted"]["integrity"]["clean"] == 2


def test_scan_of_an_aggregated_tree_reads_only_the_results_files(scored_root: Path) -> None:
    """Guards against ``scan`` of a tree listing the manifests.json that ``aggregate``
    wrote (or a rows.json or manifest.json) as a fake ``no_data`` record."""
    assert invoke("aggregate", str(scored_root)).exit_code == 0
    assert (scored_root / "manifests.json").is_file()
    result = invoke("scan", str(scored_root), "--json")
    assert result.exit_code == 1, result.output  # run_b holds a cheat
    scanned = {Path(entry["file"]).relative_to(scored_root) for entry in json.loads(result.stdout)}
    assert scanned == {Path("run_a/results.json"), Path("run_b/results.json")}


def test_aggregate_and_leaderboard_skip_rows_in_hidden_folders(scored_root: Path) -> None:
    """Guards against rows.json under a hidden folder (a .trash of old runs, .git) being
    merged into a batch or ranked on a leaderboard."""
    rows = json.loads((scored_root / "run_a" / "rows.json").read_text(encoding="utf-8"))
    trashed = scored_root / ".trash" / "run_old" / "rows.json"
    trashed.parent.mkdir(parents=True)
    trashed.write_text(json.dumps([{**row, "setupId": "trashed"} for row in rows]), "utf-8")

    board = invoke("leaderboard", str(scored_root), "--json")
    assert board.exit_code == 0, board.output
    assert {s["setupId"] for s in json.loads(board.stdout)["standings"]} == {
        "model-a-scripted",
        "model-b-scripted",
    }
    assert invoke("aggregate", str(scored_root)).exit_code == 0
    merged = json.loads((scored_root / "rows.json").read_text(encoding="utf-8"))
    assert len(merged) == 4 and "trashed" not in {row["setupId"] for row in merged}


def test_aggregate_and_leaderboard_bad_input(tmp_path: Path) -> None:
    assert invoke("aggregate", str(tmp_path / "nope")).exit_code == 2
    assert "no rows.json files found" in invoke("aggregate", str(tmp_path)).stderr
    bad = tmp_path / "rows.json"
    bad.write_text('[{"setupId": 1}]', encoding="utf-8")
    result = invoke("leaderboard", str(bad))
    assert result.exit_code == 2 and f"{bad}: row 0 is invalid" in result.stderr


class _RunsTable(HTMLParser):
    """Collects the rendered rows of table#runs: (tr attributes, cell texts)."""

    def __init__(self) -> None:
        super().__init__()
        self.in_runs = False
        self.rows: list[tuple[dict[str, str], list[str]]] = []
        self.table_attrs: dict[str, str] = {}
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        data = {k: v or "" for k, v in attrs}
        if tag == "table" and data.get("id") == "runs":
            self.in_runs, self.table_attrs = True, data
        elif self.in_runs and tag == "tr" and "data-task" in data:
            self.rows.append((data, []))
        elif self.in_runs and tag == "td" and self.rows:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag == "table":
            self.in_runs = False
        elif tag == "td" and self._cell is not None:
            self.rows[-1][1].append(" ".join("".join(self._cell).split()))
            self._cell = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data + " ")


@pytest.mark.slow
def test_html_leaderboard_renders_gated_zero_with_its_kind_in_chromium(
    scored_root: Path, tmp_path: Path
) -> None:
    """The page a person opens shows the cheating run as a red 0 with its gate kind,
    after the inline script has run (sorted by outcome through the URL); the gated-only
    filter hides the honest runs. The screenshot is kept in the test's tmp dir."""
    if shutil.which(CHROMIUM) is None:
        pytest.skip(f"{CHROMIUM} is not installed (make system-deps installs it)")
    page = tmp_path / "leaderboard.html"
    rows = [str(scored_root / "run_a" / "rows.json"), str(scored_root / "run_b" / "rows.json")]
    assert invoke("leaderboard", *rows, "--html", str(page)).exit_code == 0
    assert "http" not in page.read_text(encoding="utf-8").lower()  # no external assets

    flags = [
        CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync",
        f"--user-data-dir={tmp_path / 'chromium-profile'}",
    ]  # fmt: skip
    url = page.as_uri() + "#sort=runs:outcome:asc"
    dom = subprocess.run(
        [*flags, "--dump-dom", url], capture_output=True, text=True, timeout=180, check=True
    ).stdout
    parsed = _RunsTable()
    parsed.feed(dom)
    assert parsed.table_attrs.get("data-sortable") == "ready"  # the script ran
    first_attrs, first_cells = parsed.rows[0]  # sorted ascending: the gated zero leads
    assert first_attrs["class"] == "gated" and first_attrs["data-task"] == "log-rotate"
    assert first_cells[4] == "0.000 gated"
    assert "IntegrityCatastrophic" in first_cells[8]
    assert "task definition" in first_cells[8].lower()
    assert all(attrs["class"] != "gated" for attrs, _ in parsed.rows[1:])

    # The "only gated runs" filter, carried by the link, leaves exactly the gated run shown.
    filtered = subprocess.run(
        [*flags, "--dump-dom", page.as_uri() + "#gated=1"],
        capture_output=True, text=True, timeout=180, check=True,
    ).stdout  # fmt: skip
    only = _RunsTable()
    only.feed(filtered)
    assert "only-gated" in only.table_attrs["class"].split()
    assert only.table_attrs["data-visible"] == "1" and len(only.rows) == 4

    shot = tmp_path / "leaderboard.png"
    subprocess.run(
        [*flags, f"--screenshot={shot}", "--window-size=1280,900", url],
        capture_output=True, timeout=180, check=True,
    )  # fmt: skip
    assert shot.stat().st_size > 10_000
