"""Pre-flight: before the first run, prove the agent can start where it will run.

A batch whose agent cannot start fails every run, and is found out only after the
batch (``bwrap: execvp claude: No such file or directory`` on every record). Before
the first run, :func:`preflight` checks, and refuses the batch with an error naming
the agent file, the program and the reason:

1. the agent's program (``argv[0]``, placeholders rendered) exists and is executable:
   a bare name is looked up on the agent's own ``PATH``, not the harness's;
2. it is visible and executable inside the chosen sandbox (the same binds, identity
   and environment as a run), and, when the agent names a ``check_argv`` (e.g.
   ``["claude", "--version"]``), that command exits 0 there within
   :data:`CHECK_TIMEOUT_S`;
3. the model endpoint (``endpoint_env``), when one is configured, answers HTTP: any
   response, even an error status, counts; a refused connection or a timeout does not.

The check is the agent file's own program (agent-controlled code), so it is contained
and audited as a run is (red team 6's pre-flight wins: a double-forked helper outlived
pre-flight and sabotaged, signalled or fed later runs; under ``--unconfined`` the check
read the tasks unaudited): its own pid namespace and cgroup (every process of it is
killed when the check ends, daemonized or not), the separation where a run would get it,
and the batch's audit over the batch's protected set. A check whose audit saw it touch
protected material, or change metadata outside its own trees, refuses the batch
(:class:`PreflightError`, naming the check and the evidence).

What it cannot see: an endpoint that answers the check but rejects the agent's key or
model, and an agent that starts but fails on its first real task; with the audit off
(``--audit none``) a check's reads are not seen, only contained.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import urllib.error
import urllib.request
from collections.abc import Mapping
from pathlib import Path
from urllib.parse import urlsplit

from benchguard.errors import BadInputError
from benchguard.harness import cgroup
from benchguard.harness.agents.config import (
    DEFAULT_PATH,
    AgentConfig,
    agent_environment,
    make_state_dirs,
    render_argv,
)
from benchguard.harness.audit import AuditSettings, ProtectedSet, protected_set
from benchguard.harness.audit_session import RunSession
from benchguard.harness.confine import Confinement, agent_policy, launcher_argv, launcher_files
from benchguard.harness.containment import RunContainment, separate_script, separation_works
from benchguard.harness.home import HomeSettings, make_run_home
from benchguard.harness.identity import AgentIdentity, hand_over
from benchguard.harness.model_proxy import ModelNetworkError, model_endpoint
from benchguard.harness.process import run_process
from benchguard.harness.sandbox import SandboxSpec, bwrap_argv, interpreter_paths

CHECK_TIMEOUT_S = 60.0
ENDPOINT_TIMEOUT_S = 10.0
# Kept of a failed check's output in the error.
OUTPUT_TAIL_CHARS = 600


class PreflightError(BadInputError, ValueError):
    """The agent cannot run here; the message names the agent, what failed and why."""


def preflight(
    agent: AgentConfig,
    *,
    sandbox: str,
    home: Path,
    read_only: tuple[Path, ...] = (),
    bwrap: str = "bwrap",
    identity: AgentIdentity | None = None,
    parent: Mapping[str, str] | None = None,
    confinement: Confinement | None = None,
    home_settings: HomeSettings | None = None,
    audit: AuditSettings | None = None,
    tasks_dirs: tuple[Path, ...] = (),
    results_root: Path | None = None,
) -> None:
    """Raise :class:`PreflightError` unless the agent can start (see the module doc).

    ``audit``, ``tasks_dirs``, ``results_root``: the batch's audit and what it protects;
    the check is audited over them as a run would be (None: not audited, still
    contained)."""
    env_in = os.environ if parent is None else parent
    where = f"agent {agent.name!r}" + (f" ({agent.source})" if agent.source else "")
    program = program_path(agent, home)
    if program is None:
        path = agent.set_env.get("PATH", DEFAULT_PATH)
        raise PreflightError(
            f"{where}: program {agent.argv[0]!r} is not found or not executable on the "
            f"agent's PATH ({path}); install it there or set set_env.PATH in the agent file"
        )
    confined = confinement is not None and confinement.active
    watch = (
        _Watched(audit, tasks_dirs, results_root)
        if audit is not None and audit.active and results_root is not None
        else None
    )
    _check_runs(
        agent,
        program,
        sandbox,
        home,
        read_only,
        bwrap,
        identity,
        env_in,
        where,
        confined,
        watch=watch,
    )
    # A confined unsandboxed run with network: model is in a network namespace of its
    # own too (harness/containment), reaching its endpoint only through the bridge.
    bridged = sandbox == "bwrap" or (confined and separation_works() is None)
    _check_endpoint(agent, env_in, where, sandbox, bridged=bridged)


def separation_warning(*, sandbox: str, confinement: Confinement) -> str | None:
    """The warning pre-flight prints when confined unsandboxed runs cannot be separated
    from each other here (harness/containment.separation_works names the step that
    failed); None when they can, or the batch does not ask for it."""
    if sandbox == "bwrap" or not confinement.active:
        return None
    missing = separation_works()
    if missing is None:
        return None
    return (
        f"the runs will NOT be separated from each other: {missing}; each run then shares "
        "the harness's /tmp, /dev, /sys and network with every other run (a concurrent "
        "run can change or read another's scratch metadata, device nodes, ptys and "
        "loopback servers), and every record says containment.separation_unavailable; "
        "use --sandbox bwrap, or fix the failing step"
    )


class _Watched:
    """The batch's audit and protected roots, for the check's own audit."""

    def __init__(
        self, settings: AuditSettings, tasks_dirs: tuple[Path, ...], results_root: Path
    ) -> None:
        self.settings = settings
        self.tasks_dirs = tasks_dirs
        self.results_root = results_root

    def protected(self, scratch: Path, home: Path, read_only: tuple[Path, ...]) -> ProtectedSet:
        # The same roots a run's audit has (harness/job._protected), the check's own
        # scratch in place of the run's.
        return protected_set(
            tasks_dirs=[p.resolve() for p in self.tasks_dirs],
            results_root=self.results_root,
            own_scratch=scratch,
            protect=self.settings.protect,
            interpreter=interpreter_paths(),
            # The launcher and the separation run the check: never the check's reads.
            agent_own=(*read_only, *launcher_files(), separate_script(), home, scratch),
            own_trees=(home, scratch),
        )


def program_path(agent: AgentConfig, home: Path) -> Path | None:
    """``argv[0]`` as an executable file's absolute path, or None."""
    first = render_argv(agent, prompt="", workspace=home, home=home)[0]
    if "/" in first:
        candidate = Path(first)
    else:
        found = shutil.which(first, path=agent.set_env.get("PATH", DEFAULT_PATH))
        if found is None:
            return None
        candidate = Path(found)
    if candidate.is_file() and os.access(candidate, os.X_OK):
        return candidate.absolute()
    return None


