"""The input walk shared by ``scan`` and ``score``."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchguard.cli._inputs import InputFile, collect_inputs


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("{}", encoding="utf-8")
    return path


def _is_json(path: Path) -> bool:
    return path.suffix == ".json"


def test_walk_is_sorted_skips_hidden_and_unwanted_and_keeps_named_files(tmp_path: Path) -> None:
    """Guards against a walk whose order depends on the file system, that reads a hidden
    folder (.git, .trash) or a file the command did not ask for, or that drops a file
    named on the command line because of its name."""
    tree = tmp_path / "tree"
    for name in ("b/2.json", "a/1.json", "a/.cache/x.json", ".trash/y.json", "a/notes.txt"):
        _touch(tree / name)
    named = _touch(tmp_path / "named.txt")
    found = collect_inputs([named, tree], _is_json)
    assert found.files == [
        InputFile(named, named=True),
        InputFile(tree / "a" / "1.json", named=False),
        InputFile(tree / "b" / "2.json", named=False),
    ]
    assert found.empty_dirs == []


def test_a_file_reached_twice_is_kept_once_where_first_met(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards against scoring or scanning one file twice when it is named and also
    inside a walked directory, or named by two spellings of its path."""
    monkeypatch.chdir(tmp_path)
    inner = _touch(tmp_path / "run" / "r.json")
    found = collect_inputs([inner, Path("run"), Path("run/../run/r.json")], _is_json)
    assert found.files == [InputFile(inner, named=True)]


def test_missing_named_paths_pass_through_and_empty_dirs_are_reported(tmp_path: Path) -> None:
    """Guards against a missing named path vanishing silently (each command must report
    it) and a directory with nothing to read going unmentioned."""
    empty = tmp_path / "empty"
    _touch(empty / "notes.txt")
    missing = tmp_path / "nope.json"
    found = collect_inputs([missing, empty], _is_json)
    assert found.files == [InputFile(missing, named=True)]
    assert found.empty_dirs == [empty]


def test_nothing_under_the_excluded_output_directory_is_walked(tmp_path: Path) -> None:
    """Guards against a second run reading the outputs the first one wrote under -o."""
    _touch(tmp_path / "in" / "r.json")
    _touch(tmp_path / "in" / "out" / "r.json")
    found = collect_inputs([tmp_path / "in"], _is_json, exclude=tmp_path / "in" / "out")
    assert [item.path for item in found.files] == [tmp_path / "in" / "r.json"]
