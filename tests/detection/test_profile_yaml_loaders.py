"""Built-in profiles are parsed with libyaml's safe loader for start-up speed; the data
must be exactly what the pure-Python safe loader reads from the same files."""

from __future__ import annotations

import pytest
import yaml

from benchguard.detection import rules


@pytest.mark.parametrize("name", rules.profile_names())
def test_libyaml_reads_each_builtin_profile_as_pure_python_does(name: str) -> None:
    text = rules._builtin_dir().joinpath(f"{name}.yaml").read_text(encoding="utf-8")
    assert rules._SAFE_LOADER.__name__ == "CSafeLoader"  # the fast path is the one tested
    assert rules._parsed_yaml(text) == yaml.safe_load(text)