def _check_runs(
    agent: AgentConfig,
    program: Path,
    sandbox: str,
    home: Path,
    read_only: tuple[Path, ...],
    bwrap: str,
    identity: AgentIdentity | None,
    parent: Mapping[str, str],
    where: str,
    confined: bool = False,
    home_settings: HomeSettings | None = None,
    *,
    watch: _Watched | None = None,
) -> None:
    fresh = home_settings is not None and home_settings.fresh
    if sandbox != "bwrap" and not agent.check_argv and not confined and not fresh:
        return  # found and executable on the host is all there is to check
    with tempfile.TemporaryDirectory(prefix="bg-preflight-") as scratch:
        root = Path(scratch).resolve()
        workspace = root / "workspace"
        workspace.mkdir()
        channel = root / "trajectory.jsonl"
        channel.touch()
        state_dirs = make_state_dirs(agent, root / "agent-state")
        env = agent_environment(
            agent, home=home, trajectory_file=channel, parent=parent, state_dirs=state_dirs
        )
        if agent.check_argv:
            command = render_argv(
                agent.model_copy(update={"argv": agent.check_argv}),
                prompt="",
                workspace=workspace,
                home=home,
                parent=parent,
            )
        else:
            # Visible and executable inside: the failure a missing bind gives every run.
            # Opened too: access(2) is not what Landlock checks, open(2) is.
            test = (
                "import os, sys; p = sys.argv[1]; open(p, 'rb').close(); "
                "sys.exit(0 if os.access(p, os.X_OK) else 3)"
            )
            command = [sys.executable, "-I", "-c", test, str(program)]
        run_home = make_run_home(home_settings, home, root) if home_settings else None
        # Through the launcher, as a run is: the same Landlock allow-list, home and
        # dropped capabilities, so an install it does not cover, a home that cannot be
        # mounted or a program that needs a capability fails here, not on every record.
        # The run's own tmp, sandboxed too (see harness.runner: never the sandbox's /tmp).
        tmp = root / "tmp"
        run_tmp: tuple[Path, ...] = ()
        if confined or (run_home is not None and sandbox != "bwrap"):
            tmp.mkdir(exist_ok=True)
            env.setdefault("TMPDIR", str(tmp))
            run_tmp = (tmp,)
        # Contained as a run is (harness/containment): its own pid namespace and cgroup,
        # separated where a run would be, and audited over the batch's protected set.
        # Made before the allow-list, which grants the check's own cgroup.
        containment = RunContainment.start(
            cgroup.process_batch(),
            "preflight",
            separate=root if sandbox != "bwrap" and confined else None,
            host_network=agent.network is True,
        )
        try:
            policy = agent_policy(
                agent_paths=read_only,
                workspace=workspace,
                home=home,
                tmp=tmp,
                writable_dirs=state_dirs.values(),
                writable_files=(channel,),
                home_spec=run_home.launcher_spec() if run_home is not None else None,
                confine=confined,
                own_cgroup=containment.cgroup.directory if containment.cgroup is not None else None,
            )
            command = launcher_argv(policy, command)
            if sandbox == "bwrap":
                hand_over(identity, workspace, channel, *state_dirs.values(), *run_tmp)
                if run_home is not None:
                    hand_over(identity, run_home.upper.parent)
                spec = SandboxSpec(
                    workspace=workspace,
                    home=home,
                    home_layers=run_home.upper.parent if run_home is not None else None,
                    writable_files=(channel,),
                    writable_dirs=(*state_dirs.values(), *run_tmp),
                    read_only=read_only,
                    # The check runs no model call: only the host network needs asking for.
                    network=agent.network is True,
                )
                command = bwrap_argv(spec, command, bwrap=bwrap, identity=identity)
            session = RunSession(
                watch.settings if watch is not None else AuditSettings(),
                containment,
                root,
                protected=watch.protected(root, home, read_only) if watch is not None else None,
            )
        except BaseException:
            # No session took the check's cgroup over yet.
            if containment.cgroup is not None:
                containment.cgroup.remove()
            raise
        try:
            wrapped = session.command(command)
            finished = run_process(
                wrapped,
                cwd=workspace,
                env=env,
                timeout_s=CHECK_TIMEOUT_S,
                stdout_file=root / "check.stdout",
                stderr_file=root / "check.stderr",
                trace_log=session.trace_log,
            )
            # Every process the check started dies here, daemonized or not.
            session.end()
            summary = session.summary(workspace) if watch is not None else None
            output = b""
            for name in ("check.stderr", "check.stdout"):
                with contextlib.suppress(OSError):
                    output += (root / name).read_bytes()[-4 * OUTPUT_TAIL_CHARS :]
        finally:
            session.remove()
    if finished.start_error is not None:
        raise PreflightError(
            f"{where}: {_shown(command, agent)} could not start{_inside(sandbox)}: "
            f"{finished.start_error}"
        )
    if finished.timed_out:
        raise PreflightError(
            f"{where}: {_shown(command, agent)} did not finish within "
            f"{CHECK_TIMEOUT_S:g}s{_inside(sandbox)}"
        )
    if summary is not None:
        evidence = audit_evidence(summary)
        if evidence is not None:
            raise PreflightError(
                f"{where}: check {_shown(command, agent)} {evidence}; a pre-flight check "
                "is audited as a run is, and may read nothing a run may not"
            )
    if finished.returncode != 0:
        text = output.decode("utf-8", errors="replace").strip()
        what = (
            f"program {str(program)!r} is not visible or not executable"
            if not agent.check_argv
            else f"check {list(agent.check_argv)} exited {finished.returncode}"
        )
        if confined:
            what += " under the Landlock allow-list"
        raise PreflightError(
            f"{where}: {what}{_inside(sandbox)}"
            + (f": {text[-OUTPUT_TAIL_CHARS:]}" if text else "")
            + (
                "; under --sandbox bwrap only system directories, the interpreter, the "
                "agent's directory and its program's tree are visible"
                if sandbox == "bwrap"
                else ""
            )
        )


