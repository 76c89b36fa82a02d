"""``benchguard redaction``: eval, score and show, and clear exits for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchguard.cli import app
from redaction_pressure.corpus import generate_task
from redaction_pressure.policies import oracle
from redaction_pressure.prompt import SYSTEM_PROMPT, render_prompt
from redaction_pressure.splits import PRIVATE_SEED_ENV, PUBLIC_COMMITMENTS, public_task_seed

runner = CliRunner()


def test_eval_json_reports_split_and_policies() -> None:
    result = runner.invoke(
        app,
        [
            "redaction",
            "eval",
            "--split",
            "dev",
            "--limit",
            "3",
            "--policy",
            "oracle",
            "--policy",
            "first_character",
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["split"] == "dev"
    assert report["split_commitment"] == PUBLIC_COMMITMENTS["dev"]
    rows = {row["policy"]: row for row in report["policies"]}
    assert rows["oracle"]["mean_reward"] == 1.0
    assert rows["oracle"]["clean_rate"] == 1.0
    assert rows["first_character"]["mean_reward"] == 0.0


def test_eval_table_names_the_split() -> None:
    result = runner.invoke(
        app, ["redaction", "eval", "--split", "train", "--limit", "1", "--policy", "inaction"]
    )
    assert result.exit_code == 0, result.output
    assert "split train" in result.stdout
    assert "inaction" in result.stdout


def test_score_reply_file_and_policy(tmp_path: Path) -> None:
    task = generate_task(public_task_seed("dev", 4))
    reply = tmp_path / "reply.json"
    reply.write_text(oracle(task))
    result = runner.invoke(
        app,
        [
            "redaction",
            "score",
            "--split",
            "dev",
            "--index",
            "4",
            "--reply-file",
            str(reply),
            "--json",
        ],
    )
    assert result.exit_code == 0, result.output
    payload = json.loads(result.stdout)
    assert payload["split"] == "dev" and payload["index"] == 4
    assert payload["reward"] == 1.0 and payload["valid"] is True and payload["errors"] == []
    assert {"recall", "precision", "clean", "elapsed_ms"} <= payload.keys()
    bad = tmp_path / "bad.json"
    bad.write_text('{"rules": [{"pattern": "(", "replacement": "[REDACTED]"}]}')
    result = runner.invoke(
        app, ["redaction", "score", "--index", "0", "--reply-file", str(bad), "--json"]
    )
    payload = json.loads(result.stdout)
    assert payload["valid"] is False and payload["reward"] == 0.0
    assert payload["errors"][0].startswith("rules[0]")


def test_show_prints_the_prompt_exactly() -> None:
    result = runner.invoke(app, ["redaction", "show", "--split", "dev", "--index", "9"])
    assert result.exit_code == 0
    task = generate_task(public_task_seed("dev", 9))
    assert result.stdout == f"=== system ===\n{SYSTEM_PROMPT}\n=== user ===\n{render_prompt(task)}"


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["eval", "--split", "test"], "unknown split 'test'"),
        (["eval", "--split", "private_eval"], PRIVATE_SEED_ENV),
        (["eval", "--policy", "cheat"], "unknown policy 'cheat'"),
        (["score", "--split", "dev", "--index", "64", "--policy", "oracle"], "index 64 is outside"),
        (
            ["score", "--split", "private_eval", "--index", "0", "--policy", "oracle"],
            "allowed: train, dev",
        ),
        (
            ["score", "--index", "0", "--reply-file", "/no/such/reply.json"],
            "cannot read reply file",
        ),
        (["score", "--index", "0"], "exactly one of --reply-file or --policy"),
        (["show", "--split", "dev", "--index", "-1"], "index -1 is outside"),
    ],
)
def test_bad_input_exits_2_without_traceback(
    args: list[str], message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PRIVATE_SEED_ENV, raising=False)
    result = runner.invoke(app, ["redaction", *args])
    assert result.exit_code == 2, result.output
    assert message in result.output
    # CliRunner catches exceptions into result.exception rather than printing a traceback,
    # so the output alone cannot show one: only a clean exit counts.
    assert result.exception is None or isinstance(result.exception, SystemExit)


def test_redaction_commands_do_not_import_verifiers() -> None:
    """Guards CLI start-up: eval/score/show must stay usable without the RL stack."""
    code = (
        "import sys, typer\n"
        "from typer.testing import CliRunner\n"
        "from benchguard.cli import redaction_cmds\n"
        "app = typer.Typer()\n"
        "redaction_cmds.register(app)\n"
        "r = CliRunner().invoke(app, ['redaction', 'score', '--index', '0', '--policy', 'oracle', '--json'])\n"
        "assert r.exit_code == 0, r.output\n"
        "print('verifiers' in sys.modules)\n"
    )
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


@pytest.mark.parametrize("command", [["eval"], ["show", "--index", "0"], ["score", "--index", "0"]])
def test_missing_environment_says_how_to_install_it(
    command: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """benchguard does not depend on the environment: without it, a clear exit 2, no traceback."""
    import sys

    for name in list(sys.modules):
        if name == "redaction_pressure" or name.startswith("redaction_pressure."):
            monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "redaction_pressure", None)  # import raises ImportError
    result = runner.invoke(app, ["redaction", *command])
    assert result.exit_code == 2, result.output
    assert "pip install -e environments/redaction_pressure" in result.output
    assert "Traceback" not in result.output


def test_benchguard_itself_does_not_depend_on_verifiers() -> None:
    import importlib.metadata

    requires = importlib.metadata.requires("benchguard") or []
    names = {
        r.split(";")[0].split("[")[0].split("<")[0].split(">")[0].split("=")[0].strip()
        for r in requires
        if "extra ==" not in r
    }
    assert "verifiers" not in names and "redaction-pressure" not in names


def test_preset_changes_the_tasks_and_is_reported() -> None:
    result = runner.invoke(
        app,
        ["redaction", "eval", "--limit", "2", "--policy", "oracle", "--preset", "hard", "--json"],
    )
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["preset"] == "hard"
    assert report["policies"][0]["mean_reward"] == 1.0
    shown = runner.invoke(app, ["redaction", "show", "--index", "0", "--preset", "intro"])
    assert shown.exit_code == 0
    assert "Labelled examples (8 records" in shown.stdout


def test_unknown_preset_exits_2_with_the_choices() -> None:
    result = runner.invoke(app, ["redaction", "eval", "--preset", "nightmare"])
    assert result.exit_code == 2
    assert "allowed: intro, easy, standard, hard, expert" in result.output
