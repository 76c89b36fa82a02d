"""Rulesets: harness profiles (package data) and users' extra-rules files, both YAML.

A *profile* names one harness's own material (``profiles/<name>.yaml``)::

    name: my-harness
    description: one line for people
    extends: benchguard          # optional: that profile's rules come first
    baseline: [my-harness, my-harness.env]   # home entries the harness owns
    rules:
      - {id: ..., category: ..., material: ..., patterns: [...]}

An *extra-rules file* (``BENCHGUARD_CHEAT_RULES`` / ``--rules``) is ``rules:`` only.
Extra rules are appended to the profile's rules and never replace them. Every problem
fails at load time with one :class:`RulesetError` naming the file and the rule index.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping, Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, ValidationError

from benchguard.detection._patterns import PatternError, pattern_problem, trust_generated
from benchguard.detection.models import Rule
from benchguard.errors import BadInputError
from benchguard.record.rules import ruleset_digest as ruleset_digest  # compatibility re-export
from benchguard.yamlfile import YamlFailure, YamlFileError, load_yaml_file, yaml_problem

DEFAULT_PROFILE = "benchguard"
# ``auto`` (the default of scan and score) chooses profiles per log
# (``detection.profile_choice``); with no log to read (``benchguard run``, an inventory)
# it stands for the default profile: the harness knows its own layout.
AUTO_PROFILE = "auto"
# Rules every profile carries (detection/profiles/generic.yaml).
GENERIC_PROFILE = "generic"

# Fields a rules file may set on a rule. ``source`` is reserved for inventory rules:
# it is what lets a prompt authorize a rule, and a hand-written rule must not opt out.
_USER_RULE_FIELDS = frozenset(
    {
        "id",
        "category",
        "material",
        "evidence",
        "description",
        "severity",
        "patterns",
        "fields",
        "fallback",
        "strength",
    }
)
_PROFILE_KEYS = frozenset({"name", "description", "extends", "baseline", "material", "rules"})
_RULES_FILE_KEYS = frozenset({"rules"})
_MAX_EXTENDS_DEPTH = 8


class RulesetError(BadInputError, ValueError):
    """A profile or rules file that cannot be used; the message names file and rule."""


class Profile(BaseModel):
    """A loaded harness profile: its rules (including extended ones) and home baseline."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    description: str = ""
    baseline: frozenset[str] = frozenset()
    # Where the harness's protected material lives (``~/...`` or absolute): a harness
    # that can read it hands the detector its fingerprints (``detection.material``).
    material: tuple[str, ...] = ()
    rules: tuple[Rule, ...]


@functools.lru_cache(maxsize=1)
def _builtin_dir() -> Any:
    # Where the package is does not change in a process; finding it through
    # importlib.resources took about 0.3 ms, asked hundreds of times per scan.
    return resources.files("benchguard.detection").joinpath("profiles")


def profile_names() -> tuple[str, ...]:
    """Built-in profile names, as the folder holds them now (a profile file may have
    been added). The listing is remembered by the folder's path and its stat stamp
    (modification and change times, size), which adding, removing or renaming a file
    changes: a scan asks about 400 times, and each listing cost a directory read."""
    folder = _builtin_dir()
    if isinstance(folder, Path):
        try:
            stat = folder.stat()
        except OSError:
            return _listed_names(folder)
        return _names_at(str(folder), (stat.st_mtime_ns, stat.st_ctime_ns, stat.st_size))
    return _listed_names(folder)


@functools.lru_cache(maxsize=8)
def _names_at(folder: str, stamp: tuple[int, int, int]) -> tuple[str, ...]:
    """:func:`_listed_names` of ``folder`` as it was at ``stamp`` (the cache key)."""
    return _listed_names(Path(folder))


def _listed_names(folder: Any) -> tuple[str, ...]:
    names = sorted(
        entry.name.removesuffix(".yaml")
        for entry in folder.iterdir()
        if entry.name.endswith(".yaml") and not entry.name.startswith((".", "_"))
    )
    # The default first, the rest sorted: a stable order for help texts.
    return tuple(sorted(names, key=lambda n: (n != DEFAULT_PROFILE, n)))


def load_profile(name_or_path: str) -> tuple[Rule, ...]:
    """The rules of a built-in profile (by name) or of a profile YAML file (by path)."""
    return load_profile_spec(name_or_path).rules


