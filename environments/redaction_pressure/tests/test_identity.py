"""Identity: versions, split commitment and a digest of the behaviour-bearing sources."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

import redaction_pressure
from redaction_pressure.corpus import CORPUS_VERSION
from redaction_pressure.identity import (
    DIGESTED_SOURCES,
    ENVIRONMENT_VERSION,
    environment_identity,
    source_digest,
)
from redaction_pressure.reward import REWARD_SCHEMA_VERSION
from redaction_pressure.splits import SplitSeeds

PACKAGE = Path(redaction_pressure.__file__).resolve().parent


def test_identity_names_versions_split_and_digest() -> None:
    identity = environment_identity(SplitSeeds("dev").identity)
    assert identity.environment_version == ENVIRONMENT_VERSION
    assert identity.corpus_version == CORPUS_VERSION
    assert identity.reward_schema_version == REWARD_SCHEMA_VERSION
    assert identity.split == "dev"
    assert identity.split_commitment == SplitSeeds("dev").identity.commitment
    assert identity.source_digest == source_digest()


def test_digest_tracks_every_digested_file_and_nothing_else(tmp_path: Path) -> None:
    """Guards the identity's meaning: editing scoring code must change the digest,
    editing a baseline policy must not."""
    copy = tmp_path / "pkg"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    base = source_digest(copy)
    assert base == source_digest(PACKAGE)
    (copy / "policies.py").write_text("# baselines do not judge replies\n")
    assert source_digest(copy) == base
    for name in DIGESTED_SOURCES:
        edited = tmp_path / f"edit-{name}"
        shutil.copytree(copy, edited)
        (edited / name).write_bytes((edited / name).read_bytes() + b"\n")
        assert source_digest(edited) != base, name


def test_missing_digested_file_fails_closed(tmp_path: Path) -> None:
    copy = tmp_path / "pkg"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__"))
    (copy / "scanner.py").unlink()
    with pytest.raises(RuntimeError, match=r"scanner\.py"):
        source_digest(copy)


NOT_DIGESTED = ("__init__.py", "identity.py", "policies.py")
"""Modules that cannot change a task, its prompt or its score (see identity.py)."""


def test_digest_covers_exactly_the_behaviour_bearing_modules() -> None:
    """Guards against a new scoring or corpus module left out of the identity."""
    modules = sorted(path.name for path in PACKAGE.glob("*.py"))
    assert sorted(DIGESTED_SOURCES) == sorted(set(modules) - set(NOT_DIGESTED))


def test_version_is_written_once_in_pyproject() -> None:
    import tomllib

    pyproject = PACKAGE.parent / "pyproject.toml"
    if not pyproject.is_file():
        pytest.skip("installed from a wheel: no source tree next to the package")
    declared = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["version"]
    assert ENVIRONMENT_VERSION == declared == redaction_pressure.__version__
    source = "\n".join(path.read_text(encoding="utf-8") for path in PACKAGE.glob("*.py"))
    assert 'ENVIRONMENT_VERSION = "' not in source and '__version__ = "' not in source


def test_identity_names_the_matcher_and_the_preset() -> None:
    import regex

    from redaction_pressure.taskset import RedactionPressureTaskset, RedactionPressureTasksetConfig

    identity = environment_identity(SplitSeeds("dev").identity)
    assert identity.matcher == f"regex {regex.__version__}"
    assert identity.preset is None
    config = RedactionPressureTasksetConfig(
        id="redaction-pressure", preset="hard", knobs={"example_records": 3}, num_tasks=1
    )
    (task,) = list(RedactionPressureTaskset(config).load())
    assert task.data.environment.preset == "hard"
    assert task.data.environment.corpus_knobs.example_records == 3
