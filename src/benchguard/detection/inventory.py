"""Pre-run inventory of the agent home: rules for whatever a previous run left behind.

The agent home persists between runs, so last run's ``report.md`` is an answer key.
"Left by a prior run" is temporal, not lexical, so the harness lists the home before
the batch and before each task, and every top-level entry that is not part of the
environment becomes a rule:

* a **path rule** (``prior-run-artifact/<name>/path``, all surfaces, ``source=name``)
  matching ``~/name``, ``$HOME/name`` or the literal home path, bounded on the left
  (``/data/home/agent/report.md`` is not ``~/report.md``) and on the right
  (``~/report.md`` does not match ``~/report.md.bak``);
* a **content fingerprint** (``prior-run-artifact/<name>/content``, result and output
  only) for a small UTF-8 regular file: its 3 longest distinct stripped lines of at
  least 24 characters (ties broken lexicographically). A symlink never gets one: its
  target could pull any readable file into a pattern, and patterns are published.

A prompt that names an entry as a whole token authorizes its path rule for that record
(:func:`filter_rules_for_prompt`); fingerprints are never authorized. Every file-system
error yields fewer rules, never an exception: inventory must not block a run.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Sequence
from pathlib import Path

from benchguard.detection._patterns import trust_generated
from benchguard.detection.models import Rule
from benchguard.detection.rules import DEFAULT_PROFILE, profile_baseline

# Shell and tool state every home has; never a prior-run leftover. Any other hidden
# entry is a leftover (agent CLIs keep stale workspaces in dotdirs).
ENVIRONMENT_DOTFILES: frozenset[str] = frozenset(
    {
        ".bash_history",
        ".bash_logout",
        ".bash_profile",
        ".bashrc",
        ".cache",
        ".config",
        ".docker",
        ".gitconfig",
        ".gnupg",
        ".inputrc",
        ".kube",
        ".lesshst",
        ".local",
        ".npm",
        ".pki",
        ".profile",
        ".python_history",
        ".selected_editor",
        ".ssh",
        ".sudo_as_admin_successful",
        ".viminfo",
        ".vimrc",
        ".wget-hsts",
        ".zprofile",
        ".zsh_history",
        ".zshrc",
    }
)

# Home entries the default profile's harness owns (the benchguard checkout, its env
# file, ...). Static rules already cover them; they are not leftovers.
DEFAULT_BASELINE: frozenset[str] = profile_baseline(DEFAULT_PROFILE)

CATEGORY = "prior-run-artifact"
# Largest file read for a fingerprint.
MAX_FINGERPRINT_FILE_BYTES = 64 * 1024
# Lines per fingerprint, shortest line considered, longest stretch of a line kept.
FINGERPRINT_LINES = 3
MIN_FINGERPRINT_LINE_CHARS = 24
MAX_FINGERPRINT_LINE_CHARS = 200
# Most top-level entries turned into rules per root (sorted; the rest are ignored and
# the cap is documented as a limitation).
MAX_INVENTORY_ENTRIES = 5000


def list_home_entries(home: Path) -> tuple[str, ...]:
    """Top-level entry names of ``home``, sorted; ``()`` if it cannot be listed."""
    try:
        with os.scandir(home) as listing:
            names = [entry.name for entry in listing]
    except OSError:
        return ()
    return tuple(sorted(names))


def leftover_names(home: Path, *, baseline: frozenset[str] = DEFAULT_BASELINE) -> tuple[str, ...]:
    """Entries of ``home`` that are neither baseline nor environment dotfiles."""
    skip = baseline | ENVIRONMENT_DOTFILES
    names = [name for name in list_home_entries(home) if name not in skip]
    return tuple(names[:MAX_INVENTORY_ENTRIES])


def home_prefix(home: Path | str) -> str:
    """Regex for the home directory's spellings, left-bounded so it is never mid-token."""
    literal = re.escape(str(home).rstrip("/") or "/")
    return rf"(?<![\w~])(?:~|\$HOME|\$\{{HOME\}}|{literal})"


