"""The project configuration file: ``benchguard.toml`` or ``[tool.benchguard]``.

Found by walking up from the working directory: the first directory holding a
``benchguard.toml`` (its top-level keys), or else a ``pyproject.toml`` with a
``[tool.benchguard]`` table, is the one used; a ``pyproject.toml`` without that table is
passed over. ``BENCHGUARD_CONFIG`` names a file explicitly (and an empty value turns
the search off). Paths in the file are relative to the file's directory.

Every setting has a source: a command-line flag wins over the file, which wins over
the built-in default; :func:`resolve` records which one supplied each value, and
``benchguard config`` prints them. A key the file does not know is refused with the
list of the keys it does; a value of the wrong type or outside its choices is refused
naming the file, the key, the value and what is allowed.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from benchguard.errors import ConfigError
from benchguard.suggest import did_you_mean

CONFIG_FILENAME = "benchguard.toml"
PYPROJECT_FILENAME = "pyproject.toml"
CONFIG_ENV = "BENCHGUARD_CONFIG"
# The largest config file read: a config is a few lines, a huge one is a mistake.
MAX_CONFIG_BYTES = 1024 * 1024

OUTPUT_FORMAT_CHOICES = ("table", "json", "sarif", "junit")
ENGINE_CHOICES = ("serial", "dask")


@dataclass(frozen=True)
class _Key:
    kind: str  # "str", "path", "paths", "int", or "choice"
    help: str
    choices: tuple[str, ...] = ()


KEYS: dict[str, _Key] = {
    "profile": _Key("str", "rule profile name, or a profile YAML path"),
    "rules": _Key("path", "extra rules YAML appended to the profile"),
    "dismissals": _Key("path", "reviewed dismissals file applied by scan and score"),
    "inventory_roots": _Key("paths", "extra directories inventoried besides the agent home"),
    "format": _Key("choice", "output format of scan and score", OUTPUT_FORMAT_CHOICES),
    "engine": _Key("choice", "scan engine", ENGINE_CHOICES),
    "scheduler": _Key("str", "dask scheduler: processes, threads, synchronous, or an address"),
    "workers": _Key("int", "dask local workers"),
}
ALLOWED_KEYS: tuple[str, ...] = tuple(sorted(KEYS))


@dataclass(frozen=True)
class ConfigFile:
    """A configuration file found and read: its path, the table's name, its settings."""

    path: Path
    table: str
    values: Mapping[str, Any]

    @property
    def label(self) -> str:
        return f"{self.path} [{self.table}]" if self.table != "(top level)" else str(self.path)


@dataclass(frozen=True)
class Setting:
    """One effective setting and where it came from (a flag, a file, or the default)."""

    value: Any
    source: str


def find_config(
    start: Path | None = None, env: Mapping[str, str] | None = None
) -> ConfigFile | None:
    """The configuration in force for ``start`` (default: the working directory)."""
    environ = os.environ if env is None else env
    explicit = environ.get(CONFIG_ENV)
    if explicit is not None:
        if not explicit.strip():
            return None
        path = Path(explicit)
        if not path.is_file():
            raise ConfigError(f"{CONFIG_ENV}={explicit}: no such file")
        return _read(path, explicit=True)
    here = Path(os.path.abspath(start if start is not None else Path.cwd()))
    for folder in (here, *here.parents):
        own = folder / CONFIG_FILENAME
        if own.is_file():
            return _read(own, explicit=True)
        project = folder / PYPROJECT_FILENAME
        if project.is_file():
            found = _read(project, explicit=False)
            if found is not None:
                return found
    return None


def resolve(
    config: ConfigFile | None, flags: Mapping[str, Any], defaults: Mapping[str, Any]
) -> dict[str, Setting]:
    """Each key's effective value: the flag when given (not None), else the file's,
    else the default; with the source of each."""
    settings: dict[str, Setting] = {}
    for key in ALLOWED_KEYS:
        flag = flags.get(key)
        if flag is not None and flag != [] and flag != ():
            settings[key] = Setting(flag, f"--{key.replace('_', '-')}")
        elif config is not None and key in config.values:
            settings[key] = Setting(config.values[key], config.label)
        else:
            settings[key] = Setting(defaults.get(key), "default")
    return settings


def _read(path: Path, *, explicit: bool) -> ConfigFile | None:
    try:
        if path.stat().st_size > MAX_CONFIG_BYTES:
            raise ConfigError(f"{path}: larger than {MAX_CONFIG_BYTES} bytes; not a config file")
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML ({exc})") from None
    if path.name == PYPROJECT_FILENAME:
        tool = data.get("tool")
        table = tool.get("benchguard") if isinstance(tool, dict) else None
        if table is None:
            if explicit:
                raise ConfigError(f"{path}: has no [tool.benchguard] table")
            return None
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.benchguard] must be a table")
        return ConfigFile(path, "tool.benchguard", _validate(path, table))
    return ConfigFile(path, "(top level)", _validate(path, data))


def _validate(path: Path, table: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(table) - set(KEYS))
    if unknown:
        named = ", ".join(
            f"{key!r}"
            + (f" ({hint.removeprefix('; ')})" if (hint := did_you_mean(key, KEYS)) else "")
            for key in unknown
        )
        raise ConfigError(
            f"{path}: unknown key(s) {named}; allowed keys: {', '.join(ALLOWED_KEYS)}"
        )
    base = path.parent
    values: dict[str, Any] = {}
    for key in ALLOWED_KEYS:
        if key in table:
            values[key] = _value(path, base, key, KEYS[key], table[key])
    return values


def _value(path: Path, base: Path, key: str, spec: _Key, raw: Any) -> Any:
    def wrong(allowed: str) -> ConfigError:
        return ConfigError(f"{path}: {key} = {raw!r} is not allowed; expected {allowed}")

    if spec.kind == "int":
        if not isinstance(raw, int) or isinstance(raw, bool) or raw < 1:
            raise wrong("a whole number of at least 1")
        return raw
    if spec.kind == "paths":
        if not isinstance(raw, list) or not all(isinstance(p, str) and p.strip() for p in raw):
            raise wrong("a list of directory paths (strings)")
        return [_path(base, p) for p in raw]
    if not isinstance(raw, str) or not raw.strip():
        raise wrong("a non-empty string")
    if spec.kind == "choice" and raw not in spec.choices:
        raise wrong(f"one of: {', '.join(spec.choices)}")
    if spec.kind == "path":
        return _path(base, raw)
    if key == "profile" and raw.endswith((".yaml", ".yml")):
        # A profile file is read relative to the config, a built-in profile by name.
        return str(_path(base, raw))
    return raw


def _path(base: Path, text: str) -> Path:
    expanded = Path(os.path.expanduser(text))
    return expanded if expanded.is_absolute() else base / expanded
