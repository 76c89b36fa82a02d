"""Running a task's verification checks in the grading box, after the agent has ended.

Each check yields one report entry ``{name, role, severity, passed, reason}``. ``passed``
is ``None`` when the check could not be evaluated (its command timed out or could not
start): an errored check is no evidence either way, and scoring leaves it out rather
than reading it as a failure or a pass.

Checks are the operator's, but everything they read was left by the agent, so nothing
the agent left may take part in grading (``harness/grading.py`` builds the box):

- every check reads a copy of the workspace with the task's own grading files over it,
  never the workspace itself. File checks on deliverables read that copy before any
  command runs; each command check runs in a fresh copy of its own; file checks on a
  declared grader output read what the command checks wrote;
- a command check runs in a sandbox of its own (:class:`CheckSandbox`): its copy and
  its report directory the only writable binds, an empty private home, no network,
  the interpreter's and system directories read-only, as the unprivileged agent uid
  when the harness is root, with a clean environment and Python isolated
  (``PYTHONSAFEPATH``: ``python3 -m json.tool`` never imports a ``json/`` the agent
  left). Where no sandbox is available the command runs on the host with the same
  environment, and the record says ``checks_sandboxed: false``;
- a pytest check passes only on exit code 0 *and* its own JUnit report showing the
  grading files' tests ran and passed (``harness/junit.py``);
- a file check never follows a symlink out of its root (the copy, or the home);
- a check on a file in the agent home (``~/notes.md``) passes only if this run created
  the file or changed its bytes (:class:`HomeFiles`, taken just before the agent
  starts; never its times): a file an earlier run left behind is no evidence of this
  run's work.

Reading is bounded (size) and regexes are RE2 (linear time).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import hashlib
import logging
import os
import stat
import subprocess
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import re2

from benchguard.harness import box_disk, box_seccomp, grading
from benchguard.harness.beneath import open_beneath
from benchguard.harness.box_shortage import infrastructure_shortage
from benchguard.harness.check_programs import GradingPaths, PytestRun, normalise, pytest_run
from benchguard.harness.disk_budget import DEFAULT_DISK_BUDGET
from benchguard.harness.glob_names import option_names
from benchguard.harness.grader_privacy import verifier_argv
from benchguard.harness.grading import CHECK_PATH, Box, BoxError, CheckRun
from benchguard.harness.harness_namespaces import SandboxGate
from benchguard.harness.identity import AgentIdentity, hand_over
from benchguard.harness.junit import expected_tests
from benchguard.harness.process import kill_group
from benchguard.harness.result_stream import FD_VARIABLE, StreamReader, stream_verdict
from benchguard.harness.sandbox import SandboxSpec, bwrap_argv
from benchguard.harness.tasks import CommandCheck, FileCheck, Task, quiet_re2_options
from benchguard.record.evidence import GLOB_OPTION_NAME, GRADER_REPORT_FORGED, GRADING_LINK

FORGED_EVENT = GRADER_REPORT_FORGED

__all__ = ["CHECK_PATH", "CheckSandbox", "Grading", "HomeFiles", "grade", "run_checks"]

# The lowest descriptor number handed to a check (see harness_namespaces.WRAPPER).
MIN_PASSED_FD = 10
REACHES_GRADING = "reaches a grading file of the task"
# A deliverable larger than this is judged on its first MAX_READ_BYTES only.
MAX_READ_BYTES = 1024 * 1024

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class CheckSandbox:
    """How command checks are isolated: bubblewrap's path, and the uid to drop to."""

    bwrap: str = "bwrap"
    identity: AgentIdentity | None = None


# The record's list of the ~/ checks the home passed before the run (HomeFiles).
HOME_PASSED_BEFORE_KEY = "home_passed_before"
# (size, SHA-256) of a regular file; None when there is none.
Fingerprint = tuple[int, str] | None