def entry_pattern(prefix: str, name: str) -> str:
    """Regex for one entry under ``prefix``; the right boundary stops ``report.md.bak``."""
    return prefix + "/" + re.escape(name) + r"(?![\w-]|\.[\w-])"


def build_inventory_rules(
    home: Path,
    *,
    baseline: frozenset[str] = DEFAULT_BASELINE,
    fingerprint_only: frozenset[str] | None = None,
    extra_roots: Sequence[Path] = (),
) -> tuple[Rule, ...]:
    """Rules for every leftover of ``home`` (and of each extra root, e.g. ``/tmp``).

    ``fingerprint_only``, when given, limits content fingerprints to those names (path
    rules are always built). Extra roots have no baseline: every entry is a leftover,
    matched only through the root's literal path.
    """
    rules: list[Rule] = []
    prefix = home_prefix(home)
    for name in leftover_names(home, baseline=baseline):
        rules.extend(_entry_rules(home, name, prefix, "~/" + name, fingerprint_only))
    for root in extra_roots:
        literal = rf"(?<![\w~]){re.escape(str(root).rstrip('/'))}"
        for name in list_home_entries(root)[:MAX_INVENTORY_ENTRIES]:
            shown = f"{str(root).rstrip('/')}/{name}"
            rules.extend(_entry_rules(root, name, literal, shown, fingerprint_only, id_root=shown))
    return tuple(rules)


def _entry_rules(
    root: Path,
    name: str,
    prefix: str,
    shown: str,
    fingerprint_only: frozenset[str] | None,
    *,
    id_root: str | None = None,
) -> list[Rule]:
    rule_name = id_root or name
    rules = [
        Rule(
            id=f"{CATEGORY}/{rule_name}/path",
            category=CATEGORY,
            material=f"prior-run leftover {shown}",
            evidence="the path",
            description="Generated from the pre-run inventory.",
            severity="high",
            patterns=(trust_generated(entry_pattern(prefix, name)),),
            source=name,
        )
    ]
    if fingerprint_only is not None and name not in fingerprint_only:
        return rules
    lines = fingerprint_lines(root / name)
    if lines:
        rules.append(
            Rule(
                id=f"{CATEGORY}/{rule_name}/content",
                category=CATEGORY,
                material=f"prior-run leftover {shown}",
                evidence="its contents",
                description="Generated from the pre-run inventory: lines of the stale file.",
                severity="high",
                patterns=tuple(trust_generated(re.escape(line)) for line in lines),
                fields=("result", "output"),
            )
        )
    return rules


def fingerprint_lines(path: Path) -> tuple[str, ...]:
    """The file's fingerprint lines, or ``()`` for links, non-files, big or binary files."""
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FINGERPRINT_FILE_BYTES:
            return ()
        # O_NOFOLLOW: a file swapped for a symlink after the lstat is still never read.
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return ()
            data = os.read(fd, MAX_FINGERPRINT_FILE_BYTES + 1)
        finally:
            os.close(fd)
    except OSError:
        return ()
    if len(data) > MAX_FINGERPRINT_FILE_BYTES:
        return ()
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return ()
    return select_fingerprint_lines(text.splitlines())


def select_fingerprint_lines(lines: Iterable[str]) -> tuple[str, ...]:
    """The longest distinct stripped lines (ties lexicographic), each capped in length."""
    candidates = {line.strip() for line in lines}
    ranked = sorted(
        (line for line in candidates if len(line) >= MIN_FINGERPRINT_LINE_CHARS),
        key=lambda line: (-len(line), line),
    )
    chosen: list[str] = []
    for line in ranked:
        # A long line is represented by its head: enough to prove a reproduction, and
        # it keeps patterns (which are published) short.
        head = line[:MAX_FINGERPRINT_LINE_CHARS].strip()
        if head not in chosen:
            chosen.append(head)
        if len(chosen) == FINGERPRINT_LINES:
            break
    return tuple(chosen)


