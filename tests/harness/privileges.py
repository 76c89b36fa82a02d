"""Running ``benchguard run`` as root (in-process) or as an unprivileged user (setpriv).

The unprivileged harness runs Debian's ``/usr/bin/python3`` (the test interpreter may
live under a directory only root can enter) with this checkout's packages on its path,
as uid 65534 with no capability, in an operator tree that uid owns.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from harness.helpers import EXAMPLES, REPO, Operator

UNPRIVILEGED = 65534
SYSTEM_PYTHON = Path("/usr/bin/python3")
Identity = str  # "root" or "user"
IDENTITIES: tuple[Identity, ...] = ("root", "user")


def _site_packages() -> Path:
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    return Path(sys.prefix) / "lib" / version / "site-packages"


def _others_can_enter(path: Path) -> bool:
    """Every directory from / down to ``path`` lets others in (a clone under a 0700
    directory cannot be run by another uid)."""
    return all(p.stat().st_mode & 0o001 for p in [*reversed(path.resolve().parents), path])


def can_run_as_user() -> bool:
    return (
        os.geteuid() == 0
        and shutil.which("setpriv") is not None
        and SYSTEM_PYTHON.exists()
        and sys.version_info[:2] == (3, 11)
        and _others_can_enter(REPO / "src")
        and _others_can_enter(_site_packages())
    )


def unprivileged_command(
    home: Path, program: Sequence[str], env: Mapping[str, str] | None = None
) -> tuple[list[str], dict[str, str]]:
    """The argv and environment running the system Python with ``program`` (its
    arguments) as the unprivileged harness user: no capabilities, ``HOME`` at ``home``,
    this checkout's code first on the path."""
    environment = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(home),
        "LC_ALL": "C.UTF-8",
        "PYTHONPATH": os.pathsep.join([str(_site_packages()), str(REPO / "src")]),
        **(env or {}),
    }
    argv = [
        "setpriv",
        f"--reuid={UNPRIVILEGED}",
        f"--regid={UNPRIVILEGED}",
        "--clear-groups",
        "--inh-caps=-all",
        "--bounding-set=-all",
        str(SYSTEM_PYTHON),
        *program,
    ]
    return argv, environment


@dataclass
class Harness:
    """One operator tree and a way to run the harness on it as ``identity``."""

    identity: Identity
    operator: Operator

    def run(self, *args: str, env: dict[str, str] | None = None) -> tuple[int, str, Path | None]:
        if self.identity == "root":
            return self.operator.run(*args, env=env)
        argv, environment = unprivileged_command(
            self.operator.root,
            [
                "-m",
                "benchguard",
                "run",
                *args,
                "--out",
                str(self.operator.results),
                "--home",
                str(self.operator.agent_home),
                "--quiet",
            ],
            env,
        )
        done = subprocess.run(
            argv, env=environment, capture_output=True, text=True, timeout=300, check=False
        )
        lines = done.stdout.strip().splitlines()
        run_dir = Path(lines[-1]) if lines and Path(lines[-1]).is_dir() else None
        return done.returncode, done.stdout + done.stderr, run_dir

    def run_ok(self, *args: str, env: dict[str, str] | None = None) -> Path:
        """A run that published (exit 0, or 1 for findings); its run directory."""
        code, output, run_dir = self.run(*args, env=env)
        assert code in (0, 1), output
        assert run_dir is not None
        return run_dir


def world_operator() -> Iterator[Operator]:
    """An operator tree under /tmp that uid 65534 owns (pytest's tmp is root-only)."""
    root = Path(tempfile.mkdtemp(prefix="bg-op-")).resolve()
    try:
        tasks = root / "tasks"
        shutil.copytree(EXAMPLES / "tasks", tasks)
        checkout = root / "benchguard"
        (checkout / "docs").mkdir(parents=True)
        (checkout / "docs" / "harness.md").write_text("# Harness\n", "utf-8")
        operator = Operator(root, tasks, checkout, root / "results", root / "agent-home")
        operator.agent_home.mkdir()
        os.chmod(root, 0o755)
        for path in [root, *root.rglob("*")]:
            os.chown(path, UNPRIVILEGED, UNPRIVILEGED, follow_symlinks=False)
        yield operator
    finally:
        shutil.rmtree(root, ignore_errors=True)


