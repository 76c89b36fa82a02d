"""Reading one YAML file an author wrote (a task, an agent, a rules profile) into data.

Every such file fails in the same few ways: missing, unreadable, not YAML, or nested
deeper than the parser's stack. Each loader words those failures for its own users, so
this module names the way it failed (``YamlFileError.kind``) and leaves the wording to
the caller; ``str()`` of the error is the wording most loaders use.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

import yaml

from benchguard.errors import BadInputError

YamlFailure = Literal["missing", "unreadable", "invalid", "too_deep"]


class YamlFileError(BadInputError, ValueError):
    """A YAML file gave no data: ``kind`` says why, ``cause`` is the underlying error."""

    def __init__(self, path: Path, kind: YamlFailure, cause: BaseException) -> None:
        self.path = path
        self.kind: YamlFailure = kind
        self.cause = cause
        reason = self._describe()
        super().__init__(f"{path}: {reason}", reason=reason)

    @property
    def problem(self) -> str:
        """The cause in one line: a YAML error's problem with its line and column."""
        if isinstance(self.cause, yaml.YAMLError):
            return yaml_problem(self.cause)
        return str(self.cause)

    def _describe(self) -> str:
        """What went wrong, without the file name (the error's ``reason``)."""
        if self.kind == "invalid":
            return f"is not valid YAML ({self.problem})"
        if self.kind == "too_deep":
            return "YAML nested too deeply to read"
        return f"cannot be read ({self.problem})"


def load_yaml_file(path: Path) -> Any:
    """The file's YAML as plain data; ``YamlFileError`` when there is none to be had."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise YamlFileError(path, "missing", exc) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise YamlFileError(path, "unreadable", exc) from None
    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise YamlFileError(path, "invalid", exc) from None
    except RecursionError as exc:
        raise YamlFileError(path, "too_deep", exc) from None


def yaml_problem(exc: yaml.YAMLError) -> str:
    """A YAML error in one line: the problem, and where it is when the parser knows."""
    mark = getattr(exc, "problem_mark", None)
    problem = getattr(exc, "problem", None) or str(exc)
    if mark is not None:
        return f"{problem} at line {mark.line + 1}, column {mark.column + 1}"
    return str(problem)
