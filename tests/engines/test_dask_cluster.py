"""Scan and score on a real dask ``LocalCluster``: two worker processes, separate from
this one, reached over TCP on 127.0.0.1. Reports must be identical to the serial
engine's, in input order, and a bad or unreachable address a clear error."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from distributed import Client, LocalCluster
from typer.testing import CliRunner, Result

from benchguard.cli import app
from benchguard.detection.models import Rule
from benchguard.detection.rules import load_ruleset
from benchguard.engines import EngineUnavailableError, dask_engine, scan_files, scan_records

from .conftest import make_record

pytestmark = pytest.mark.slow


def invoke(*args: str) -> Result:
    return CliRunner().invoke(app, list(args), env={"COLUMNS": "400", "NO_COLOR": "1"})


def exited(result: Result, code: int) -> None:
    assert result.exit_code == code, result.output


@pytest.fixture(scope="module")
def cluster() -> Iterator[str]:
    """The address of a two-process cluster, closed when the module's tests are done."""
    with LocalCluster(  # type: ignore[no-untyped-call, unused-ignore]
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        protocol="tcp",
        dashboard_address=None,
    ) as local:
        yield str(local.scheduler_address)


@pytest.fixture(scope="module")
def rules() -> tuple[Rule, ...]:
    return load_ruleset()


def test_workers_are_separate_processes_over_tcp(cluster: str) -> None:
    assert cluster.startswith("tcp://127.0.0.1:")
    with Client(cluster) as client:  # type: ignore[no-untyped-call, unused-ignore]
        pids = client.run(os.getpid)
    assert len(pids) == 2 and os.getpid() not in pids.values()


def test_file_reports_identical_to_serial(
    cluster: str, mixed_tree: Path, rules: tuple[Rule, ...]
) -> None:
    paths = sorted(str(p) for p in mixed_tree.rglob("*") if p.is_file())
    serial = scan_files(paths, rules, engine="serial")
    clustered = scan_files(paths, rules, engine="dask", scheduler=cluster)
    assert clustered == serial
    assert any(r.report.status == "flagged" for f in serial for r in f.records)


def test_record_reports_identical_to_serial_with_dynamic_rules(
    cluster: str, rules: tuple[Rule, ...]
) -> None:
    leftover = Rule(
        id="inventory/answers.md",
        category="prior-run-leftover",
        material="a previous run's file",
        patterns=(r"answers\.md",),
        source="answers.md",
    )
    records = [make_record(i, "cat ~/answers.md" if i % 3 else "make test") for i in range(30)]
    dynamic = [[leftover] if i % 2 else [] for i in range(30)]
    serial = scan_records(records, rules, dynamic_rules=dynamic)
    clustered = scan_records(
        records, rules, dynamic_rules=dynamic, engine="dask", scheduler=cluster
    )
    assert clustered == serial
    assert {r.status for r in serial} == {"flagged", "clean"}


def test_cli_scan_and_score_on_the_cluster_match_serial(
    cluster: str, mixed_tree: Path, tmp_path: Path
) -> None:
    serial = invoke("scan", str(mixed_tree), "--format", "json")
    clustered = invoke("scan", str(mixed_tree), "--format", "json", "--engine", "dask",
                       "--scheduler", cluster)  # fmt: skip
    assert clustered.exit_code == serial.exit_code == 1
    assert json.loads(clustered.stdout) == json.loads(serial.stdout)

    runs = tmp_path / "to-score"
    for batch in ("run_0", "run_1", "run_2"):
        shutil.copytree(mixed_tree / batch, runs / batch)
    # The tree holds flagged records: score exits 1, as scan does.
    exited(invoke("score", str(runs), "-o", str(tmp_path / "serial")), 1)
    exited(
        invoke(
            "score",
            str(runs),
            "-o",
            str(tmp_path / "cluster"),
            "--engine",
            "dask",
            "--scheduler",
            cluster,
        ),
        1,
    )
    for written in sorted((tmp_path / "serial").rglob("*.json")):
        twin = tmp_path / "cluster" / written.relative_to(tmp_path / "serial")
        assert twin.read_bytes() == written.read_bytes(), written


def test_scheduler_from_the_config_file(
    cluster: str, mixed_tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "benchguard.toml"
    config.write_text(f'engine = "dask"\nscheduler = "{cluster}"\nformat = "json"\n')
    monkeypatch.setenv("BENCHGUARD_CONFIG", str(config))
    shown = json.loads(invoke("config", "--json").stdout)
    assert shown["settings"]["scheduler"] == {"value": cluster, "source": str(config)}
    result = invoke("scan", str(mixed_tree / "run_0"))
    exited(result, 1)
    assert len(json.loads(result.stdout)) == 5


def test_unreachable_and_malformed_addresses_are_clear_errors(
    rules: tuple[Rule, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(dask_engine, "CONNECT_TIMEOUT_S", 1.0)
    with pytest.raises(EngineUnavailableError, match=r"tcp://127\.0\.0\.1:9: cannot reach"):
        scan_records([make_record(0, "ls")], rules, engine="dask", scheduler="tcp://127.0.0.1:9")
    result = invoke("scan", ".", "--engine", "dask", "--scheduler", "proceses")
    exited(result, 2)
    assert "did you mean 'processes'?" in result.stderr