def harness_as(identity: Identity, operator: Operator) -> Iterator[Harness]:
    """The harness as root (in-process, on ``operator``) or as an unprivileged user (on
    its own operator tree)."""
    if identity == "root":
        yield Harness("root", operator)
        return
    if not can_run_as_user():
        pytest.skip(
            "needs root, setpriv, Debian's python3.11 and a checkout and venv other "
            "users can enter, to drop to a user"
        )
    yield from (Harness("user", tree) for tree in world_operator())


def write_agent(directory: Path, name: str, script: Path, *, env: tuple[str, ...] = ()) -> Path:
    """An agent YAML running ``script`` (copied beside it) with ``{python}``."""
    directory.mkdir(parents=True, exist_ok=True)
    shutil.copy(script, directory / script.name)
    config = {
        "name": name,
        "argv": ["{python}", "{agent_dir}/" + script.name, "{prompt}"],
        "env": list(env),
        "trajectory": "jsonl",
        "model": "adversary",
    }
    path = directory / f"{name}.yaml"
    path.write_text(json.dumps(config), "utf-8")
    for item in (directory, *directory.iterdir()):
        os.chmod(item, 0o755 if item.is_dir() else 0o644)
    return path


ADVERSARIES = Path(__file__).with_name("adversaries")


def run_adversary(
    harness: Harness, script: str, tasks: Path, *args: str, env: dict[str, str]
) -> Path:
    """Run the standard-library adversary ``script`` (tests/harness/adversaries/) as the
    agent on ``tasks`` with ``benchguard run ... *args``; ``env`` is handed through to it
    (``ATTACK`` names the attack and the agent)."""
    stem = Path(script).stem.replace("_", "-")
    config = write_agent(
        harness.operator.root / "agents",
        f"{stem}-{env['ATTACK']}" if "ATTACK" in env else stem,
        ADVERSARIES / script,
        env=tuple(sorted(env)),
    )
    return harness.run_ok(str(tasks), "--agent", str(config), *args, env=env)


def records(run_dir: Path) -> list[dict[str, Any]]:
    loaded: list[dict[str, Any]] = json.loads((run_dir / "results.json").read_text("utf-8"))[
        "records"
    ]
    return loaded


TOTAL_TASK = """\
name: Total into the workspace
prompt: >-
  {lead}Add up the integers in numbers.txt (one per line) and write the total, alone on
  one line, to total.txt.
timeout: 150
grading_files: [expected]
verification:
  - name: total-correct
    role: correctness
    file: total.txt
    matches: '^\\s*4711\\s*$'
"""


def total_tasks(
    harness: Harness, name: str, prompts: dict[str, str], *, network: bool = False
) -> Path:
    """A tasks folder ``name`` of one "total into the workspace" task per (folder, the
    prompt's lead), readable by the harness's identity: the sibling attacks' batches.
    ``network``: the tasks ask for the host network (``network: true``, run with
    ``--allow-host-network``), so concurrent runs share its abstract socket names (how
    some attacks' roles meet; a run without it has a network namespace of its own)."""
    tasks = harness.operator.root / name
    text = TOTAL_TASK + ("network: true\n" if network else "")
    for folder, lead in prompts.items():
        (tasks / folder / "workspace").mkdir(parents=True)
        (tasks / folder / "task.yaml").write_text(text.format(lead=lead), "utf-8")
        (tasks / folder / "workspace" / "numbers.txt").write_text("4000\n700\n11\n", "utf-8")
        (tasks / folder / "expected").mkdir()
        (tasks / folder / "expected" / "total.txt").write_text("4711\n", "utf-8")
    for path in [tasks, *tasks.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
        if harness.identity == "user":
            os.chown(path, UNPRIVILEGED, UNPRIVILEGED, follow_symlinks=False)
    return tasks


def readable_by_harness(harness: Harness, root: Path) -> Path:
    """Make the tree at ``root`` readable (and, for an unprivileged harness, owned) by
    the harness's identity; ``root``."""
    for path in [root, *root.rglob("*")]:
        os.chmod(path, 0o755 if path.is_dir() else 0o644)
        if harness.identity == "user":
            os.chown(path, UNPRIVILEGED, UNPRIVILEGED, follow_symlinks=False)
    return root


def adversary_outcomes(record: dict[str, Any]) -> dict[str, str]:
    """What an adversary printed as its last line: a JSON object of attempt -> result."""
    loaded: dict[str, str] = json.loads(record["output"].strip().splitlines()[-1])
    return loaded