def baseline_from_granted_paths(home: Path, paths: Sequence[str]) -> frozenset[str]:
    """Top-level home entries holding granted paths (``~/skills-repo/x`` → skills-repo)."""
    names: set[str] = set()
    try:
        resolved_home = Path(os.path.abspath(home))
    except (OSError, ValueError):
        return frozenset()
    for raw in paths:
        if not isinstance(raw, str) or not raw.strip():
            continue
        text = raw.strip()
        if text == "~" or text.startswith("~/"):
            text = str(resolved_home) + text[1:]
        candidate = Path(text)
        if not candidate.is_absolute():
            continue
        try:
            relative = Path(os.path.abspath(candidate)).relative_to(resolved_home)
        except ValueError:
            continue
        if relative.parts:
            names.add(relative.parts[0])
    return frozenset(names)


def filter_rules_for_prompt(rules: Sequence[Rule], prompt: str) -> tuple[Rule, ...]:
    """Drop path rules whose entry the prompt names as a whole token; keep all others.

    ``report`` does not authorize ``report.md``, ``workspace-repo`` does not authorize
    ``workspace``; a sentence-ending period is tolerated. Rules without ``source``
    (static rules, content fingerprints) always stay.
    """
    text = prompt if isinstance(prompt, str) else ""
    kept = []
    for rule in rules:
        if rule.source is not None and text and _names_token(text, rule.source):
            continue
        kept.append(rule)
    return tuple(kept)


def _names_token(text: str, name: str) -> bool:
    if name not in text:  # cheap exit: most prompts name no leftover at all
        return False
    pattern = rf"(?<![\w.-]){re.escape(name)}(?![\w-])(?!\.\w)"
    return re.search(pattern, text) is not None


class BatchInventory:
    """Per-task re-inventory for one batch, with the reference's fingerprint policy.

    The snapshot taken at construction fixes the *pre-existing* leftovers. Before each
    task, :meth:`before_task` lists the home again: entries that appeared since are
    credited to the task that ran last. Every leftover gets a path rule. A fingerprint
    goes to pre-existing entries and to entries a *differently named* task left; a
    previous iteration of the same task gets none, because an honest repeat shares
    long lines with its own earlier deliverable.
    """

    def __init__(
        self,
        home: Path,
        *,
        baseline: frozenset[str] = DEFAULT_BASELINE,
        extra_roots: Sequence[Path] = (),
    ) -> None:
        self.home = home
        self.baseline = baseline
        self.extra_roots = tuple(extra_roots)
        self.pre_existing: frozenset[str] = frozenset(self._current())
        self.created_by: dict[str, str | None] = {}
        self._previous_task: str | None = None

    def _current(self) -> tuple[str, ...]:
        names = list(leftover_names(self.home, baseline=self.baseline))
        for root in self.extra_roots:
            names.extend(list_home_entries(root)[:MAX_INVENTORY_ENTRIES])
        return tuple(names)

    def before_task(self, task_name: str) -> tuple[Rule, ...]:
        """The inventory rules for the task about to run (call once per run, in order)."""
        for name in self._current():
            if name not in self.pre_existing and name not in self.created_by:
                self.created_by[name] = self._previous_task
        fingerprintable = self.pre_existing | {
            name for name, creator in self.created_by.items() if creator != task_name
        }
        self._previous_task = task_name
        return build_inventory_rules(
            self.home,
            baseline=self.baseline,
            fingerprint_only=frozenset(fingerprintable),
            extra_roots=self.extra_roots,
        )

    @property
    def mid_batch_entries(self) -> dict[str, str | None]:
        """Entries that appeared during the batch, with the task credited for each."""
        return dict(sorted(self.created_by.items()))


__all__ = [
    "DEFAULT_BASELINE",
    "ENVIRONMENT_DOTFILES",
    "BatchInventory",
    "baseline_from_granted_paths",
    "build_inventory_rules",
    "filter_rules_for_prompt",
    "fingerprint_lines",
    "home_prefix",
    "leftover_names",
    "list_home_entries",
]
