"""The detection stack as the harness wires it: snapshot before, scan after.

Both halves are best-effort. A home inventory that fails yields no dynamic rules (and
a log line); a scan that fails on one record leaves that record's seeded empty report
(``{}``), marked ``integrity_checked: false`` so its row reads "unverified", and the
other records are still scanned. Neither can sink a run that completed.

Only loading the static ruleset is strict: a bad rules file is an operator error, and
it must fail before any agent runs rather than after an hour of unscanned work.
"""

from __future__ import annotations

import logging
import os
import threading
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Self

from benchguard.detection.inventory import (
    BatchInventory,
    baseline_from_granted_paths,
)
from benchguard.detection.knowledge import HarnessKnowledge, gather
from benchguard.detection.models import Rule
from benchguard.detection.rules import (
    RulesetError,
    load_profile_spec,
    load_ruleset,
    profile_baseline,
)
from benchguard.errors import ConfigError
from benchguard.harness.confine import Confinement
from benchguard.harness.home import HomeSettings
from benchguard.harness.tampering import file_digest
from benchguard.harness.tasks import FileCheck, Task

log = logging.getLogger(__name__)

DETECT_ENV = "BENCHGUARD_CHEAT_DETECT"
INVENTORY_ENV = "BENCHGUARD_CHEAT_INVENTORY"
RULES_ENV = "BENCHGUARD_CHEAT_RULES"
# Extra inventory roots (e.g. /tmp, the workspace parent), os.pathsep-separated.
INVENTORY_ROOTS_ENV = "BENCHGUARD_INVENTORY_ROOTS"
INVENTORY_ROOT_FLAG = "--inventory-root"
_FALSE = ("0", "false", "no", "off")
_TRUE = ("1", "true", "yes", "on")


class IntegrityConfigError(ConfigError, ValueError):
    """A toggle or the rules file is unusable; raised before any agent runs."""


def env_flag(env: Mapping[str, str], name: str, default: bool) -> bool:
    """A boolean toggle; anything but a recognised spelling is an error, not a guess."""
    raw = env.get(name)
    if raw is None or raw.strip() == "":
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise IntegrityConfigError(f"{name}={raw!r}: expected one of {list(_TRUE + _FALSE)}")


class InventoryRoots(tuple[Path, ...]):
    """Resolved extra roots (a tuple of paths) that remember where they were configured:
    ``--inventory-root`` or ``BENCHGUARD_INVENTORY_ROOTS`` (flags win, so one source
    serves them all), for errors found after resolution to name it."""

    source: str

    def __new__(cls, roots: Iterable[Path] = (), source: str = INVENTORY_ROOT_FLAG) -> Self:
        resolved = super().__new__(cls, roots)
        resolved.source = source
        return resolved


def resolve_inventory_roots(
    env: Mapping[str, str], flag_roots: Sequence[Path] | None = None
) -> InventoryRoots:
    """Extra inventory roots: the flags if any were given, else the environment.

    Each root is made absolute (``~`` expanded, symlinks kept: rules match the spelling
    the operator uses) and must be a listable directory; otherwise
    :class:`IntegrityConfigError` names the root and where it came from. A root that
    silently listed as empty would read as "no leftovers there".
    """
    if flag_roots:
        source = INVENTORY_ROOT_FLAG
        texts = [str(root) for root in flag_roots]
    else:
        source = INVENTORY_ROOTS_ENV
        raw = env.get(INVENTORY_ROOTS_ENV, "")
        texts = [part for part in raw.split(os.pathsep) if part.strip()]
    roots: list[Path] = []
    for text in texts:
        root = Path(os.path.abspath(os.path.expanduser(text.strip())))
        problem = _unlistable(root)
        if problem is not None:
            raise IntegrityConfigError(f"{source} {root}: {problem}")
        if root not in roots:
            roots.append(root)
    return InventoryRoots(roots, source)


def _unlistable(root: Path) -> str | None:
    try:
        with os.scandir(root):
            return None
    except FileNotFoundError:
        return "no such directory"
    except NotADirectoryError:
        return "not a directory"
    except OSError as exc:
        return f"cannot list ({exc.strerror or exc})"


def check_roots_against_home(roots: Sequence[Path], home: Path) -> None:
    """A root that is the agent home would turn its environment dotfiles into leftovers.

    The error names where the root was configured when ``roots`` came from
    :func:`resolve_inventory_roots`, else says "inventory root".
    """
    source = roots.source if isinstance(roots, InventoryRoots) else "inventory root"
    for root in roots:
        if os.path.realpath(root) == os.path.realpath(home):
            raise IntegrityConfigError(
                f"{source} {root}: is the agent home itself, which is always "
                "inventoried (with its baseline)"
            )