def load_profile_spec(name_or_path: str) -> Profile:
    """The whole profile: rules (extended ones first), then the generic profile's rules
    (reward tampering and benchmark seeking belong to every profile), and the home
    baseline."""
    if name_or_path == AUTO_PROFILE:
        name_or_path = DEFAULT_PROFILE
    if name_or_path in profile_names():
        # Built-in profiles are package data: parsed once per process, and the same
        # rule objects every time (the detector's plans are keyed by rule identity).
        return _builtin_profile(name_or_path)
    return _with_generic(name_or_path, _load_profile(name_or_path, ()))


@functools.lru_cache(maxsize=64)
def _builtin_profile(name: str) -> Profile:
    return _with_generic(name, _load_profile(name, ()))


def _with_generic(name_or_path: str, profile: Profile) -> Profile:
    if name_or_path == GENERIC_PROFILE or GENERIC_PROFILE not in profile_names():
        return profile
    taken = {rule.id for rule in profile.rules}
    generic = tuple(r for r in _builtin_profile(GENERIC_PROFILE).rules if r.id not in taken)
    return profile.model_copy(update={"rules": profile.rules + generic})


def profile_material(name_or_path: str) -> tuple[str, ...]:
    """The profile's material roots (an extended profile's first), as
    :func:`load_profile_spec` gives them, read without parsing or checking its rules:
    the detector's glob reading wants every shipped profile's roots, and checking every
    pattern of every profile (each compiled) was most of a small scan's start-up."""
    return _material(name_or_path, ())


def _material(name_or_path: str, seen: tuple[str, ...]) -> tuple[str, ...]:
    if len(seen) > _MAX_EXTENDS_DEPTH or name_or_path in seen:
        # The full loader words these; here they only mean "no roots from this one".
        raise RulesetError(f"profile {name_or_path!r}: 'extends' chain cannot be followed")
    label, document = _read_profile_document(name_or_path)
    if not isinstance(document, Mapping):
        raise RulesetError(f"{label}: a profile must be a mapping")
    material_raw = document.get("material", [])
    if not isinstance(material_raw, list) or not all(
        isinstance(entry, str) and entry.startswith(("~/", "/")) for entry in material_raw
    ):
        raise RulesetError(f"{label}: 'material' must be a list of paths starting with '~/' or '/'")
    extends = document.get("extends")
    if extends is not None:
        if not isinstance(extends, str) or not extends.strip():
            raise RulesetError(f"{label}: 'extends' must be a profile name")
        material_raw = [*_material(extends, (*seen, name_or_path)), *material_raw]
    return tuple(dict.fromkeys(material_raw))


def profile_baseline(name_or_path: str = DEFAULT_PROFILE) -> frozenset[str]:
    """Home entries the profile's harness owns (never inventory leftovers)."""
    return load_profile_spec(name_or_path).baseline


def load_extra_rules(path: Path) -> tuple[Rule, ...]:
    """Rules from a user's YAML file (``rules:`` list); ids must be unique in the file."""
    label = str(path)
    document = _read_yaml(path, label)
    _check_top_level(document, label, "the top level", _RULES_FILE_KEYS)
    rules = _parse_rules(document["rules"], label)
    _reject_duplicates(rules, label, ())
    return rules


def load_ruleset(
    profile: str = DEFAULT_PROFILE, extra_rules: Path | None = None
) -> tuple[Rule, ...]:
    """The profile's rules followed by the extra rules (never replacing them)."""
    base = load_profile(profile)
    if extra_rules is None:
        return base
    extras = load_extra_rules(Path(extra_rules))
    _reject_duplicates(extras, str(extra_rules), base, against=f"profile {profile!r}")
    return base + extras


def validate_rule_patterns(rule: Rule) -> None:
    """Raise :class:`PatternError` for the first unsafe pattern of ``rule``."""
    for index, pattern in enumerate(rule.patterns):
        problem = pattern_problem(pattern)
        if problem is not None:
            raise PatternError(f"pattern {index} {pattern[:80]!r} {problem}")