@dataclass(frozen=True)
class HomeFiles:
    """The agent-home files a task's checks name, as they were before the run, and the
    checks the home already passed then."""

    before: dict[str, Fingerprint] = field(default_factory=dict)
    # ``"<check> (<file>)"`` of every ~/ check the home passed before the run
    # (home_checks_passing_before): written on the record and its row, so a reader
    # sees that such a check could only count what the run changed.
    passing_before: tuple[str, ...] = ()

    @classmethod
    def snapshot(cls, task: Task, home: Path) -> HomeFiles:
        names = [c.file for c in task.verification if isinstance(c, FileCheck)]
        before = {name: _fingerprint(home / name[2:]) for name in names if name.startswith("~/")}
        return cls(before, tuple(home_checks_passing_before(task, home)))

    def unchanged(self, name: str, home: Path) -> bool:
        """The file existed before the run and holds the same bytes (size and SHA-256).

        Contents only, never times, in either home mode: ``os.utime`` (or ``touch``) on
        a file an earlier run left opens nothing and reads nothing, so neither the
        inventory nor the audit sees it, and a new modification time is no work (red
        team 7, touch-leftover). The price, in a persistent home: a run that writes the
        very bytes already there earns nothing for that check; the home passing it
        before the run is on the record, the row and the manifest."""
        before = self.before.get(name)
        if before is None:
            return False
        return _fingerprint(home / name[2:]) == before


def home_checks_passing_before(task: Task, home: Path) -> list[str]:
    """The ``~/`` file checks of ``task`` the home already passes before any agent runs
    (``"<check> (<file>)"``): a run could earn them without doing the work, and with a
    fresh home a run that writes the same bytes again earns nothing for them."""
    return [
        f"{check.name} ({check.file})"
        for check in task.verification
        if isinstance(check, FileCheck)
        and check.file.startswith("~/")
        and check.exists is None
        and _run_file(check, workspace=home, home=home)["passed"]
    ]


