"""The pinned agent CLIs, the shipped agent YAMLs made runnable here, an operator's
tree and ``benchguard run`` in-process.

The CLIs come from ``make agent-clis`` (``.agent-clis/``, pinned in the Makefile;
``make test`` installs them first). Missing CLIs fail these tests rather than skip
them: a skipped end-to-end test would let a broken agent config land green.
"""

from __future__ import annotations

import atexit
import functools
import json
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from typer.testing import CliRunner

from benchguard.cli import app

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
CLI_BIN = REPO / ".agent-clis" / "node_modules" / ".bin"


def cli_path(name: str) -> Path:
    path = CLI_BIN / name
    if not path.exists():
        pytest.fail(f"{path} is missing: run `make agent-clis` (make test does it first)")
    return path


@functools.cache
def installed_outside() -> Path:
    """The pinned CLIs as an operator installs them, outside the harness checkout (a
    copy of ``.agent-clis``), once per test process: ``<bin>`` of it. Inside the
    checkout, Codex's launcher looks up ``<checkout>/node_modules/.modules.yaml``, which
    the audit rightly reads as the agent looking into the harness's checkout. A copy,
    not hard links: the audit matches files by (device, inode), so a hard link of a
    file inside the checkout is the checkout's file wherever it is linked."""
    root = Path(tempfile.mkdtemp(prefix="agent-clis-"))
    atexit.register(shutil.rmtree, root, ignore_errors=True)
    os.chmod(root, 0o755)
    clis = root / "node_modules"
    shutil.copytree(CLI_BIN.parent, clis, symlinks=True)
    return clis / ".bin"


def runnable_agent(name: str, target: Path, *, cli_bin: Path | None = None) -> Path:
    """The shipped ``examples/agents/<name>.yaml``, unchanged but for ``PATH``, which
    gains the pinned install (the shipped file expects the CLI in /usr/local/bin),
    by default as installed outside the checkout (:func:`installed_outside`)."""
    cli_path("claude" if name == "claude-code" else "codex")
    cli_bin = installed_outside() if cli_bin is None else cli_bin
    config = yaml.safe_load((EXAMPLES / "agents" / f"{name}.yaml").read_text("utf-8"))
    config["set_env"]["PATH"] = f"{cli_bin}:{config['set_env']['PATH']}"
    target.mkdir(parents=True, exist_ok=True)
    path = target / f"{name}.yaml"
    path.write_text(yaml.safe_dump(config), "utf-8")
    return path


@dataclass
class Operator:
    """The tasks, a harness checkout, results and the persistent agent home."""

    root: Path
    tasks: Path
    checkout: Path
    results: Path
    agent_home: Path

    def run(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, Path | None]:
        """``benchguard run`` in-process; exit code, output, and the run dir on success."""
        result = CliRunner().invoke(
            app,
            ["run", *args, "--out", str(self.results), "--home", str(self.agent_home), "--quiet"],
            env=env,
            catch_exceptions=False,
        )
        lines = result.stdout.strip().splitlines()
        # A batch that ran prints its run directory last, whatever its exit code.
        run_dir = Path(lines[-1]) if lines and Path(lines[-1]).is_dir() else None
        return result.exit_code, result.output, run_dir

    def run_ok(self, *args: str, env: dict[str, str] | None = None, code: int = 0) -> Path:
        """``run`` that must publish with exit ``code`` (0: nothing flagged; 1: flagged)."""
        exit_code, output, run_dir = self.run(*args, env=env)
        assert exit_code == code, output
        assert run_dir is not None
        return run_dir


def load_run(run_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    records = json.loads((run_dir / "results.json").read_text("utf-8"))["records"]
    rows = json.loads((run_dir / "rows.json").read_text("utf-8"))
    return records, rows