def _load_profile(name_or_path: str, seen: tuple[str, ...]) -> Profile:
    if len(seen) > _MAX_EXTENDS_DEPTH:
        raise RulesetError(
            f"profile {seen[0]!r}: 'extends' chain is deeper than {_MAX_EXTENDS_DEPTH}"
        )
    if name_or_path in seen:
        raise RulesetError(f"profile {seen[0]!r}: 'extends' forms a cycle through {name_or_path!r}")
    label, document = _read_profile_document(name_or_path)
    _check_top_level(document, label, "a profile", _PROFILE_KEYS)
    name = document.get("name", Path(name_or_path).stem)
    description = document.get("description", "")
    baseline_raw = document.get("baseline", [])
    if not isinstance(name, str) or not name.strip():
        raise RulesetError(f"{label}: 'name' must be a non-empty string")
    if not isinstance(description, str):
        raise RulesetError(f"{label}: 'description' must be a string")
    if not isinstance(baseline_raw, list) or not all(
        isinstance(entry, str) and entry and "/" not in entry for entry in baseline_raw
    ):
        raise RulesetError(f"{label}: 'baseline' must be a list of home entry names (no '/')")
    material_raw = document.get("material", [])
    if not isinstance(material_raw, list) or not all(
        isinstance(entry, str) and entry.startswith(("~/", "/")) for entry in material_raw
    ):
        raise RulesetError(f"{label}: 'material' must be a list of paths starting with '~/' or '/'")

    inherited: tuple[Rule, ...] = ()
    baseline = frozenset(baseline_raw)
    extends = document.get("extends")
    if extends is not None:
        if not isinstance(extends, str) or not extends.strip():
            raise RulesetError(f"{label}: 'extends' must be a profile name")
        parent = _load_profile(extends, (*seen, name_or_path))
        inherited = parent.rules
        baseline |= parent.baseline
        material_raw = [*parent.material, *material_raw]
    own = _parse_rules(document["rules"], label, shipped=name_or_path in profile_names())
    # Also catches duplicates within ``own`` (reported as "an earlier rule").
    _reject_duplicates(own, label, inherited, against=f"extended profile {extends!r}")
    return Profile(
        name=name,
        description=description,
        baseline=baseline,
        material=tuple(dict.fromkeys(material_raw)),
        rules=inherited + own,
    )


@functools.lru_cache(maxsize=64)
def _parsed_yaml(text: str) -> Any:
    """A built-in profile's YAML, parsed once per text: ``--profile auto`` loads the
    profiles again for every input, and the pure-Python YAML parser dominated a scan
    of many small files. Keyed by the file's text, so an edited profile is parsed
    again; callers get a deep copy.

    libyaml's safe loader when PyYAML has it (ten times faster, and part of start-up:
    a scan loads its profiles first); tests/detection/test_profile_yaml_loaders.py
    holds every built-in profile to the same data under both loaders. Users' files keep
    the pure-Python loader (``yamlfile``), whose errors the messages quote."""
    return yaml.load(text, Loader=_SAFE_LOADER)


# PyYAML built without libyaml has no CSafeLoader.
_SAFE_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _read_profile_document(name_or_path: str) -> tuple[str, Any]:
    if name_or_path in profile_names():
        resource = _builtin_dir().joinpath(f"{name_or_path}.yaml")
        label = f"profile {name_or_path!r} ({name_or_path}.yaml)"
        try:
            return label, copy.deepcopy(_parsed_yaml(resource.read_text(encoding="utf-8")))
        except yaml.YAMLError as exc:
            raise RulesetError(f"{label}: YAML parse error: {yaml_problem(exc)}") from None
    path = Path(name_or_path)
    if path.suffix in (".yaml", ".yml") or path.exists() or "/" in name_or_path:
        return str(path), _read_yaml(path, str(path))
    raise RulesetError(
        f"unknown profile {name_or_path!r}; built-in profiles: {list(profile_names())} "
        f"(or {AUTO_PROFILE!r}: recognised from the log), or give the path of a profile "
        "YAML file"
    )


_RULES_FILE_PROBLEMS: dict[YamlFailure, str] = {
    "missing": "file not found",
    "unreadable": "cannot be read: {problem}",
    "invalid": "YAML parse error: {problem}",
    "too_deep": "YAML nested too deeply to read",
}


def _read_yaml(path: Path, label: str) -> Any:
    try:
        return load_yaml_file(path)
    except YamlFileError as exc:
        problem = _RULES_FILE_PROBLEMS[exc.kind].format(problem=exc.problem)
        raise RulesetError(f"{label}: {problem}") from None