# Named in a refusal: the first few accesses the check's audit charged it with.
EVIDENCE_SHOWN = 5


def audit_evidence(summary: Mapping[str, object]) -> str | None:
    """What the check's audit charged it with (an incomplete audit, protected material
    opened, metadata changed outside its trees), as the refusal's evidence; None when
    nothing."""
    if summary.get("complete") is False:
        # Fail closed: a check whose audit is not whole (a flooded queue, a cut log)
        # may have read what the audit lost.
        return (
            f"left its audit incomplete ({summary.get('incomplete_reason')}): a check "
            "must be seen whole"
        )
    accesses = summary.get("accesses")
    listed = accesses if isinstance(accesses, list) else []
    count = summary.get("protected_accesses")
    unattributed = summary.get("metadata_unattributed")
    if not listed and not count and not unattributed:
        return None
    # The opens of content first: a listing or lookup is the weaker evidence.
    ordered = sorted(
        (a for a in listed if isinstance(a, dict)),
        key=lambda a: a.get("operation") in ("listed", "looked up"),
    )
    shown = []
    for access in ordered[:EVIDENCE_SHOWN]:
        if isinstance(access, dict):
            shown.append(
                f"{access.get('operation')} {access.get('path')} "
                f"({access.get('category')}, {access.get('result')})"
            )
    what = f"touched protected material ({count or len(listed)} access(es)"
    if unattributed:
        what += f", {unattributed} metadata change(s) no run can be charged with"
    what += ")"
    return what + (": " + "; ".join(shown) if shown else "")


