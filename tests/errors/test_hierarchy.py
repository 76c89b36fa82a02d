"""Every error a command reports as bad input is one hierarchy: a ``BenchguardError``
with exit code 2, still the built-in type older callers catch."""

from __future__ import annotations

import pytest

from benchguard.detection.rules import RulesetError
from benchguard.engines.dask_engine import EngineUnavailableError
from benchguard.errors import (
    EXIT_BAD_INPUT,
    BenchguardError,
    ConfigError,
    EngineError,
    exit_code_for,
)
from benchguard.harness.agents.config import AgentConfigError
from benchguard.harness.audit import AuditUnavailable
from benchguard.harness.identity import IdentityError
from benchguard.harness.integrity import IntegrityConfigError
from benchguard.harness.journal import JournalError
from benchguard.harness.preflight import PreflightError
from benchguard.harness.sandbox import SandboxSelfCheckFailed, SandboxUnavailable
from benchguard.harness.tasks import TaskDirError
from benchguard.harness.workspace import WorkspaceError
from benchguard.importers.eval_zip import EvalArchiveError
from benchguard.importers.registry import UnknownFormatError
from benchguard.importers.transcript import UnreadableLogError
from benchguard.results.dismissals import DismissalFileError
from benchguard.results.io import ResultsFileError
from benchguard.yamlfile import YamlFileError

LAYER_ERRORS: list[tuple[type[BaseException], type[BaseException]]] = [
    (RulesetError, ValueError),
    (ResultsFileError, ValueError),
    (DismissalFileError, ValueError),
    (UnreadableLogError, ValueError),
    (UnknownFormatError, ValueError),
    (EvalArchiveError, ValueError),
    (YamlFileError, ValueError),
    (AgentConfigError, ValueError),
    (TaskDirError, ValueError),
    (IdentityError, ValueError),
    (PreflightError, ValueError),
    (IntegrityConfigError, ValueError),
    (EngineUnavailableError, RuntimeError),
    (SandboxUnavailable, RuntimeError),
    (AuditUnavailable, RuntimeError),
    (SandboxSelfCheckFailed, RuntimeError),
    (WorkspaceError, Exception),
    (JournalError, Exception),
]


@pytest.mark.parametrize(("error", "builtin"), LAYER_ERRORS)
def test_layer_errors_are_bad_input_in_one_hierarchy(
    error: type[BaseException], builtin: type[BaseException]
) -> None:
    assert issubclass(error, BenchguardError) and issubclass(error, builtin)
    assert error.exit_code == EXIT_BAD_INPUT  # type: ignore[attr-defined]


def test_kinds_of_config_and_engine_errors() -> None:
    assert issubclass(IntegrityConfigError, ConfigError)
    assert issubclass(EngineUnavailableError, EngineError)


def test_results_file_error_keeps_its_reason_and_path(tmp_path: object) -> None:
    error = ResultsFileError("r.json", "the 'records' field is missing")
    assert str(error) == "r.json: the 'records' field is missing"
    assert error.reason == "the 'records' field is missing"
    assert exit_code_for(error) == EXIT_BAD_INPUT


def test_yaml_error_reason_without_the_file_name(tmp_path: object) -> None:
    from pathlib import Path

    from benchguard.yamlfile import load_yaml_file

    bad = Path(str(tmp_path)) / "bad.yaml"
    bad.write_text("a: [1,\n")
    with pytest.raises(YamlFileError) as caught:
        load_yaml_file(bad)
    assert caught.value.reason.startswith("is not valid YAML (")
    assert str(caught.value) == f"{bad}: {caught.value.reason}"
