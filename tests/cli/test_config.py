"""The configuration file: found from the working directory upward, flags over it,
``benchguard config`` naming each setting's source, bad files refused by name."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchguard.config import ALLOWED_KEYS, find_config
from benchguard.errors import ConfigError
from cli.helpers import exited, invoke, record


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project root with a run in it; the working directory is a subfolder."""
    monkeypatch.delenv("BENCHGUARD_CONFIG", raising=False)
    run = tmp_path / "proj" / "results" / "run_a"
    run.mkdir(parents=True)
    (run / "results.json").write_text(json.dumps([record("log-rotate", 1)]), encoding="utf-8")
    work = tmp_path / "proj" / "sub" / "deeper"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    return tmp_path / "proj"


def _results(project: Path) -> str:
    return str(project / "results" / "run_a" / "results.json")


def test_benchguard_toml_found_upward_and_flags_override(project: Path) -> None:
    (project / "benchguard.toml").write_text('format = "json"\nprofile = "swe-bench"\n')
    shown = invoke("config", "--json")
    exited(shown, 0)
    document = json.loads(shown.stdout)
    assert document["file"] == str(project / "benchguard.toml")
    assert document["settings"]["format"] == {
        "value": "json",
        "source": str(project / "benchguard.toml"),
    }
    assert document["settings"]["engine"] == {"value": "serial", "source": "default"}
    assert sorted(document["settings"]) == sorted(ALLOWED_KEYS)
    # The file's format applies; the swe-bench profile has no task-definition rule.
    from_file = invoke("scan", _results(project))
    exited(from_file, 0)
    assert json.loads(from_file.stdout)[0]["report"]["status"] == "clean"
    # Flags win over the file.
    flagged = invoke("scan", _results(project), "--profile", "benchguard", "--format", "table")
    exited(flagged, 1)
    assert "log-rotate#1" in flagged.stdout and not flagged.stdout.startswith("[")


def test_pyproject_table_and_relative_paths(project: Path) -> None:
    # A pyproject.toml without the table is passed over: the search goes on upward.
    (project / "sub" / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (project / "pyproject.toml").write_text(
        '[project]\nname = "p"\n\n[tool.benchguard]\ndismissals = "reviewed.yaml"\n'
    )
    (project / "reviewed.yaml").write_text(
        "- {task: log-rotate, iteration: 1, rule: task-definition/path, reviewer: alice,\n"
        "   reason: cited in the prompt, date: 2026-11-30}\n"
    )
    found = find_config()
    assert found is not None and found.table == "tool.benchguard"
    assert found.values["dismissals"] == project / "reviewed.yaml"
    exited(invoke("scan", _results(project)), 0)  # the reviewed finding stays dismissed
    table = invoke("config")
    exited(table, 0)
    assert f"{project / 'pyproject.toml'} [tool.benchguard]" in table.stdout


def test_unknown_key_is_refused_listing_allowed_keys(project: Path) -> None:
    (project / "benchguard.toml").write_text('profil = "swe-bench"\n')
    for args in (("config",), ("scan", _results(project))):
        result = invoke(*args)
        exited(result, 2)
        assert str(project / "benchguard.toml") in result.stderr
        assert "unknown key(s) 'profil'" in result.stderr
        assert "allowed keys: " + ", ".join(ALLOWED_KEYS) in result.stderr.replace("\n", "")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('workers = "two"\n', "workers = 'two' is not allowed; expected a whole number"),
        ('format = "xml"\n', "format = 'xml' is not allowed; expected one of: table, json"),
        ('inventory_roots = "/tmp"\n', "expected a list of directory paths"),
        ("format = [\n", "not valid TOML"),
    ],
)
def test_bad_values_name_file_key_value_and_what_is_allowed(
    project: Path, text: str, expected: str
) -> None:
    config = project / "benchguard.toml"
    config.write_text(text)
    with pytest.raises(ConfigError) as caught:
        find_config()
    assert str(config) in str(caught.value) and expected in str(caught.value)
    result = invoke("scan", _results(project))
    exited(result, 2)
    assert "Traceback" not in result.output


def test_env_names_a_file_or_turns_the_search_off(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "benchguard.toml").write_text('format = "json"\n')
    monkeypatch.setenv("BENCHGUARD_CONFIG", "")
    assert find_config() is None
    monkeypatch.setenv("BENCHGUARD_CONFIG", str(project / "missing.toml"))
    with pytest.raises(ConfigError, match=r"BENCHGUARD_CONFIG=.*missing\.toml: no such file"):
        find_config()


def test_inventory_roots_from_the_file_relative_to_it(project: Path) -> None:
    home = project / "home"
    home.mkdir()
    extra = project / "scratch"
    extra.mkdir()
    (extra / "prior-answers.md").write_text("the answer is 42\n")
    without = invoke("inventory", str(home), "--json")
    exited(without, 0)
    assert "prior-answers" not in without.stdout
    (project / "benchguard.toml").write_text('inventory_roots = ["scratch"]\n')
    with_roots = invoke("inventory", str(home), "--json")
    exited(with_roots, 0)
    assert "prior-answers" in with_roots.stdout
    (project / "benchguard.toml").write_text('inventory_roots = ["nope"]\n')
    missing = invoke("inventory", str(home))
    exited(missing, 2)
    assert str(project / "nope") in missing.stderr


def test_run_reads_profile_and_rules_from_the_file(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Bad profile or rules named in the file stop ``run`` before any agent starts,
    naming what the file said; a flag still wins over the file."""
    from cli.helpers import NOOP, TASKS

    monkeypatch.delenv("BENCHGUARD_CHEAT_RULES", raising=False)
    out = project / "results-run"
    args = ("run", str(TASKS), "--agent", NOOP, "--out", str(out), "--quiet")
    (project / "benchguard.toml").write_text('profile = "no-such-profile"\n')
    bad_profile = invoke(*args)
    exited(bad_profile, 2)
    assert "no-such-profile" in bad_profile.stderr
    (project / "benchguard.toml").write_text('rules = "extra.yaml"\n')
    (project / "extra.yaml").write_text("rules: [{id: x}]\n")
    bad_rules = invoke(*args)
    exited(bad_rules, 2)
    assert str(project / "extra.yaml") in bad_rules.stderr.replace("\n", "")
    assert not out.exists()  # nothing ran
    shown = json.loads(invoke("config", "--json").stdout)
    assert shown["settings"]["rules"]["value"] == str(project / "extra.yaml")