def _parse_rules(items: list[Any], label: str, *, shipped: bool = False) -> tuple[Rule, ...]:
    """The rules of a document, each checked; a ``shipped`` (built-in) profile's
    patterns are trusted instead of checked one by one. Checking compiles each pattern
    with ``regex`` and probes it, about half a second of every process's start-up for
    the shipped profiles' hundred-odd patterns, most of which a scan never needs
    compiled (the prefilter names only a few). They are package data, and
    tests/detection/test_rules.py holds every one of them to the check it skips."""
    rules: list[Rule] = []
    for index, item in enumerate(items):
        where = f"{label}: rule {index}"
        if not isinstance(item, Mapping):
            raise RulesetError(f"{where}: must be a mapping, got {_describe_shape(item)}")
        if isinstance(item.get("id"), str):
            where += f" (id {item['id']!r})"
        unknown = sorted(set(map(str, item)) - _USER_RULE_FIELDS)
        if unknown:
            raise RulesetError(
                f"{where}: unknown field(s) {unknown}; allowed: {sorted(_USER_RULE_FIELDS)}"
            )
        missing = [key for key in ("id", "category", "material", "patterns") if key not in item]
        if missing:
            raise RulesetError(f"{where}: missing required field(s) {missing}")
        if isinstance(item.get("patterns"), str):
            raise RulesetError(f"{where}: 'patterns' must be a list of regexes, not one string")
        try:
            rule = Rule.model_validate(dict(item))
        except ValidationError as exc:
            raise RulesetError(f"{where}: {_pydantic_problem(exc)}") from None
        if shipped:
            for pattern in rule.patterns:
                trust_generated(pattern)
        else:
            try:
                validate_rule_patterns(rule)
            except PatternError as exc:
                raise RulesetError(f"{where}: {exc}") from None
        rules.append(rule)
    return tuple(rules)


def _reject_duplicates(
    rules: Sequence[Rule], label: str, existing: Sequence[Rule], *, against: str = ""
) -> None:
    taken = {rule.id for rule in existing}
    for index, rule in enumerate(rules):
        if rule.id in taken:
            whose = (
                f"a rule of {against}"
                if against and any(r.id == rule.id for r in existing)
                else "an earlier rule"
            )
            raise RulesetError(f"{label}: rule {index}: id {rule.id!r} duplicates {whose}")
        taken.add(rule.id)


def _check_top_level(document: Any, label: str, what: str, allowed: frozenset[str]) -> None:
    """One precise complaint about the document's shape, most basic problem first."""
    if not isinstance(document, Mapping):
        raise RulesetError(
            f"{label}: {what} must be a mapping with a 'rules' list, "
            f"got {_describe_shape(document, empty='an empty document')}"
        )
    unknown = sorted(set(map(str, document)) - allowed)
    if unknown:
        raise RulesetError(
            f"{label}: unknown top-level key(s) {unknown}; allowed: {sorted(allowed)}"
        )
    if "rules" not in document:
        raise RulesetError(f"{label}: {what} must have a 'rules' list; there is no 'rules' key")
    if not isinstance(document["rules"], list):
        raise RulesetError(
            f"{label}: 'rules' must be a list of rules, got {_describe_shape(document['rules'])}"
        )


_SHAPE_NAMES = {
    bool: "a boolean",
    int: "an integer",
    float: "a number",
    str: "a string",
    bytes: "binary data",
}


def _describe_shape(value: Any, *, empty: str = "an empty value") -> str:
    if value is None:
        return empty
    if isinstance(value, Mapping):
        return f"a mapping with keys {sorted(map(str, value))[:8]}"
    if isinstance(value, list | tuple):
        return "a list"
    for kind, name in _SHAPE_NAMES.items():
        if isinstance(value, kind):
            return name
    return f"a {type(value).__name__}"


# Pydantic's wording names Python types; a rules file is YAML, where both are lists.
_PYDANTIC_EXPECTED = {"tuple_type": "a list", "list_type": "a list", "string_type": "a string"}


def _pydantic_problem(exc: ValidationError) -> str:
    parts = []
    for error in exc.errors():
        location = ".".join(str(part) for part in error["loc"]) or "rule"
        expected = _PYDANTIC_EXPECTED.get(error["type"])
        if expected is not None:
            message = f"must be {expected}, got {_describe_shape(error.get('input'))}"
        else:
            message = error["msg"]
        parts.append(f"{location}: {message}")
    return "; ".join(parts)
