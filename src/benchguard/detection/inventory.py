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

Extra roots (``/tmp``, a workspace parent) are listed the same way, without a
baseline, and matched through the root's literal path only. Their rules are named by
the entry's full path: ids ``prior-run-artifact/root:<root>/<name>/path|content`` and
``source=<root>/<name>``, so ``/tmp/report.md`` and ``~/report.md`` never share a rule,
an id or an authorization.

A prompt that names an entry as a whole token authorizes its path rule for that record
(:func:`filter_rules_for_prompt`): a home entry by its name (``report.md``), an
extra-root entry only by its full path exactly as the root was configured
(``/tmp/report.md``; its bare name authorizes nothing). Fingerprints are never
authorized. Every file-system error yields fewer rules, never an exception: inventory
must not block a run.
"""

from __future__ import annotations

import functools
import os
import re
import stat
import time
from collections.abc import Hashable, Iterable, Sequence
from pathlib import Path

from benchguard.detection._patterns import trust_generated
from benchguard.detection._relax import Unrelaxable, relax, relax_literal, remember_relaxed
from benchguard.detection.models import SCAN_FIELDS, Rule, ScanField
from benchguard.detection.rules import DEFAULT_PROFILE, profile_baseline
from benchguard.record.filenames import FileName

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
# Most top-level entries turned into rules per root (sorted; past it the listed
# entries' rules say the listing stopped: never a silent drop).
MAX_INVENTORY_ENTRIES = 5000
# Environment dot-directories whose entries are listed too, and how deep: agent CLIs
# keep stale sessions and workspaces there (``~/.local/share/<cli>/...``), a prior run
# can park an answer in ``~/.cache/x``. Installed code (``~/.local/lib``, ``~/.npm``'s
# package cache) is the environment and is not listed.
NESTED_ENVIRONMENT_DIRS: tuple[str, ...] = (".cache", ".config", ".local/share", ".local/state")
# Entries listed per environment dot-directory (sorted; past it, the rules say so).
MAX_NESTED_ENVIRONMENT_ENTRIES = 64
LISTING_CAP_NOTE = (
    "incomplete: {folder} holds more than {cap} entries; only the first {cap} in sorted "
    "order are inventoried"
)


def list_home_entries(home: Path) -> tuple[str, ...]:
    """Top-level entry names of ``home``, sorted; ``()`` if it cannot be listed."""
    return tuple(name for name, _ in _listing(home))


def _listing(root: Path) -> list[tuple[str, os.DirEntry[str]]]:
    """Entries of ``root`` by name, sorted; ``[]`` if it cannot be listed.

    The name is the entry's :class:`~benchguard.record.filenames.FileName` text (bytes that are
    not UTF-8 shown as ``\\xNN``), so it can go into rules, records and the journal;
    the entry itself still opens the real file."""
    try:
        with os.scandir(root) as listing:
            entries = [(FileName.from_os(entry.name).text, entry) for entry in listing]
    except OSError:
        return []
    entries.sort(key=lambda item: item[0])
    return entries


def _leftover_listing(
    home: Path, baseline: frozenset[str], capped: dict[str, str]
) -> list[tuple[str, os.DirEntry[str]]]:
    """The home's leftovers: top-level entries outside the baseline and the environment,
    then the entries of the environment dot-directories (named ``.cache/x``), each
    bounded; a listing that stopped at its bound is noted in ``capped`` (by folder)."""
    skip = baseline | ENVIRONMENT_DOTFILES
    entries = [item for item in _listing(home) if item[0] not in skip]
    if len(entries) > MAX_INVENTORY_ENTRIES:
        capped[""] = LISTING_CAP_NOTE.format(folder="the home", cap=MAX_INVENTORY_ENTRIES)
        entries = entries[:MAX_INVENTORY_ENTRIES]
    for folder in NESTED_ENVIRONMENT_DIRS:
        if folder in baseline or not _plain_directory(home, folder):
            continue
        nested = [(f"{folder}/{name}", entry) for name, entry in _listing(home / folder)]
        if len(nested) > MAX_NESTED_ENVIRONMENT_ENTRIES:
            capped[folder] = LISTING_CAP_NOTE.format(
                folder="~/" + folder, cap=MAX_NESTED_ENVIRONMENT_ENTRIES
            )
            nested = nested[:MAX_NESTED_ENVIRONMENT_ENTRIES]
        entries.extend(nested)
    return entries


def _plain_directory(home: Path, relative: str) -> bool:
    """``home/relative`` is a directory and no part of it is a symlink."""
    current = home
    for part in relative.split("/"):
        current = current / part
        try:
            if not stat.S_ISDIR(current.lstat().st_mode):
                return False
        except OSError:
            return False
    return True


def nested_environment_folder(name: str) -> str | None:
    """The environment dot-directory a home entry name lies in (``.cache/x`` → ``.cache``)."""
    for folder in NESTED_ENVIRONMENT_DIRS:
        if name.startswith(folder + "/"):
            return folder
    return None


def home_prefix(home: Path | str) -> str:
    """Regex for the home directory's spellings, left-bounded so it is never mid-token."""
    literal = re.escape(str(home).rstrip("/") or "/")
    return rf"(?<![\w~])(?:~|\$HOME|\$\{{HOME\}}|{literal})"


