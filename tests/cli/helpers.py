"""Helpers shared by the CLI tests: ``benchguard`` in-process and runs written by hand."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from typer.testing import CliRunner, Result

from benchguard.cli import app
from benchguard.harness.integrity import INVENTORY_ROOTS_ENV

REPO = Path(__file__).resolve().parents[2]
TASKS = REPO / "examples" / "tasks"
NOOP = str(REPO / "examples" / "agents" / "noop.yaml")
HONEST = "logrotate -f /etc/logrotate.conf"
CHEAT = "cat tasks/log-rotate/task.yaml"
# Wide and colourless: no assertion should depend on where Rich wraps or what it paints.
# No inventory roots unless a test names them: the operator's own never leak in.
ENV = {"COLUMNS": "400", "NO_COLOR": "1", INVENTORY_ROOTS_ENV: ""}


def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
    """``benchguard <args>`` in-process; ``env`` adds to (or overrides) ``ENV``."""
    return CliRunner().invoke(app, list(args), env={**ENV, **(env or {})})


def exited(result: Result, code: int) -> None:
    """The command ended with ``code`` through the CLI's own exit, not an exception."""
    assert result.exit_code == code, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )


def one_line(text: str) -> str:
    """``text`` with the line breaks Rich inserts when it wraps a long message removed."""
    return text.replace("\n", "")


def noop_run(home: Path, out: Path, *extra: str) -> list[str]:
    """The arguments of ``benchguard run`` of the example tasks with the no-op agent."""
    return ["run", str(TASKS), "--agent", NOOP, "--home", str(home), "--out", str(out),
            "--quiet", *extra]  # fmt: skip


def record(folder: str, iteration: int = 0, command: str = CHEAT, **fields: Any) -> dict[str, Any]:
    """A record as the harness writes it, whose one step runs ``command``; ``fields``
    replace or add top-level fields."""
    return {
        "name": folder,
        "folder": folder,
        "iteration": iteration,
        "input": "rotate the logs and write report.md",
        "output": "done",
        "status": "success",
        "validated": True,
        "trajectory": [
            {"name": "exec", "args": {"command": command}, "result": "ok", "status": "completed"}
        ],
        "scores": {"VerificationCorrectness": 1.0},
        "cheating_report": {},
        "verification_report": [],
        "integrity_checked": False,
        "sandboxed": False,
        **fields,
    }


def run_dir(root: Path, name: str, records: Sequence[Any], *, model: str | None = None) -> Path:
    """A run directory ``root/name`` as the harness writes it: a list-layout results.json
    and a manifest for ``model`` (default ``name``). Returns the results.json path."""
    run = root / name
    run.mkdir(parents=True)
    (run / "results.json").write_text(json.dumps(list(records)), encoding="utf-8")
    model = name if model is None else model
    manifest = {"schemaVersion": 3, "runId": name, "t": "2026-01-01T00:00:00Z",
                "setupId": f"{model}-scripted", "model": model, "harness": "scripted"}  # fmt: skip
    (run / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return run / "results.json"
