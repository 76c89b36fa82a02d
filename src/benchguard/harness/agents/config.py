"""Agent configuration: how to start an agent on one task, written in YAML.

An agent is an argv template, never a shell string, so a prompt full of quotes,
``$(...)`` or newlines reaches the agent as one argument and is never interpreted.
Placeholders are whole ``{name}`` tokens replaced inside each argument:

- ``{prompt}``: the task prompt; ``{workspace}``: the run's fresh workspace (also the
  working directory); ``{home}``: the persistent agent home (also ``HOME``);
- ``{python}``: the interpreter running the harness; ``{agent_dir}``: the directory
  holding the agent's YAML (for scripts shipped beside it); ``{benchguard_agent}``:
  the built-in OpenAI-compatible agent's script;
- ``{endpoint}``: the model endpoint, the value of the variable named by
  ``endpoint_env`` (for CLIs that take their endpoint as a flag, like Codex's
  ``-c model_providers...`` override).

``{{`` and ``}}`` stand for literal braces. The environment is an allowlist: the agent
sees only the variables named in ``env`` (when the harness has them), the fixed values
in ``set_env``, and ``HOME``, ``PATH`` and ``BENCHGUARD_TRAJECTORY`` set by the harness,
plus ``BENCHGUARD_RUN_TOKEN``, which :func:`benchguard.harness.process.run_process` adds
per run so the run's processes can be found and killed after it.

Agent CLIs keep state (settings, session transcripts, tool-output caches) in
directories they find through environment variables. Each name in ``state_env`` is
pointed at a fresh, empty directory inside the run's scratch directory, removed with
it, so no run can read an earlier run's sessions (``CLAUDE_CONFIG_DIR``, ``CODEX_HOME``,
``TMPDIR``).
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from benchguard.errors import BadInputError
from benchguard.harness.model_file import load_model_file
from benchguard.suggest import did_you_mean
from benchguard.yamlfile import YamlFileError

TrajectoryAdapter = Literal["jsonl", "claude-stream-json", "codex-json", "stdout"]
PLACEHOLDERS: tuple[str, ...] = (
    "prompt",
    "workspace",
    "home",
    "python",
    "agent_dir",
    "benchguard_agent",
    "endpoint",
)
BUILTIN_AGENT_NAME = "benchguard-agent"
# Variables no allowlist may carry into an agent: they belong to the harness, and
# passing them would tell the agent where the benchmark's own material lives.
_NEVER_PASSED = re.compile(r"^(BENCHGUARD_|BENCH_)")
_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([^{}]*)\}")
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# Read by the dynamic loader and libc of every program the environment reaches, and the
# harness's wrappers (unshare, setpriv, bwrap, the separation) get the run's
# environment before the launcher confines anything: LD_PRELOAD there ran code as uid 0
# with every capability, outside Landlock and seccomp (red team 5). An agent that needs
# one sets it in its own command, which runs confined: argv: [env, LD_LIBRARY_PATH=..., prog].
_LOADER_VARIABLES = re.compile(
    r"^(LD_\w*|GCONV_PATH|GETCONF_DIR|GLIBC_TUNABLES|HOSTALIASES|LOCALDOMAIN|LOCPATH"
    r"|MALLOC_\w*|NIS_PATH|NLSPATH|RESOLV_HOST_CONF|RES_OPTIONS|TZDIR)$"
)
_LOADER_HINT = (
    "it is read by the loader of the harness's own wrappers, before the agent is "
    "confined; set it in the agent's command instead (argv: [env, NAME=value, program])"
)
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"


class AgentConfigError(BadInputError, ValueError):
    """An agent YAML (or name) that cannot be used; the message names file and field."""


class AgentConfig(BaseModel):
    """One agent, as written in its YAML file (``source`` is filled by the loader)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str = Field(min_length=1)
    argv: tuple[str, ...] = Field(min_length=1)
    env: tuple[str, ...] = ()
    set_env: dict[str, str] = Field(default_factory=dict)
    timeout: float | None = Field(default=None, gt=0, le=24 * 3600)
    trajectory: TrajectoryAdapter = "jsonl"
    # false: no network under the sandbox; "model": only the model endpoint
    # (endpoint_env), through harness.model_proxy; true: the host's network, which
    # pre-flight refuses unless the operator passes --allow-host-network
    # (harness.preflight.host_network_refusal): an agent file cannot grant it itself.
    network: bool | Literal["model"] = False
    model: str = ""
    skills: tuple[str, ...] = ()
    # Variables pointed at fresh per-run directories (see the module doc).
    state_env: tuple[str, ...] = ()
    # The variable holding the model endpoint's URL; it must be allowlisted in ``env``.
    # Pre-flight checks the endpoint answers; a sandboxed run reaches only it.
    endpoint_env: str | None = None
    # A quick command proving the program runs (e.g. ["claude", "--version"]); pre-flight
    # runs it once, in the batch's sandbox, before the first task.
    check_argv: tuple[str, ...] = ()
    # The agent's own installation outside the system directories (absolute, or
    # relative to the agent file's directory): read and execute under Landlock,
    # read-only under the sandbox. Pre-flight refuses one that is missing or that holds
    # the tasks or the results.
    install: tuple[str, ...] = ()
    source: str = ""

    @field_validator("argv", "check_argv", mode="before")
    @classmethod
    def _argv_is_a_list(cls, value: object) -> object:
        if isinstance(value, str):
            raise ValueError(
                "must be a list of arguments (argv), not a shell string; "
                'e.g. ["{python}", "{agent_dir}/agent.py", "{prompt}"]'
            )
        return value

    @field_validator("argv", "check_argv")
    @classmethod
    def _known_placeholders(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for arg in value:
            for match in _PLACEHOLDER.finditer(arg):
                name = match.group(1)
                if name is not None and name not in PLACEHOLDERS:
                    raise ValueError(
                        f"unknown placeholder {{{name}}} in {arg!r}; allowed: "
                        + ", ".join(f"{{{p}}}" for p in PLACEHOLDERS)
                        + " (write {{ and }} for literal braces)"
                    )
        return value

    @field_validator("env")
    @classmethod
    def _allowlist_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not _ENV_NAME.match(name):
                raise ValueError(f"{name!r} is not an environment variable name")
            if _NEVER_PASSED.match(name) or name in ("HOME", "PATH"):
                raise ValueError(
                    f"{name!r} cannot be allowlisted: BENCHGUARD_*/BENCH_* belong to the "
                    "harness, and HOME and PATH are set by it (use set_env for PATH)"
                )
            if _LOADER_VARIABLES.match(name):
                raise ValueError(f"{name!r} cannot be allowlisted: {_LOADER_HINT}")
        return value

    @field_validator("set_env")
    @classmethod
    def _fixed_names(cls, value: dict[str, str]) -> dict[str, str]:
        for name in value:
            if not _ENV_NAME.match(name) or _NEVER_PASSED.match(name) or name == "HOME":
                raise ValueError(
                    f"{name!r} cannot be set: it must be a variable name, not HOME and not "
                    "BENCHGUARD_*/BENCH_*"
                )
            if _LOADER_VARIABLES.match(name):
                raise ValueError(f"{name!r} cannot be set: {_LOADER_HINT}")
        return value

    @field_validator("state_env")
    @classmethod
    def _state_names(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        for name in value:
            if not _ENV_NAME.match(name) or _NEVER_PASSED.match(name) or name in ("HOME", "PATH"):
                raise ValueError(
                    f"{name!r} cannot be a state variable: it must be a variable name, not "
                    "HOME, PATH or BENCHGUARD_*/BENCH_*"
                )
        if len(set(value)) != len(value):
            raise ValueError(f"names repeat in {list(value)}")
        return value

    @model_validator(mode="after")
    def _endpoint_is_passed(self) -> AgentConfig:
        if self.network == "model" and self.endpoint_env is None:
            raise ValueError("network: model needs endpoint_env (the endpoint it may reach)")
        if self.endpoint_env is not None and self.endpoint_env not in self.env:
            raise ValueError(
                f"endpoint_env {self.endpoint_env!r} must also be listed in env, "
                "or the agent never sees its endpoint"
            )
        if self.endpoint_env is None and any("{endpoint}" in arg for arg in self.argv):
            raise ValueError("argv uses {endpoint}, which needs endpoint_env")
        return self

    def endpoint(self, parent: Mapping[str, str]) -> str | None:
        """The model endpoint URL from ``parent`` (the harness's environment), if any."""
        if self.endpoint_env is None:
            return None
        return parent.get(self.endpoint_env) or None

    @property
    def agent_dir(self) -> Path | None:
        """The directory of the agent's YAML; None for the built-in."""
        return Path(self.source).parent if self.source else None

    def install_paths(self) -> tuple[Path, ...]:
        """``install`` as absolute paths (relative ones from the agent's directory)."""
        base = self.agent_dir or Path.cwd()
        return tuple(Path(os.path.abspath(base / Path(raw).expanduser())) for raw in self.install)

    def uses_builtin_agent(self) -> bool:
        return any("{benchguard_agent}" in arg for arg in self.argv)


def builtin_agent_script() -> Path:
    """The built-in agent's source file, runnable as a standalone stdlib-only script.

    Found beside this module, not imported: importing it loads ``urllib``, ``http``
    and ``ssl`` (about 200 ms on a loaded host) for a path every run renders."""
    return Path(__file__).resolve().with_name("openai_agent.py")


def render_argv(
    agent: AgentConfig,
    *,
    prompt: str,
    workspace: Path,
    home: Path,
    parent: Mapping[str, str] | None = None,
) -> list[str]:
    """The argv to start ``agent`` on one task; each placeholder becomes plain text.

    ``parent`` is the harness's environment, read for ``{endpoint}``."""
    values = {
        "endpoint": agent.endpoint(os.environ if parent is None else parent) or "",
        "prompt": prompt,
        "workspace": str(workspace),
        "home": str(home),
        "python": sys.executable,
        "agent_dir": str(agent.agent_dir or ""),
        "benchguard_agent": str(builtin_agent_script()),
    }

    def substitute(match: re.Match[str]) -> str:
        token = match.group(0)
        if token in ("{{", "}}"):
            return token[0]
        return values[match.group(1)]

    return [_PLACEHOLDER.sub(substitute, arg) for arg in agent.argv]


def agent_environment(
    agent: AgentConfig,
    *,
    home: Path,
    trajectory_file: Path,
    parent: Mapping[str, str],
    state_dirs: Mapping[str, Path] | None = None,
) -> dict[str, str]:
    """The agent's whole environment (nothing else leaks through) but for the run token,
    which ``run_process`` adds when it starts the run.

    ``state_dirs`` maps each ``state_env`` name to this run's own directory; they win
    over ``env`` and ``set_env``, so no setting can point a run at shared state."""
    env = {name: parent[name] for name in agent.env if name in parent}
    env.update(agent.set_env)
    env.setdefault("PATH", DEFAULT_PATH)
    env.update({name: str(path) for name, path in (state_dirs or {}).items()})
    env["HOME"] = str(home)
    env["BENCHGUARD_TRAJECTORY"] = str(trajectory_file)
    return env


def make_state_dirs(agent: AgentConfig, root: Path) -> dict[str, Path]:
    """A fresh, private directory under ``root`` for each ``state_env`` name."""
    dirs: dict[str, Path] = {}
    for name in agent.state_env:
        path = root / name.lower()
        path.mkdir(mode=0o700, parents=True)
        dirs[name] = path
    return dirs


def resolve_program(agent: AgentConfig) -> Path | None:
    """The agent's program (``argv[0]``) as an absolute path, searched on the agent's
    own ``PATH`` (``set_env``'s, else the default); None when it is a placeholder, or
    not found or not executable there."""
    program = agent.argv[0]
    if "{" in program:
        return None  # a placeholder ({python}, {agent_dir}/...): the harness's own
    found = shutil.which(program, path=agent.set_env.get("PATH", DEFAULT_PATH))
    return Path(found).absolute() if found else None


def program_tree(program: Path) -> Path:
    """What must be visible for ``program`` to run: an npm-installed CLI needs its whole
    ``node_modules`` tree (launchers load sibling packages and native binaries), any
    other program its own directory."""
    real = program.resolve()
    for parent in (program.parent, *program.parents, *real.parents):
        if parent.name == "node_modules":
            top = parent
            # The outermost node_modules: nested packages load from the top one.
            for above in parent.parents:
                if above.name == "node_modules":
                    top = above
            return top
    return real.parent


def builtin_agent_config() -> AgentConfig:
    """``benchguard-agent``: the OpenAI-compatible agent, configured from the environment.

    ``OPENAI_BASE_URL``, ``OPENAI_MODEL`` and ``OPENAI_API_KEY`` pass through. It talks
    to its endpoint and nothing else, so it asks for ``network: model``: in a network
    namespace of its own (the sandbox's, or a confined run's separation), the model
    bridge carries its requests to ``OPENAI_BASE_URL`` and a sibling run's loopback
    servers are not there. The host's network is the operator's to grant
    (``--allow-host-network``), never the agent file's.
    """
    return AgentConfig(
        name=BUILTIN_AGENT_NAME,
        argv=(
            "{python}",
            "{benchguard_agent}",
            "--workspace",
            "{workspace}",
            "--prompt",
            "{prompt}",
        ),
        env=("OPENAI_BASE_URL", "OPENAI_MODEL", "OPENAI_API_KEY", "LANG"),
        trajectory="jsonl",
        network="model",
        endpoint_env="OPENAI_BASE_URL",
        model=os.environ.get("OPENAI_MODEL", ""),
    )


def load_agent_file(path: Path) -> AgentConfig:
    """Load one agent YAML; ``AgentConfigError`` names the file and the field."""
    return load_model_file(
        path,
        AgentConfig,
        error=AgentConfigError,
        top_level="name, argv",
        loader_fields={"source": str(path.resolve())},
        allowed_fields=lambda _loc: ", ".join(sorted(set(AgentConfig.model_fields) - {"source"})),
        yaml_message=_yaml_message,
    )


def _yaml_message(exc: YamlFileError) -> str:
    if exc.kind == "invalid":  # pyyaml's own text, with its snippet of the file
        return f"{exc.path}: is not valid YAML ({exc.cause})"
    return str(exc)


def resolve_agent(name_or_path: str, *, search_dirs: tuple[Path, ...] = ()) -> AgentConfig:
    """An agent by YAML path, by built-in name, or by ``<name>.yaml`` in ``search_dirs``."""
    candidate = Path(name_or_path).expanduser()
    if candidate.suffix in (".yaml", ".yml") or candidate.is_file():
        if not candidate.is_file():
            siblings = (
                [p.name for p in candidate.parent.glob("*.y*ml")]
                if candidate.parent.is_dir()
                else []
            )
            hint = did_you_mean(candidate.name, siblings)
            raise AgentConfigError(f"{candidate}: agent file not found{hint}")
        return load_agent_file(candidate)
    if name_or_path == BUILTIN_AGENT_NAME:
        return builtin_agent_config()
    for directory in search_dirs:
        for suffix in (".yaml", ".yml"):
            path = directory / f"{name_or_path}{suffix}"
            if path.is_file():
                return load_agent_file(path)
    known = [
        BUILTIN_AGENT_NAME,
        *sorted(p.stem for d in search_dirs if d.is_dir() for p in d.glob("*.y*ml")),
    ]
    raise AgentConfigError(
        f"unknown agent {name_or_path!r}: give a path to an agent YAML or one of {known}"
        f"{did_you_mean(name_or_path, known)}"
    )