def _fingerprint(path: Path) -> Fingerprint:
    """(size, SHA-256) of a regular file reached without symlinks; else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        info = os.fstat(handle.fileno())
        if not stat.S_ISREG(info.st_mode):
            return None
        digest = hashlib.sha256()
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    return (info.st_size, digest.hexdigest())


@dataclass(frozen=True)
class Grading:
    """What grading one run gave: the report, in check order, and the hook files the
    agent left in its workspace (never loaded; listed for review)."""

    report: list[dict[str, Any]]
    hook_files: list[str] = field(default_factory=list)
    # Tampering events grading itself saw (a check whose results were forged from
    # inside the test process, harness/result_stream.py): ``{path, what, detail}``.
    tampering: list[dict[str, str]] = field(default_factory=list)
    # Workspace entries another process changed after the run's processes were all
    # dead: not graded, recorded (not the run's doing).
    foreign: list[str] = field(default_factory=list)
    # Set when the box could not be built because the machine ran short (not the
    # run's doing, harness.box_shortage): no check was evaluated; the reason.
    infrastructure_error: str | None = None


def run_checks(
    task: Task,
    *,
    workspace: Path,
    home: Path,
    sandbox: CheckSandbox | None = None,
    home_files: HomeFiles | None = None,
) -> list[dict[str, Any]]:
    """Every check of ``task``, in file order; never raises for a failing check.

    ``sandbox``: run command checks in bubblewrap (``None``: on the host, isolated by
    environment only). ``home_files``: the pre-run snapshot for ``~/`` file checks.
    """
    return grade(
        task, workspace=workspace, home=home, sandbox=sandbox, home_files=home_files
    ).report


def grade(
    task: Task,
    *,
    workspace: Path,
    home: Path,
    sandbox: CheckSandbox | None = None,
    home_files: HomeFiles | None = None,
    exclude: Sequence[str] = (),
    delivered: Mapping[str, str | None] | None = None,
    own_trees: Sequence[Path] = (),
    disk_budget: int | None = DEFAULT_DISK_BUDGET,
) -> Grading:
    """Build the grading box from ``workspace`` and run every check of ``task`` there;
    ``exclude``: workspace files never copied into it (protected files, hard-linked).
    ``own_trees``: everything the run could write (its scratch, a persistent home; the
    workspace when empty), to tell a full filesystem the run filled from one a
    neighbour did. ``disk_budget``: what each check may write beyond its copy of the
    workspace (harness.box_disk; None: unbounded)."""
    hooks = grading.hook_files(workspace)
    try:
        box = grading.build_box(
            workspace,
            task_dir=task.task_dir(),
            grading_files=task.grading_files,
            grader_outputs=task.grader_outputs,
            exclude=exclude,
            delivered=delivered,
        )
    except (BoxError, OSError, MemoryError) as exc:
        box_dir = Path(tempfile.gettempdir())
        shortage = infrastructure_shortage(exc, tuple(own_trees) or (workspace,), box_dir)
        if shortage is not None:
            # The machine's failure, not the run's: no check is evaluated (None), so
            # no safeguard reads as failed; the run is errored for it (harness.job).
            unevaluated = f"not evaluated: {shortage}"
            report = [_entry(check, None, unevaluated) for check in task.verification]
            return Grading(report, hooks, infrastructure_error=shortage)
        # Fail closed: a workspace the box cannot hold earns nothing.
        reason = f"the grading box could not be built: {exc}"
        return Grading([_entry(check, False, reason) for check in task.verification], hooks)
    try:
        # An agent link the box removed because it reached a grading file is evidence.
        forged: list[dict[str, str]] = [
            {"path": path, "what": GRADING_LINK, "detail": "removed from the grading box"}
            for path in sorted(box.grading_links)
        ]
        report = _run_in_box(task, box, home, sandbox, home_files, forged, disk_budget)
        return Grading(report, hooks, forged, sorted(box.foreign))
    finally:
        problems = box.remove()
        if problems:
            log.warning("grading box %s not removed: %s", box.root, "; ".join(problems))


def _run_in_box(
    task: Task,
    box: Box,
    home: Path,
    sandbox: CheckSandbox | None,
    home_files: HomeFiles | None,
    forged: list[dict[str, str]],
    disk_budget: int | None,
) -> list[dict[str, Any]]:
    outputs = GradingPaths(task.grader_outputs)
    entries: dict[int, dict[str, Any]] = {}
    checks = list(enumerate(task.verification))
    # Deliverables are judged as copied, before anything runs in the box.
    for index, check in checks:
        if isinstance(check, FileCheck) and not outputs.covers(check.file):
            entries[index] = _box_file_entry(check, box, home, home_files, forged)
    for index, check in checks:
        if isinstance(check, CommandCheck):
            run = grading.new_check_run(box, index, disk_budget)
            try:
                dashed = option_names(check.command, run.work)
                if dashed:
                    # A name the agent chose would reach the check as an option: not run.
                    entries[index] = _glob_refusal(check, dashed, forged)
                    continue
                entries[index] = _run_command(check, run, box, sandbox, forged, task.grader_outputs)
                grading.harvest_outputs(run, box, task.grader_outputs)
            finally:
                problem = run.release()
                if problem is not None:
                    log.warning("grading box: %s", problem)
    # What the grader wrote, once every command has run.
    for index, check in checks:
        if isinstance(check, FileCheck) and outputs.covers(check.file):
            entries[index] = _file_entry(check, box.outputs, home, home_files)
    return [entries[index] for index, _ in checks]


def _glob_refusal(
    check: CommandCheck, dashed: list[str], forged: list[dict[str, str]]
) -> dict[str, Any]:
    listed = {event["path"] for event in forged if event["what"] == GLOB_OPTION_NAME}
    detail = f"check {check.name!r}: its shell glob would pass this name as an option"
    forged.extend(
        {"path": name, "what": GLOB_OPTION_NAME, "detail": detail}
        for name in dashed
        if name not in listed
    )
    return _entry(
        check,
        False,
        f"the workspace entry {dashed[0]!r} would become an option of this check's shell "
        "glob (not run)",
    )


def _box_file_entry(
    check: FileCheck,
    box: Box,
    home: Path,
    home_files: HomeFiles | None,
    events: list[dict[str, str]],
) -> dict[str, Any]:
    name = normalise(check.file)
    on_grading = name is not None and GradingPaths(box.grading_files).covers(name)
    forbidden = frozenset() if on_grading else box.grading_identities
    entry = _file_entry(check, box.pristine, home, home_files, forbidden)
    if entry["reason"].endswith(REACHES_GRADING) and name not in box.grading_links:
        # Past the box's own link removal: still a grading file read as a deliverable.
        events.append({"path": check.file, "what": GRADING_LINK, "detail": REACHES_GRADING})
    if not check.file.startswith("~/") and name is not None and not entry["passed"]:
        if name in box.grading_links:
            return _entry(
                check, False, f"{check.file} is a link to a grading file of the task (removed)"
            )
        if name in box.foreign:
            return _entry(
                check,
                False,
                f"{check.file} was changed by another process after this run ended (not graded)",
            )
        if name in box.excluded:
            return _entry(
                check, False, f"{check.file} is a hard link to a protected file (not copied)"
            )
        if name in box.dangling:
            return _entry(check, False, f"{check.file} is a link to nothing (not copied)")
        if name in box.links_out:
            return _entry(check, False, f"{check.file} points outside its root (not copied)")
        if name in box.special:
            return _entry(check, False, f"{check.file} is not a regular file (not copied)")
        if name in box.bytecode:
            return _entry(check, False, f"{check.file} is compiled bytecode (not copied)")
    return entry


def _file_entry(
    check: FileCheck,
    root: Path,
    home: Path,
    home_files: HomeFiles | None,
    forbidden: frozenset[tuple[int, int]] = frozenset(),
) -> dict[str, Any]:
    entry = _run_file(check, workspace=root, home=home, forbidden=forbidden)
    if entry["passed"] and home_files is not None and home_files.unchanged(check.file, home):
        return _entry(check, False, f"{check.file} is unchanged since before this run")
    return entry


def _entry(check: CommandCheck | FileCheck, passed: bool | None, reason: str) -> dict[str, Any]:
    return {
        "name": check.name,
        "role": check.role,
        "severity": check.severity,
        "passed": passed,
        "reason": reason,
    }


def check_environment(home: Path) -> dict[str, str]:
    """A clean environment: nothing of the harness's, Python isolated from the cwd."""
    return grading.check_environment(home)