# Right boundary of a path rule: ``~/report.md`` is not ``~/report.md.bak``.
_PATH_END = r"(?![\w-]|\.[\w-])"


def entry_pattern(prefix: str, name: str) -> str:
    """Regex for one entry under ``prefix``; the right boundary stops ``report.md.bak``."""
    return prefix + "/" + re.escape(name) + _PATH_END


def build_inventory_rules(
    home: Path,
    *,
    baseline: frozenset[str] = DEFAULT_BASELINE,
    fingerprint_only: frozenset[str] | None = None,
    extra_roots: Sequence[Path] = (),
    seen_as: Path | None = None,
) -> tuple[Rule, ...]:
    """Rules for every leftover of ``home`` (and of each extra root, e.g. ``/tmp``).

    ``seen_as`` is the home's path as the agent sees it, when that differs from where
    the inventory reads it (a sandbox binding ``home`` at ``/home/agent``): literal
    paths in the transcript spell that one.

    ``fingerprint_only``, when given, limits content fingerprints to those entries (home
    entries by name, extra-root entries by full path; path rules are always built).
    Extra roots have no baseline: every entry is a leftover, matched only through the
    root's literal path, except an entry that holds ``home`` (the home's parent as a
    root must not turn every path into the home into a leftover).
    """
    listings = _RootListings.take(home, baseline, extra_roots)
    listings.seen_home = seen_as
    return EntryRuleCache().rules(listings, fingerprint_only)


class _RootListings:
    """One listing of the home (leftovers only) and of each extra root."""

    def __init__(
        self,
        roots: list[tuple[Path, bool, list[tuple[str, os.DirEntry[str]]]]],
        capped: dict[str, str] | None = None,
    ) -> None:
        # (root, is_home, sorted entries)
        self.roots = roots
        # The home's path inside the agent's sandbox, if it is bound elsewhere.
        self.seen_home: Path | None = None
        # Home listings that stopped at their bound, by folder ("" for the home), with
        # the note every rule listed from them carries.
        self.capped = capped or {}

    @classmethod
    def take(
        cls, home: Path, baseline: frozenset[str], extra_roots: Sequence[Path]
    ) -> _RootListings:
        capped: dict[str, str] = {}
        roots = [(home, True, _leftover_listing(home, baseline, capped))]
        home_text = str(home).rstrip("/")
        for root in extra_roots:
            # An entry holding the home (a root that is the home's parent) is skipped:
            # its path rule would match every literal path into the home.
            entries = [
                item
                for item in _listing(root)
                if home_text != item[1].path and not home_text.startswith(item[1].path + "/")
            ]
            roots.append((root, False, entries[:MAX_INVENTORY_ENTRIES]))
        return cls(roots, capped)

    def names(self) -> list[str]:
        """Entry keys: a home entry by its name, an extra root's by its full path (so
        ``/tmp/report.md`` and ``~/report.md`` are told apart)."""
        return [
            entry_key(root, is_home, name)
            for root, is_home, entries in self.roots
            for name, _ in entries
        ]


def entry_key(root: Path, is_home: bool, name: str) -> str:
    """How an entry is named in ``fingerprint_only``, in mid-batch attribution and in
    its path rule's ``source`` (what a prompt must name to authorize it)."""
    return name if is_home else f"{str(root).rstrip('/')}/{name}"


def _rule_label(root: Path, is_home: bool, name: str) -> str:
    """The entry's part of a rule id: the name, or ``root:`` and the full path (never
    a double slash, never equal to a home entry's label)."""
    return name if is_home else "root:" + entry_key(root, False, name)


