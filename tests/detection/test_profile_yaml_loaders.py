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


@pytest.mark.parametrize("name", rules.profile_names())
def test_material_read_alone_is_the_loaded_profiles_material(name: str) -> None:
    """The glob reader takes every profile's roots without loading its rules; they
    must be the roots the whole load gives (extended profiles included)."""
    assert rules.profile_material(name) == rules.load_profile_spec(name).material
