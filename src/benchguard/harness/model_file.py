"""One author-written YAML file read into one frozen model (a task, an agent).

Both loaders fail the same ways and word them the same way: the file's own problem
(missing, not YAML...), a top level that is not a mapping, a field the loader sets
written by hand, and pydantic's errors as ``field a.b: problem`` with the allowed
fields named for an unknown one. What differs (the error class, the fields the
loader fills, how a location reads) is passed in.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel, ValidationError

from benchguard.suggest import did_you_mean
from benchguard.yamlfile import YamlFileError, load_yaml_file

ModelT = TypeVar("ModelT", bound=BaseModel)
Location = tuple[int | str, ...]


def load_model_file(
    path: Path,
    model: type[ModelT],
    *,
    error: Callable[[str], Exception],
    top_level: str,
    loader_fields: Mapping[str, Any],
    allowed_fields: Callable[[Location], str],
    shown_location: Callable[[Location], Location] = lambda loc: loc,
    yaml_message: Callable[[YamlFileError], str] = str,
    context: Mapping[str, Any] | None = None,
) -> ModelT:
    """``model`` validated from ``path`` plus ``loader_fields``; ``error(message)`` else.

    ``top_level`` lists the fields the mapping starts with (for the not-a-mapping
    message); ``allowed_fields(loc)`` names the fields allowed where an unknown one was
    written; ``shown_location`` rewrites pydantic's location into the path the author
    wrote; ``yaml_message`` words a file that gave no YAML; ``context`` is pydantic's
    validation context (a loader's mode, read by the model's validators).
    """
    try:
        data = load_yaml_file(path)
    except YamlFileError as exc:
        raise error(yaml_message(exc)) from None
    if not isinstance(data, dict):
        raise error(f"{path}: the top level must be a mapping with {top_level}, ...")
    for key in loader_fields:
        if key in data:
            raise error(f"{path}: field {key!r} is set by the loader and must not be written")
    try:
        return model.model_validate({**data, **loader_fields}, context=context)
    except ValidationError as exc:
        problems = _describe(exc, allowed_fields, shown_location)
        raise error(f"{path}: {problems}") from None


def _describe(
    exc: ValidationError,
    allowed_fields: Callable[[Location], str],
    shown_location: Callable[[Location], Location] = lambda loc: loc,
) -> str:
    """Every validation error as ``field a.b: problem``, joined by ``; ``."""
    parts: list[str] = []
    for problem in exc.errors(include_url=False):
        where = ".".join(str(p) for p in shown_location(problem["loc"])) or "(top level)"
        message = problem["msg"].removeprefix("Value error, ")
        if problem["type"] == "extra_forbidden":
            allowed = allowed_fields(problem["loc"])
            # A near miss (timout, verfication) names the field it probably meant.
            hint = did_you_mean(str(problem["loc"][-1]), allowed.split(", "))
            message = f"unknown field{hint}; allowed: {allowed}"
        elif problem["type"] == "literal_error":
            message = f"{message} (got {problem['input']!r})"
        parts.append(f"field {where}: {message}")
    return "; ".join(parts)
