"""What the golden tests pin, computed one way for the regeneration script and the test.

Each case runs the real ``benchguard`` CLI in-process on a file under tests/ and keeps
what other tools and scripts read: ``scan --json`` output, the ``scan -o`` summary,
what ``score`` writes (results.json text, rows.json, manifest.json), a results file
read and written back, and the shape of a ``benchguard run`` directory. Only values
that differ from run to run (the clock, a run directory's name, durations) are
replaced by a placeholder, so everything else must stay byte for byte.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from benchguard.cli import app
from benchguard.harness.integrity import INVENTORY_ROOTS_ENV
from benchguard.results.io import dumps, read_results

REPO = Path(__file__).resolve().parents[2]
GOLDEN = Path(__file__).resolve().parent / "expected"
# Records written by older versions (and by today's writer), made once from a real run.
OLD_INPUTS = Path(__file__).resolve().parent / "inputs"
ENV = {"COLUMNS": "400", "NO_COLOR": "1", INVENTORY_ROOTS_ENV: ""}
_SKIP = {"README.md", "sarif-schema-2.1.0.json"}


def inputs() -> list[str]:
    """Every fixture and results file under tests/ the CLI reads, relative to the repo."""
    found: list[Path] = []
    for folder in ("tests/importers/fixtures", "tests/results/tool_logs"):
        for path in sorted((REPO / folder).rglob("*")):
            if (
                path.is_file()
                and path.name not in _SKIP
                and path.suffix != ".py"
                and "inspect_eval" not in path.parts
            ):
                found.append(path)
    # The split Inspect log is one input: the folder.
    found.append(REPO / "tests/importers/fixtures/inspect_eval")
    found.extend(sorted(OLD_INPUTS.glob("*.json")))
    return sorted(str(p.relative_to(REPO)) for p in found)


def results_inputs() -> list[str]:
    """The inputs that are results files (our own format, in either layout)."""
    return [p for p in inputs() if "results" in Path(p).name and p.endswith(".json")]


def slug(relative: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "_", relative.removeprefix("tests/"))


@contextmanager
def _in_repo() -> Iterator[None]:
    before = Path.cwd()
    os.chdir(REPO)
    try:
        yield
    finally:
        os.chdir(before)


def _invoke(*args: str) -> Any:
    with _in_repo():
        return CliRunner().invoke(app, list(args), env=ENV)


_CLOCK = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)?")


def _unclock(text: str) -> str:
    return _CLOCK.sub("<time>", text)


def scan_case(relative: str) -> dict[str, Any]:
    """``benchguard scan --json --all FILE``: its exit code and its JSON."""
    result = _invoke("scan", "--json", "--all", relative)
    return {"exit_code": result.exit_code, "stdout": json.loads(result.stdout)}


def scan_summary_case() -> dict[str, Any]:
    """``benchguard scan --all -o OUT`` over every input at once: the summary file."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "summary.json"
        result = _invoke("scan", "--all", "-o", str(out), *inputs())
        return {"exit_code": result.exit_code, "summary": json.loads(out.read_text("utf-8"))}


def score_case(relative: str) -> dict[str, Any]:
    """``benchguard score FILE -o DIR``: what it wrote (the clock replaced)."""
    with tempfile.TemporaryDirectory() as tmp:
        result = _invoke("score", relative, "-o", tmp)
        written: dict[str, Any] = {"exit_code": result.exit_code}
        for name in ("results.json", "rows.json", "manifest.json"):
            path = Path(tmp) / name
            if path.exists():
                written[name] = _unclock(path.read_text("utf-8")).splitlines()
        return written


def score_round_trip(relative: str) -> bool:
    """What ``score`` wrote, read and written again, is the same bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        _invoke("score", relative, "-o", tmp)
        path = Path(tmp) / "results.json"
        text = path.read_text("utf-8")
        return dumps(read_results(path).to_json()) == text


def rewrite_case(relative: str) -> list[str]:
    """A results file read and written back by the results codec."""
    return dumps(read_results(REPO / relative).to_json()).splitlines()


def _keys(value: Any) -> list[str]:
    return list(value) if isinstance(value, dict) else []


def run_shape_case() -> dict[str, Any]:
    """``benchguard run --quiet`` of the example tasks with the no-op agent, a leftover
    in the home: the last line printed, the run directory's layout and each file's keys."""
    with tempfile.TemporaryDirectory() as tmp:
        home, out = Path(tmp) / "home", Path(tmp) / "out"
        (home / "old-run").mkdir(parents=True)
        (home / "old-run" / "answers.txt").write_text("prior answer 42\n", "utf-8")
        result = _invoke(
            "run", "examples/tasks", "--agent", "examples/agents/noop.yaml",
            "--home", str(home), "--out", str(out), "--quiet",
        )  # fmt: skip
        last = result.stdout.strip().splitlines()[-1]
        run_dir = Path(last)
        layout = sorted(
            re.sub(r"sha256-[0-9a-f]{64}", "sha256-<digest>", str(p.relative_to(run_dir)))
            for p in run_dir.rglob("*")
        )
        results = json.loads((run_dir / "results.json").read_text("utf-8"))
        rows = json.loads((run_dir / "rows.json").read_text("utf-8"))
        manifest = json.loads((run_dir / "manifest.json").read_text("utf-8"))
        batch = json.loads((run_dir / "batch.json").read_text("utf-8"))
        journal = json.loads((run_dir / "runs" / "000000.json").read_text("utf-8"))
        ruleset = json.loads(next((run_dir / "rulesets").iterdir()).read_text("utf-8"))
        shape = {
            "exit_code": result.exit_code,
            "last_line_is_the_run_dir": run_dir.is_dir() and run_dir.parent == out,
            # The pid suffix varies in length: digits of any count read as one N run.
            "run_dir_name": re.sub(r"\d", "N", re.sub(r"_\d+$", "_<pid>", run_dir.name)),
            "layout": sorted(set(layout)),
            "results": _keys(results),
            "results.records[]": _keys(results["records"][0]),
            "results.records[].cheating_report": _keys(results["records"][0]["cheating_report"]),
            "results.dynamic_rulesets": _keys(results["dynamic_rulesets"]),
            "rows[]": _keys(rows[0]),
            "manifest": _keys(manifest),
            "batch": _keys(batch),
            "batch.runs[]": _keys(batch["runs"][0]) if batch.get("runs") else [],
            "runs/N.json": _keys(journal),
            "runs/N.json.record": _keys(journal.get("record")),
            "rulesets/N.json": type(ruleset).__name__,
            "rulesets/N.json[]": _keys(ruleset[0]) if isinstance(ruleset, list) and ruleset else [],
        }
        shutil.rmtree(tmp, ignore_errors=True)
        return shape


def all_cases() -> dict[str, Any]:
    """Every golden file's name and content."""
    cases: dict[str, Any] = {}
    for relative in inputs():
        cases[f"scan/{slug(relative)}.json"] = scan_case(relative)
        cases[f"score/{slug(relative)}.json"] = score_case(relative)
    for relative in results_inputs():
        cases[f"rewrite/{slug(relative)}.json"] = rewrite_case(relative)
    cases["scan_summary.json"] = scan_summary_case()
    cases["run_shape.json"] = run_shape_case()
    return cases


def golden_text(value: Any) -> str:
    return json.dumps(value, indent=1, ensure_ascii=False, sort_keys=False) + "\n"