def _run_command(
    check: CommandCheck,
    run: CheckRun,
    box: Box,
    sandbox: CheckSandbox | None,
    forged: list[dict[str, str]] | None = None,
    grader_outputs: Sequence[str] = (),
) -> dict[str, Any]:
    env = grading.check_environment(run.home)
    # A Python verifier starts non-dumpable: out of the deliverable's reach.
    argv = verifier_argv(check.command)
    pytest = pytest_run(check.command)
    read_only: tuple[Path, ...] = ()
    gate: SandboxGate | None = None
    seccomp_fds: tuple[int, ...] = ()
    if pytest is not None:
        argv = grading.pytest_argv(pytest, run)
        env.update(grading.pytest_environment(run))
        read_only = grading.pytest_paths()
    if sandbox is not None:
        identity = sandbox.identity
        hand_over(identity, run.work, run.home, run.reports)
        spec = SandboxSpec(
            workspace=run.work,
            home=run.home,
            writable_dirs=(run.reports,),
            read_only=tuple(p for p in read_only if p.exists()),
            read_only_inside=grading.read_only_grading(run, box, grader_outputs),
        )
        if os.geteuid() == 0:
            # Root: fanotify observers may be watching other runs; the box's namespace
            # is registered as the harness's before the check runs in it.
            gate = SandboxGate.make(run.root)
        # The agent's seccomp filter, installed by bubblewrap (harness.box_seccomp).
        seccomp_fds = (box_seccomp.program_fd(),)
        argv = bwrap_argv(
            spec,
            argv,
            bwrap=sandbox.bwrap,
            identity=identity,
            gate=gate,
            seccomp_fd=seccomp_fds[0],
        )
    else:
        argv = box_seccomp.wrapped(argv)
    try:
        entry = _run_gated(check, argv, env, run, box, gate, pytest, forged, seccomp_fds)
        note = box_disk.full_note(run.disk) if entry["passed"] is not True else None
        if note is not None:
            entry["reason"] = f"{entry['reason']}; {note}"
        return entry
    finally:
        for fd in seccomp_fds:
            with contextlib.suppress(OSError):
                os.close(fd)
        if gate is not None:
            gate.close()