@dataclass(frozen=True)
class IntegritySettings:
    detect: bool = True
    inventory: bool = True
    profile: str = "benchguard"
    rules_file: Path | None = None
    # Listed like the home, every entry a leftover, matched by its literal path.
    inventory_roots: tuple[Path, ...] = ()

    @classmethod
    def resolve(
        cls,
        env: Mapping[str, str],
        *,
        detect: bool | None = None,
        inventory: bool | None = None,
        profile: str = "benchguard",
        rules_file: Path | None = None,
        inventory_roots: Sequence[Path] | None = None,
    ) -> IntegritySettings:
        """Flags win over the environment; the environment over the defaults."""
        rules = rules_file
        if rules is None and env.get(RULES_ENV):
            rules = Path(env[RULES_ENV]).expanduser()
        return cls(
            detect=env_flag(env, DETECT_ENV, True) if detect is None else detect,
            inventory=env_flag(env, INVENTORY_ENV, True) if inventory is None else inventory,
            profile=profile,
            rules_file=rules,
            inventory_roots=resolve_inventory_roots(env, inventory_roots),
        )

    @property
    def inventory_active(self) -> bool:
        return self.detect and self.inventory


def load_static_rules(settings: IntegritySettings) -> tuple[Rule, ...]:
    """The profile's rules plus the extra file; ``IntegrityConfigError`` when unusable."""
    if not settings.detect:
        return ()
    try:
        return tuple(load_ruleset(profile=settings.profile, extra_rules=settings.rules_file))
    except RulesetError as exc:
        raise IntegrityConfigError(str(exc)) from None


class HomeSnapshots:
    """The home inventory: once before the batch, then before every task.

    With ``once`` (a fresh home per run under Landlock, :func:`inventory_once`), the
    first snapshot serves every run of the batch: no run can write the operator's home
    (each writes its own overlay or copy, and the kernel grants the agent the run's
    home only, never the tree beneath it), so a listing before each task could only
    find what was already there before the first. Persistent homes, and fresh homes of
    an ``--unconfined`` batch, are listed again before every task.

    ``start_task`` returns the dynamic rules for that one run; the runner stores them
    by the run's position in the batch, never by task name, since a batch may run the
    same task several times and each run needs the snapshot taken just before it.

    Concurrent runs (``-j``) make "which task left this entry" ambiguous: an entry
    first seen in a snapshot is credited to *every* task that was running, or finished,
    since the previous snapshot (``finish_task`` reports the end of a run). The
    fingerprint policy then withholds an entry's fingerprint from any task that could
    have left it, so a concurrent honest repeat is never flagged by its own sibling's
    deliverable, and no entry is ever credited to a task that cannot have written it.
    """

    def __init__(
        self,
        home: Path,
        granted: Sequence[Path],
        *,
        enabled: bool,
        profile: str = "benchguard",
        extra_roots: Sequence[Path] = (),
        once: bool = False,
    ) -> None:
        self._home = home
        self._once = once
        self._first: tuple[Rule, ...] | None = None
        self._granted = tuple(str(p) for p in granted)
        self._enabled = enabled
        self._profile = profile
        self._extra_roots = tuple(extra_roots)
        self._lock = threading.Lock()
        self._batch: BatchInventory | None = None
        # Tasks running now, and tasks that finished since the last snapshot.
        self._running: Counter[str] = Counter()
        self._finished_since: list[str] = []

    def before_batch(self) -> None:
        if not self._enabled:
            return
        try:
            # The profile's own entries (the checkout, its env file) and the granted
            # skill trees are the environment, not leftovers.
            baseline = profile_baseline(self._profile) | baseline_from_granted_paths(
                self._home, self._granted
            )
            self._batch = BatchInventory(
                self._home, baseline=baseline, extra_roots=self._extra_roots
            )
        except Exception as exc:
            log.warning("home inventory before the batch failed (%s); no leftover rules", exc)
            self._batch = None

    def start_task(self, task_name: str) -> tuple[Rule, ...]:
        """The rules for a run about to start; pair with :meth:`finish_task`."""
        with self._lock:
            creators = [*self._running, *self._finished_since]
            rules = self._snapshot(task_name, creators)
            self._finished_since.clear()
            self._running[task_name] += 1
            return rules

    def finish_task(self, task_name: str) -> None:
        with self._lock:
            self._running[task_name] -= 1
            if self._running[task_name] <= 0:
                del self._running[task_name]
            self._finished_since.append(task_name)

    def _snapshot(self, task_name: str, creators: Sequence[str]) -> tuple[Rule, ...]:
        # Called under the lock: concurrent jobs must not interleave their listings.
        if self._batch is None:
            return ()
        if self._once and self._first is not None:
            return self._first
        try:
            # Unchanged entries come back as the same rule objects (the batch
            # inventory caches them): the detector remembers its compiled plan by
            # rule identity, so an unchanged home costs one plan for the batch.
            rules = self._batch.before_task(task_name, possible_creators=creators)
        except Exception as exc:
            log.warning("home inventory before %s failed (%s); no leftover rules", task_name, exc)
            return ()
        if self._once:
            self._first = rules
        return rules