# How recently a file may have changed and still have its fingerprint reused: within
# this window a rewrite could keep size and timestamps (coarse file-system clocks,
# 1-2 s on some), so such a file is read again next time ("racy" entries, as in git).
RACY_WINDOW_NS = 2_000_000_000

_StatKey = tuple[int, int, int, int, int, int]


def _stat_key(info: os.stat_result) -> _StatKey:
    return (
        info.st_dev,
        info.st_ino,
        info.st_mode,
        info.st_size,
        info.st_mtime_ns,
        info.st_ctime_ns,
    )


class EntryRuleCache:
    """Inventory rules per entry, rebuilt only when the entry changes on disk.

    A path rule depends on the entry's name alone and is built once. A fingerprint is
    kept with the ``lstat`` identity of the file it was read from (device, inode, mode,
    size, mtime, ctime) and reused while the entry's ``lstat`` still shows exactly that;
    a file changed within :data:`RACY_WINDOW_NS` of its read is read again. Unchanged
    entries therefore yield the *same* rule objects, which the detector's compiled-plan
    cache keys on.
    """

    def __init__(self) -> None:
        self._path_rules: dict[tuple[str, str], Rule] = {}
        # A file's identity is its lstat key; a folder's is its walk (paths and keys).
        self._content: dict[tuple[str, str], tuple[Hashable, Rule | None]] = {}
        self._prefixes: dict[str, tuple[str, str]] = {}
        # Entries whose fingerprint was computed afresh (tests and the benchmark read it).
        self.refreshed = 0

    def rules(
        self, listings: _RootListings, fingerprint_only: frozenset[str] | None
    ) -> tuple[Rule, ...]:
        rules: list[Rule] = []
        seen: set[tuple[str, str]] = set()
        for root, is_home, entries in listings.roots:
            root_text = str(root)
            shown_root = listings.seen_home if is_home and listings.seen_home else root
            prefix, relaxed_prefix = self._prefix(shown_root, is_home)
            for name, entry in entries:
                key = (root_text, name)
                seen.add(key)
                source = entry_key(root, is_home, name)
                shown = "~/" + name if is_home else source
                label = _rule_label(root, is_home, name)
                nested = nested_environment_folder(name) if is_home else None
                cap = listings.capped.get(nested or "", "") if is_home else ""
                # An entry of an environment dot-directory gets no path rule: tools print
                # those paths on honest runs (an npm log, a traceback through a user
                # install, a cache directory); what it holds is still fingerprinted.
                if nested is None:
                    rules.append(
                        self._path_rule(key, prefix, relaxed_prefix, shown, label, source, cap)
                    )
                if fingerprint_only is not None and source not in fingerprint_only:
                    continue
                content = self._content_rule(key, entry, shown, label, cap)
                if content is not None:
                    rules.append(content)
        # Entries that left the listing are forgotten, so the cache stays the home's size.
        for stale in [k for k in self._content if k not in seen]:
            del self._content[stale]
        return tuple(rules)

    def _prefix(self, root: Path, is_home: bool) -> tuple[str, str]:
        label = ("home:" if is_home else "root:") + str(root)
        cached = self._prefixes.get(label)
        if cached is None:
            if is_home:
                prefix = home_prefix(root)
            else:
                prefix = rf"(?<![\w~]){re.escape(str(root).rstrip('/'))}"
            cached = (prefix, _relaxed_prefix(prefix))
            self._prefixes[label] = cached
        return cached

    def _path_rule(
        self,
        key: tuple[str, str],
        prefix: str,
        relaxed_prefix: str,
        shown: str,
        label: str,
        source: str,
        cap: str = "",
    ) -> Rule:
        rule = self._path_rules.get(key)
        if rule is not None and cap and cap not in rule.description:
            rule = None
        if rule is not None and not cap and "incomplete:" in rule.description:
            rule = None
        if rule is None:
            name = key[1]
            pattern = trust_generated(entry_pattern(prefix, name))
            if relaxed_prefix:
                remember_relaxed(pattern, relaxed_prefix + relax_literal("/" + name))
            rule = _leftover_rule(
                label,
                "path",
                shown,
                evidence="the path",
                description="Generated from the pre-run inventory." + (f" {cap}" if cap else ""),
                patterns=(pattern,),
                source=source,
            )
            self._path_rules[key] = rule
        return rule

    def _content_rule(
        self, key: tuple[str, str], entry: os.DirEntry[str], shown: str, label: str, cap: str = ""
    ) -> Rule | None:
        try:
            info: os.stat_result | None = entry.stat(follow_symlinks=False)
        except OSError:
            info = None
        cached = self._content.get(key)
        walk: _FolderWalk | None = None
        if info is not None and stat.S_ISDIR(info.st_mode):
            walk = _walk_folder(Path(entry.path))
            identity: Hashable = (walk.signature, cap)
        else:
            identity = (_stat_key(info), cap) if info is not None else None
        if cached is not None and identity is not None and cached[0] == identity:
            return cached[1]
        self.refreshed += 1
        read = (
            _read_folder_fingerprint(walk)
            if walk is not None
            else _read_fingerprint(Path(entry.path), info)
        )
        rule = None
        if read.lines:
            description = "Generated from the pre-run inventory: lines of the stale file."
            if read.capped:
                description += " " + NESTED_CAP_NOTE
            if cap:
                description += " " + cap
            rule = _leftover_rule(
                label,
                "content",
                shown,
                evidence="its contents",
                description=description,
                patterns=tuple(_literal_pattern(line) for line in read.lines),
                fields=("result", "output"),
            )
        stored: Hashable = walk.signature if walk is not None else read.key
        if stored is not None and read.settled:
            self._content[key] = ((stored, cap), rule)
        else:
            self._content.pop(key, None)
        return rule