def _run_gated(
    check: CommandCheck,
    argv: list[str],
    env: dict[str, str],
    run: CheckRun,
    box: Box,
    gate: SandboxGate | None,
    pytest: PytestRun | None,
    forged: list[dict[str, str]] | None,
    keep_fds: tuple[int, ...] = (),
) -> dict[str, Any]:
    """``keep_fds``: descriptors the command inherits too, closed by the caller."""
    reader: StreamReader | None = None
    pass_fds: tuple[int, ...] = ()
    if pytest is not None:
        # The plugin's result stream: the read end stays here, the write end goes to
        # pytest only (this process closes its copy once pytest has started).
        read_end, write_end = os.pipe2(os.O_CLOEXEC)
        if write_end < MIN_PASSED_FD:
            # Above the descriptors the sandbox gate's wrapper opens (8 and 9).
            low, write_end = write_end, fcntl.fcntl(write_end, fcntl.F_DUPFD_CLOEXEC, MIN_PASSED_FD)
            os.close(low)
        reader = StreamReader(read_end)
        env[FD_VARIABLE] = str(write_end)
        pass_fds = (write_end,)
    try:
        try:
            process = subprocess.Popen(
                argv,
                cwd=run.work,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                start_new_session=True,
                pass_fds=(*pass_fds, *keep_fds),
            )
        finally:
            for fd in pass_fds:
                os.close(fd)
    except OSError as exc:
        if reader is not None:
            reader.finish(0)
        return _entry(check, None, f"command could not start: {exc.strerror or exc}")
    if gate is not None:
        gate.admit_box(_child_pid)
    if reader is not None:
        reader.start()
    try:
        code = box_disk.wait(process, check.timeout, run.disk)
    except subprocess.TimeoutExpired:
        kill_group(process)
        if reader is not None:
            reader.finish(0)
        return _entry(check, None, f"command timed out after {check.timeout:g}s")
    except box_disk.OverBudget as exc:
        # The thing under test filled its corner: its failure, never the grader's.
        kill_group(process)
        if reader is not None:
            reader.finish(0)
        return _entry(check, False, str(exc))
    if pytest is None or reader is None:
        if code == check.exit_code:
            return _entry(check, True, f"exit code {code} as expected")
        return _entry(check, False, f"exit code {code}, expected {check.exit_code}")
    # Whatever the tests left running would hold the stream open: end it, then read
    # the stream to its end (bounded in time).
    kill_group(process)
    reader.finish()
    # Expected tests come from the untouched copy: the check's own copy may have been
    # rewritten by the code it ran.
    expected = expected_tests(box.pristine, pytest.operands)
    verdict = stream_verdict(reader, exit_code=code, junit=run.junit, expected=expected)
    if verdict.forged is not None and forged is not None:
        forged.append({"path": check.name, "what": FORGED_EVENT, "detail": verdict.forged})
    return _entry(check, verdict.passed, verdict.reason)


def _child_pid(report: dict[str, object]) -> list[int]:
    """The box's first process, as bwrap reported it (the harness's pid namespace)."""
    pid = report.get("child-pid")
    return [pid] if isinstance(pid, int) and pid > 0 else []


def _run_file(
    check: FileCheck,
    *,
    workspace: Path,
    home: Path,
    forbidden: frozenset[tuple[int, int]] = frozenset(),
) -> dict[str, Any]:
    """One file check, its file opened by the kernel beneath its root (the copy, or the
    home): a link that would leave the root is refused whatever its spelling, and a
    file whose (device, inode) is in ``forbidden`` (a grading file of the box) is not
    the deliverable, whatever name reached it."""
    relative, root = (
        (check.file[2:], home) if check.file.startswith("~/") else (check.file, workspace)
    )
    clean = normalise(relative)
    if clean is None:
        return _entry(check, False, f"{check.file} points outside its root")
    handle = None
    try:
        fd = open_beneath(root, clean, links=True)
    except OSError as exc:
        if exc.errno == errno.EXDEV:
            # An agent-made symlink must not let a check judge a file outside its run.
            return _entry(check, False, f"{check.file} points outside its root")
    else:
        info = os.fstat(fd)
        if stat.S_ISREG(info.st_mode):
            handle = os.fdopen(fd, "rb")
        else:
            os.close(fd)
    with handle if handle is not None else contextlib.nullcontext():
        if handle is not None and (info.st_dev, info.st_ino) in forbidden:
            return _entry(check, False, f"{check.file} {REACHES_GRADING}")
        exists = handle is not None
        if check.exists is not None:
            if exists == check.exists:
                return _entry(check, True, f"{check.file} {'exists' if exists else 'is absent'}")
            return _entry(check, False, f"{check.file} {'exists' if exists else 'does not exist'}")
        if handle is None:
            return _entry(check, False, f"{check.file} does not exist")
        text = handle.read(MAX_READ_BYTES).decode("utf-8", errors="replace")
    if check.contains is not None:
        found = check.contains in text
        return _entry(check, found, f"{check.file} {'contains' if found else 'lacks'} the text")
    if check.matches is None:
        # The task model requires exactly one assertion; a check built around it is no
        # evidence either way, so it reads as errored rather than passed or failed.
        return _entry(check, None, f"{check.file}: the check names no assertion to evaluate")
    pattern = re2.compile(check.matches, options=quiet_re2_options())
    found = pattern.search(text) is not None
    return _entry(
        check, found, f"{check.file} {'matches' if found else 'does not match'} the pattern"
    )