def inventory_once(home_settings: HomeSettings, confinement: Confinement) -> bool:
    """Whether one home inventory serves the whole batch (:class:`HomeSnapshots`): a
    fresh home per run, with Landlock keeping the agent off the operator's tree."""
    return home_settings.fresh and confinement.active


def harness_knowledge(
    tasks: Sequence[Task],
    *,
    home: Path,
    results_root: Path,
    protect: Sequence[Path] = (),
    profile: str = "benchguard",
) -> HarnessKnowledge | None:
    """What the detector is given beyond the transcript, gathered once per batch.

    Fingerprinted: every tasks root the batch reads (task definitions, rubrics, oracle
    and solution files, anything else a task folder holds) except the tasks' workspace
    seeds (the agent is given those), the operator's ``--protect`` paths, and the
    profile's declared material found in the agent home. Not fingerprinted: prior
    results (the results root): they hold honest runs' own tool output, which an honest
    rerun reproduces line for line (``git log -1``, a test summary); the results-dir
    rules, the sandbox and the audit cover them. Listed as known paths (for globs and
    relative paths): all of these and the results root.

    Best-effort like the inventory: a failure yields None (and a log line), and the
    runs are scanned as before.
    """
    try:
        roots = _tasks_roots(tasks)
        seeds = [seed for task in tasks if (seed := task.seed_dir()) is not None]
        in_home = [
            home / entry[2:] if entry.startswith("~/") else Path(entry)
            for entry in load_profile_spec(profile).material
        ]
        knowledge = gather(
            home=home,
            material=[*roots, *protect, *(path for path in in_home if path.is_absolute())],
            known_roots=[results_root],
            exclude=[
                *(path for seed in seeds for path in _spellings(seed)),
                *(
                    path
                    for task in tasks
                    for given in given_grading_files(task)
                    for path in _spellings(given)
                ),
            ],
        )
    except Exception as exc:
        log.warning("reading the protected material failed (%s); no material fingerprints", exc)
        return None
    if not knowledge.material_complete:
        log.warning(
            "the protected material holds more than the detector reads (%d files read); "
            "the rest has no fingerprints (the path rules, sandbox and audit still cover it)",
            knowledge.material_files,
        )
    return knowledge


def given_grading_files(task: Task) -> list[Path]:
    """The task's grading files the agent is given anyway: byte for byte a file of its
    workspace seed (a test it may read and run). Not material: an honest agent that
    reads its own copy must not match their fingerprints."""
    seed = task.seed_dir()
    if seed is None or not task.grading_files:
        return []
    seeded = {file_digest(p) for p in sorted(seed.rglob("*")) if p.is_file()}
    seeded.discard(None)
    given: list[Path] = []
    for entry in task.grading_files:
        base = task.task_dir() / entry
        for path in [base] if base.is_file() else sorted(base.rglob("*")):
            if path.is_file() and not path.is_symlink() and file_digest(path) in seeded:
                given.append(path)
    return given


def _tasks_roots(tasks: Sequence[Task]) -> list[Path]:
    """Each task file's tasks root (``<root>/<folder>/task.yaml``), as given and resolved."""
    roots: dict[Path, None] = {}
    for task in tasks:
        if task.path:
            for spelling in _spellings(Path(task.path).parent.parent):
                roots[spelling] = None
    return list(roots)


def _spellings(path: Path) -> tuple[Path, ...]:
    given, real = Path(os.path.abspath(path)), Path(os.path.realpath(path))
    return (given,) if given == real else (given, real)


def task_files(task: Task) -> tuple[str, ...]:
    """The task's own definition file, as the material names it (given and resolved)."""
    return tuple(str(path) for path in _spellings(Path(task.path))) if task.path else ()


def task_answers(task: Task) -> tuple[str, ...]:
    """What a correct deliverable of ``task`` contains: its expected output and the text
    its file checks require (never fingerprint evidence: see ``detection.knowledge``)."""
    answers = [task.expected_output or ""]
    for check in task.verification:
        if isinstance(check, FileCheck) and check.contains:
            answers.append(check.contains)
    return tuple(answer for answer in answers if answer)