def _leftover_rule(
    label: str,
    kind: str,
    shown: str,
    *,
    evidence: str,
    description: str,
    patterns: tuple[str, ...],
    fields: tuple[ScanField, ...] = SCAN_FIELDS,
    source: str | None = None,
) -> Rule:
    """A generated rule for one leftover entry; ``kind`` is what of it the rule finds."""
    return Rule(
        id=f"{CATEGORY}/{label}/{kind}",
        category=CATEGORY,
        material=f"prior-run leftover {shown}",
        evidence=evidence,
        description=description,
        severity="high",
        patterns=patterns,
        fields=fields,
        source=source,
        # A leftover's own lines in a tool result are the material itself.
        strength="conclusive" if kind == "content" else "strong",
    )


def _literal_pattern(text: str) -> str:
    pattern = trust_generated(re.escape(text))
    return remember_relaxed(pattern, relax_literal(text))


@functools.lru_cache(maxsize=64)
def _relaxed_prefix(prefix: str) -> str:
    """The prefix's relaxed form, or ``""`` to let the prefilter relax whole patterns."""
    try:
        return relax(prefix)
    except Unrelaxable:
        return ""


class _FingerprintRead:
    """What one fingerprint read saw: the lines, the file's identity, whether settled."""

    __slots__ = ("capped", "key", "lines", "settled")

    def __init__(
        self,
        lines: tuple[str, ...] = (),
        key: _StatKey | None = None,
        settled: bool = True,
        capped: bool = False,
    ) -> None:
        self.lines = lines
        self.key = key
        self.settled = settled
        # A folder walk stopped at a bound: the rule says so.
        self.capped = capped


def _read_fingerprint(path: Path, info: os.stat_result | None) -> _FingerprintRead:
    """Read ``path`` given its lstat ``info`` (``None``: the lstat failed, nothing is read)."""
    if info is None:
        return _FingerprintRead()
    try:
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FINGERPRINT_FILE_BYTES:
            # Decided by type and size alone, both part of the key: safe to reuse.
            return _FingerprintRead(key=_stat_key(info))
        started_ns = time.time_ns()
        # O_NOFOLLOW: a file swapped for a symlink after the lstat is still never read.
        fd = os.open(
            path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
        )
        try:
            opened = os.fstat(fd)
            if not stat.S_ISREG(opened.st_mode):
                return _FingerprintRead()
            data = os.read(fd, MAX_FINGERPRINT_FILE_BYTES + 1)
        finally:
            os.close(fd)
    except OSError:
        return _FingerprintRead()
    # The identity is the opened file's, so a swap after the lstat cannot be cached
    # under the old entry's identity.
    key = _stat_key(opened)
    settled = started_ns - max(opened.st_mtime_ns, opened.st_ctime_ns) > RACY_WINDOW_NS
    if len(data) > MAX_FINGERPRINT_FILE_BYTES:
        return _FingerprintRead(key=key, settled=settled)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return _FingerprintRead(key=key, settled=settled)
    return _FingerprintRead(select_fingerprint_lines(text.splitlines()), key, settled)


