"""Linters, type checkers and formatters that find their config in the working directory.

The box's working directory is the agent's workspace copy, so a config found there is
the agent's, and several of these tools import code a config names: mypy's
``plugins`` (mypy.ini, .mypy.ini, pyproject.toml, setup.cfg), pylint's
``load-plugins`` and ``init-hook`` (pylintrc, pyproject.toml, setup.cfg), flake8's
``local-plugins`` paths (.flake8, setup.cfg, tox.ini), coverage's ``plugins``
(.coveragerc, setup.cfg, tox.ini, pyproject.toml), and eslint's and prettier's config
files, which are JavaScript (eslint.config.js, .eslintrc.js, prettier.config.js).
Such a check is refused unless it pins the config to one of the task's grading files
(or turns discovery off), with the flags in :data:`RULES`; options that load code
from the argv itself (``--load-plugins``, ``--plugin``, ``--rulesdir``) are refused
outright, since the module they name resolves in the box, among the agent's files.

bandit reads ``.bandit`` from a lone target directory unless ``--ini`` names one: it
runs no code, but the agent's file would pick the tests skipped, so it is pinned too.
pre-commit runs git (the workspace's .git/config can name programs) and its hooks: it
is refused outright. Tools whose config holds no code (ruff, black, isort, pyright,
tsc) are read as data tools; their config can still narrow what they check, which
docs/harness.md says.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from benchguard.harness.program_options import Checker, WorkspaceCode


@dataclass(frozen=True)
class Rule:
    """How one tool's config is pinned: the options naming a config file, the flags that
    turn discovery off, whether a pin also needs one of those flags, and the options
    that load code whatever the config."""

    config: tuple[str, ...]
    lookup_off: tuple[str, ...] = ()
    needs_lookup_off: bool = False
    loads_code: tuple[str, ...] = ()
    found: str = ""


RULES: dict[str, Rule] = {
    "mypy": Rule(
        config=("--config-file",),
        loads_code=("--python-executable", "--install-types"),
        found="mypy.ini, .mypy.ini, pyproject.toml or setup.cfg, whose plugins it imports",
    ),
    "pylint": Rule(
        config=("--rcfile",),
        loads_code=("--load-plugins", "--init-hook"),
        found="pylintrc, .pylintrc, pyproject.toml or setup.cfg, whose load-plugins "
        "it imports and whose init-hook it runs",
    ),
    "flake8": Rule(
        config=("--config",),
        lookup_off=("--isolated",),
        loads_code=("--append-config",),
        found=".flake8, setup.cfg or tox.ini, whose local-plugins paths it imports from",
    ),
    "coverage": Rule(
        config=("--rcfile",),
        found=".coveragerc, setup.cfg, tox.ini or pyproject.toml, whose plugins it imports",
    ),
    "bandit": Rule(
        config=("--ini",),
        found=".bandit in the target directory, which picks the tests it skips",
    ),
    # Legacy eslintrc mode merges a discovered .eslintrc.js with -c's file; flat
    # config mode does not look once -c is given. The argv does not say which mode the
    # installed eslint runs, so -c needs --no-eslintrc (legacy) or --no-config-lookup.
    "eslint": Rule(
        config=("-c", "--config"),
        lookup_off=("--no-eslintrc", "--no-config-lookup"),
        needs_lookup_off=True,
        loads_code=("--rulesdir", "--plugin", "--resolve-plugins-relative-to", "--parser"),
        found="eslint.config.js or .eslintrc.js, JavaScript it runs",
    ),
    "prettier": Rule(
        config=("--config",),
        lookup_off=("--no-config",),
        loads_code=("--plugin", "--plugin-search-dir"),
        found="prettier.config.js, .prettierrc.js or package.json, JavaScript it runs "
        "and plugins it loads",
    ),
}
# python -m spellings of the same tools.
MODULES = {"mypy": "mypy", "pylint": "pylint", "flake8": "flake8", "coverage": "coverage"}
MODULES |= {"bandit": "bandit"}
# eslint's built-in formatters: any other -f value is a module it loads.
_ESLINT_FORMATS = {"stylish", "json", "json-with-metadata", "html", "compact", "unix"}
_ESLINT_FORMATS |= {"checkstyle", "jslint-xml", "junit", "tap", "visualstudio"}
# Linters that run code in ways no flag pins: refused, with why.
REFUSED = {
    "pre-commit": "pre-commit runs git (the workspace's .git/config can name programs) "
    "and its hooks run commands",
    "dmypy": "dmypy starts a daemon that outlives the check and reads the workspace's config",
    "nbqa": "nbqa runs other tools on the workspace with their discovered config",
    "prospector": "prospector runs several linters, each with its discovered config",
    "pylama": "pylama runs several linters, each with its discovered config",
}


def read(checker: Checker, name: str, args: Sequence[str]) -> None:
    """Refuse ``name args`` unless its config is pinned to a grading file (or its
    lookup is off) and no option loads code."""
    if name in REFUSED:
        raise WorkspaceCode(REFUSED[name])
    rule = RULES[name]
    if name == "coverage" and next((a for a in args if not a.startswith("-")), "") == "run":
        raise WorkspaceCode(
            "coverage run runs a program under coverage; run pytest on grading files"
        )
    pinned: list[str] = []
    lookup_off = False
    for i, arg in enumerate(args):
        head, eq, value = arg.partition("=")
        if head in rule.loads_code:
            raise WorkspaceCode(
                f"{name} {head} loads code the check names but the box resolves (among "
                "the agent's files), so it is refused"
            )
        if name == "eslint" and head in ("-f", "--format"):
            value = value if eq else (args[i + 1] if i + 1 < len(args) else "")
            if value not in _ESLINT_FORMATS:
                raise WorkspaceCode(f"eslint {head} {value!r} loads a formatter module")
        if head in rule.config:
            pinned.append(value if eq else (args[i + 1] if i + 1 < len(args) else ""))
        lookup_off |= arg in rule.lookup_off
    for path in pinned:
        checker.script(path, f"the config given to {name}")
    if lookup_off and (pinned or not rule.needs_lookup_off):
        return
    if pinned and not rule.needs_lookup_off:
        return
    flags = " or ".join(f"{o} FILE" for o in rule.config)
    if rule.needs_lookup_off:
        flags += " with " + " or ".join(rule.lookup_off)
    elif rule.lookup_off:
        flags += ", or " + " or ".join(rule.lookup_off)
    raise WorkspaceCode(
        f"{name} finds its config in the working directory, the agent's workspace "
        f"({rule.found}); pin it to a grading file: {flags}"
    )