def _inside(sandbox: str) -> str:
    return " inside the bwrap sandbox" if sandbox == "bwrap" else ""


def _shown(command: list[str], agent: AgentConfig) -> str:
    return repr(list(agent.check_argv) if agent.check_argv else command[-1:])


def _check_endpoint(
    agent: AgentConfig, parent: Mapping[str, str], where: str, sandbox: str, *, bridged: bool
) -> None:
    if agent.endpoint_env is None:
        return
    url = agent.endpoint(parent)
    if url is None:
        if any("{endpoint}" in arg for arg in agent.argv) or agent.network == "model":
            raise PreflightError(
                f"{where}: the model endpoint variable {agent.endpoint_env} is not set; "
                "set it to the endpoint's URL (e.g. http://127.0.0.1:8000/v1)"
            )
        return  # the CLI's own default endpoint; nothing configured to check
    if agent.network == "model" and bridged:
        try:
            model_endpoint(url)
        except ModelNetworkError as exc:
            raise PreflightError(f"{where}: {exc}") from None
    problem = endpoint_problem(url)
    if problem is not None:
        raise PreflightError(f"{where}: model endpoint {url} ({agent.endpoint_env}) {problem}")


def endpoint_problem(url: str) -> str | None:
    """Why ``url`` is not an answering HTTP endpoint, or None when it answers."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return "is not an http(s) URL with a host"
    # Environment proxies are not used: the agent reaches this URL directly.
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(url, timeout=ENDPOINT_TIMEOUT_S):
            return None
    except urllib.error.HTTPError:
        return None  # it answered (404 for a bare base URL is normal)
    except (urllib.error.URLError, OSError) as exc:
        reason = getattr(exc, "reason", exc)
        return f"does not answer ({reason})"