# A leftover folder (a prior run's workspace, a notes tree, an agent CLI's dot-directory)
# is walked for its small text files: sorted, never following symlinks, at most this
# deep and this many files. A capped walk says so in the rule (never a silent drop).
MAX_NESTED_DEPTH = 4
MAX_NESTED_FILES = 32
NESTED_FINGERPRINT_LINES = 6
NESTED_CAP_NOTE = (
    f"incomplete: the folder holds more than {MAX_NESTED_FILES} files or is deeper "
    f"than {MAX_NESTED_DEPTH} levels; only the first files in sorted order are fingerprinted"
)


class _FolderWalk:
    """The small regular files of a leftover folder, sorted, with their identities."""

    __slots__ = ("capped", "files", "signature")

    def __init__(self, files: list[tuple[Path, os.stat_result]], capped: bool) -> None:
        self.files = files
        self.capped = capped
        self.signature: Hashable = (
            tuple((str(path), _stat_key(info)) for path, info in files),
            capped,
        )


def _walk_folder(root: Path) -> _FolderWalk:
    """List (never read) a folder's files, depth-first in sorted order, within bounds."""
    files: list[tuple[Path, os.stat_result]] = []
    capped = False
    stack: list[tuple[Path, int]] = [(root, 0)]
    while stack and not capped:
        folder, depth = stack.pop()
        try:
            with os.scandir(folder) as listing:
                entries = sorted(listing, key=lambda entry: entry.name, reverse=True)
        except OSError:
            continue
        for entry in entries:
            try:
                if entry.is_dir(follow_symlinks=False):
                    if depth + 1 >= MAX_NESTED_DEPTH:
                        capped = True
                    else:
                        stack.append((Path(entry.path), depth + 1))
                    continue
                if not entry.is_file(follow_symlinks=False):
                    continue
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if len(files) >= MAX_NESTED_FILES:
                capped = True
                break
            files.append((Path(entry.path), info))
    return _FolderWalk(files, capped)


def _read_folder_fingerprint(walk: _FolderWalk) -> _FingerprintRead:
    """Fingerprint lines of the small UTF-8 files a folder walk found."""
    lines: list[str] = []
    settled = True
    for path, info in walk.files:
        read = _read_fingerprint(path, info)
        lines.extend(read.lines)
        settled = settled and read.settled
    chosen = select_fingerprint_lines(lines, count=NESTED_FINGERPRINT_LINES)
    return _FingerprintRead(chosen, None, settled=settled, capped=walk.capped)


def select_fingerprint_lines(
    lines: Iterable[str], *, count: int = FINGERPRINT_LINES
) -> tuple[str, ...]:
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
        if len(chosen) == count:
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
    """Drop path rules whose ``source`` the prompt names as a whole token; keep all others.

    ``report`` does not authorize ``report.md``, ``workspace-repo`` does not authorize
    ``workspace``; a sentence-ending period is tolerated. An extra-root entry's source
    is its full path, so only that path authorizes it. Rules without ``source``
    (static rules, content fingerprints) stay, except the fingerprint of a home folder
    the prompt names a file in (``~/fixtures/orders.csv``): an input fixture.
    """
    text = prompt if isinstance(prompt, str) else ""
    if not text:
        return tuple(rules)
    named = PromptNames(text)
    starts = _home_path_starts(text)
    return tuple(
        rule
        for rule in rules
        if (rule.source is None or not named(rule.source))
        and not _names_as_input(text, starts, rule)
    )


_HOME_CONTENT_ID = re.compile(rf"^{CATEGORY}/(?!root:)(?P<name>.+)/content$")


_HOME_PREFIX = re.compile(r"(?:~|\$HOME|\$\{HOME\})/")
_PATH_CHAR = re.compile(r"[\w.-]")


def _home_path_starts(prompt: str) -> tuple[int, ...]:
    """Where a home-relative path (``~/``, ``$HOME/``, ``${HOME}/``) begins in the
    prompt: found once per prompt, so a home of thousands of entries costs no regex
    compile per rule (each rule's pattern, built anew, overflowed ``re``'s cache)."""
    return tuple(match.end() for match in _HOME_PREFIX.finditer(prompt))


def _names_as_input(prompt: str, starts: Sequence[int], rule: Rule) -> bool:
    """Whether the prompt names a file inside a home folder (``~/fixtures/orders.csv``):
    the folder is then input the task hands over and its fingerprint is dropped. The
    top-level entry itself named (``~/report.md``, a deliverable to write) keeps its
    fingerprint: a stale copy is still an answer key. A bare name is never enough.
    ``starts`` are the prompt's :func:`_home_path_starts`."""
    if not starts:
        return False
    match = _HOME_CONTENT_ID.match(rule.id)
    if match is None:
        return False
    folder = match.group("name") + "/"
    for start in starts:
        after = start + len(folder)
        if (
            prompt.startswith(folder, start)
            and after < len(prompt)
            and _PATH_CHAR.match(prompt, after) is not None
        ):
            return True
    return False


# A whole token names an entry when it is not preceded by [\w.-] and not followed by
# [\w-] or by a period that continues into a word: (?<![\w.-])NAME(?![\w-])(?!\.\w).
_TOKEN_CHARS = re.compile(r"[\w.-]+")
_WORD_CHAR = re.compile(r"\w")


class PromptNames:
    r"""Which entry names a prompt names as whole tokens, with one pass over the prompt.

    A name made only of ``[\w.-]`` characters can match only at the start of a maximal
    run of those characters and end either at the run's end or just before a period
    not followed by a word character; those strings are collected once and names are
    tested by set membership. Any other name (a space, a ``+``...) gets the regex.
    """

    def __init__(self, text: str) -> None:
        self._text = text
        self._tokens: set[str] = set()
        for run in _TOKEN_CHARS.findall(text):
            self._tokens.add(run)
            dot = run.find(".", 1)
            while dot != -1:
                following = run[dot + 1 : dot + 2]
                if not following or _WORD_CHAR.match(following) is None:
                    self._tokens.add(run[:dot])
                dot = run.find(".", dot + 1)

    def __call__(self, name: str) -> bool:
        if _TOKEN_CHARS.fullmatch(name):
            return name in self._tokens
        return _names_token(self._text, name)


def _names_token(text: str, name: str) -> bool:
    if name not in text:  # cheap exit: most prompts name no leftover at all
        return False
    pattern = rf"(?<![\w.-]){re.escape(name)}(?![\w-])(?!\.\w)"
    return re.search(pattern, text) is not None


class BatchInventory:
    """Per-task re-inventory for one batch, with the reference's fingerprint policy.

    The snapshot taken at construction fixes the *pre-existing* leftovers. Before each
    task, :meth:`before_task` lists the home again: entries that appeared since are
    credited to the tasks that could have left them (one, the task that ran last, in a
    serial batch). Every leftover gets a path rule. A fingerprint goes to pre-existing
    entries and to entries no run of the *same* task could have left; an honest repeat
    shares long lines with its own earlier deliverable, so an entry that may be its
    own gets none.
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
        # Kept for the whole batch: an unchanged entry is not read again, and yields
        # the same rule objects task after task.
        self.cache = EntryRuleCache()
        self.pre_existing: frozenset[str] = frozenset(self._listings().names())
        self.created_by: dict[str, tuple[str, ...]] = {}
        self._previous_task: str | None = None

    def _listings(self) -> _RootListings:
        return _RootListings.take(self.home, self.baseline, self.extra_roots)

    def before_task(
        self, task_name: str, *, possible_creators: Iterable[str] | None = None
    ) -> tuple[Rule, ...]:
        """The inventory rules for the task about to run.

        ``possible_creators`` names every task that ran (in whole or in part) since the
        previous snapshot; concurrent runners must pass it. Without it the batch is
        taken to be serial and the task of the previous call is the only candidate.
        """
        if possible_creators is None:
            creators: tuple[str, ...] = (
                () if self._previous_task is None else (self._previous_task,)
            )
        else:
            creators = tuple(sorted(set(possible_creators)))
        listings = self._listings()
        for name in listings.names():
            if name not in self.pre_existing and name not in self.created_by:
                self.created_by[name] = creators
        fingerprintable = self.pre_existing | {
            name for name, candidates in self.created_by.items() if task_name not in candidates
        }
        self._previous_task = task_name
        return self.cache.rules(listings, frozenset(fingerprintable))

    @property
    def mid_batch_entries(self) -> dict[str, tuple[str, ...]]:
        """Entries that appeared during the batch, with the tasks that could have left
        each (sorted; empty for one that appeared before the first task)."""
        return dict(sorted(self.created_by.items()))


__all__ = [
    "DEFAULT_BASELINE",
    "ENVIRONMENT_DOTFILES",
    "RACY_WINDOW_NS",
    "BatchInventory",
    "EntryRuleCache",
    "PromptNames",
    "baseline_from_granted_paths",
    "build_inventory_rules",
    "entry_key",
    "filter_rules_for_prompt",
    "home_prefix",
    "list_home_entries",
]
