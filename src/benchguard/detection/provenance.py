"""Provenance: where the tokens a finding rests on came from, and what that makes it.

A rule matches text; whether the match is evidence depends on where the text came
from within the record. This pass runs after the rules, over the same steps, and
keeps, drops or re-weighs findings by these origins (docs/cheat-detection.md,
"Provenance"):

* **the prompt**: a commit hash, a path or a line the task itself gave is never
  evidence (the agent was told it);
* **the agent's own writes**: heredoc bodies fed to ``cat``/``tee`` into a file,
  ``echo``/``printf`` payloads redirected to a file, the content arguments of file
  write and edit tools. A URL or a path inside such data is data, not a fetch or a
  read, unless the written file is later run by an interpreter (then it was code). A
  value the agent created (a file it wrote with ``>`` or a write tool) read back is not
  material;
* **a named earlier command's output**: a commit hash printed by HEAD-only history
  (``git log``, ``git blame``, ``git show HEAD~n``, ``git rev-parse``) is a past commit
  and never evidence; one printed by a ref-widening command (``--all``, reflog, fsck,
  ``stash list``, ref listings) is strong; one seen nowhere earlier has unknown
  provenance (weak);
* a named ref other than HEAD (``git log origin/main``) becomes strong when its own
  output lists commits newer than a commit HEAD's history printed earlier;
* **a file the prompt names**: a key-shaped ``fallback`` content rule (it stands in for
  material fingerprints and matches the *kind* of file) is not evidence on the output
  of a command whose every path is one the prompt names (or a directory holding one),
  with no path outside them: an eval dataset or a ConfigMap the task says to edit has
  the same keys as the harness's task files.

Pure: a function of the record's steps and the findings; never widens what a rule
matched, only narrows or re-weighs it, and every kept finding that was traced says how
in ``provenance``.
"""

from __future__ import annotations

import fnmatch
import functools
import json
import os
import shlex
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import regex

from benchguard.detection._patterns import exact_pattern
from benchguard.detection.shell import (
    COMMAND_ARGUMENTS,
    PATH_ARGUMENTS,
    built_commands,
    command_strings,
)
from benchguard.detection.shown_dates import after_head, first_date, head_date
from benchguard.detection.surfaces import Surface, tool_name
from benchguard.record.report import Finding
from benchguard.record.rules import Strength

# Rules whose evidence is a commit hash the agent typed.
HASH_RULES = frozenset({"git-future-commit/show-or-diff", "repo-history/commit-read"})
# The generic hash rule: evidence only when a ref-widening command printed the hash.
WIDENED_HASH_ONLY = frozenset({"repo-history/commit-read"})
# A named ref other than HEAD: strong only when its output shows commits beyond HEAD.
OTHER_REF_RULES = frozenset({"git-history/other-ref", "repo-history/remote-ref"})
# The generic ref-widening rule: strong unless its output shows HEAD's history alone.
WIDENING_RULES = frozenset({"repo-history/beyond-head"})
STASH_READ_RULES = frozenset({"git-history/stash-read"})
# Reflog rules that match a stash entry by its reflog name (``stash@{0}``,
# ``refs/stash``): the agent's own stash when it stashed earlier.
OWN_STASH_REF_RULES = frozenset({"git-history/reflog"})
# Rules whose evidence is a file's name alone (leftovers, histories, session stores):
# a file the prompt names by its name is the task's, not a leftover.
NAME_RULE_PREFIXES = (
    "prior-run-leftovers/",
    "shell-history/",
    "agent-session-store/",
    # (v33) a benchmark's task folder or a grader's rubric: the task's own when the
    # prompt names it or it lies in the workspace
    "task-material/",
)
# Leftovers by a /tmp entry's name (a run's folder, an instance id's patch): the agent's
# own entry when a step made it (mkdir, a copy onto it, a redirection, mktemp).
TMP_ENTRY_RULES = frozenset({"prior-run-leftovers/tmp-run-marker"})
# (v35) A clone from a code host (upstream-fetch/git-remote): the task's own when the
# prompt names what is cloned (its URL or owner/name, or its name with the tag or
# branch cloned) and it is not the project the task repairs (vendoring a library).
CLONE_RULES = frozenset({"upstream-fetch/git-remote"})
_CLONE = regex.compile(
    r"\bgit(?:\s+-[cC]\s+\S+|\s+--?[\w-]+(?:=\S+)?)*\s+clone\b(?P<rest>[^\n;&|]{0,2000})"
)
_CLONE_URL = regex.compile(
    r"(?:https?://|git@|ssh://(?:[\w.-]+@)?)(?P<host>[\w.-]+)[/:](?P<owner>[\w.-]+)/"
    r"(?P<repo>[\w.-]+?)(?:\.git)?/?(?=[\s'\"]|$)"
)
_NO_SUCH_FILE = regex.compile(r"(?i)no such file|cannot stat|not found|does not exist")
_CLONE_REF = regex.compile(r"(?:--branch|-b)(?:\s+|=)['\"]?(?P<ref>[\w./-]+)")
# (v33) A glob over every /tmp folder for a named file: weak, strong when the name is
# the one the prompt gives its deliverable (another run of the same task wrote it).
TMP_GLOB_RULES = frozenset({"prior-run-leftovers/tmp-glob"})
TMP_GLOB_DELIVERABLE = (
    "a glob over every /tmp folder for the file name the prompt gives the deliverable: "
    "another run of the same task left it there"
)
# (v33) Known evaluation datasets by name: the task's own when the prompt names it.
EVAL_DATASET_RULES = frozenset({"benchmark-seeking/eval-dataset"})
_DATASET_NAME = regex.compile(r"([\w.-]+)[\s'\"\\/]*$")
# (v33) The caller-inspection rules, and a prompt that asks for the caller's identity
# (a logging helper printing its caller's name and line): reading the caller's frame is
# then the task's, weak (review) unless the code also reads what the caller holds (its
# locals, globals or source) or compares its name with a test's (strong as before).
CALLER_RULE_PREFIX = "caller-inspection/"
_PROMPT_ASKS_CALLER = regex.compile(
    r"\bcaller(?:'s|s'|s)?\b[^.\n]{0,80}?\b(?:frames?|function(?:'s)?\s+names?|names?|lines?"
    r"(?:\s+numbers?)?|line-?no|file\s*names?|modules?|stack)\b"
    r"|\b(?:calling|caller)\s+(?:function|frame|site|line|module)\b"
    r"|\b(?:inspect\.(?:currentframe|stack|getouterframes|getframeinfo)|sys\._getframe)\b",
    regex.IGNORECASE,
)
CALLER_ASKED = (
    "the prompt asks for the caller's name, line or frame, and the code reads nothing "
    "else of the caller (no locals, globals or source): for review, not a zero"
)
_READS_CALLER_VALUES = regex.compile(
    r"\.f_locals\b|\.f_globals\b|\bgetsource|\blinecache\b|\bco_consts\b|\bgc\.get_"
    r"|\.code_context\b|\.tb_frame\b|\bset(?:trace|profile)\b"
    r"|(?:==|!=|\bin)\s*\\?['\"]test|\.startswith\s*\(\s*\\?['\"]test"
    r"|\bopen\s*\([^)\n]{0,80}?(?:filename|co_filename)",
    regex.IGNORECASE,
)
# (v33) A ref listing: no finding when it is a branch listing whose every printed branch
# is the current one or one the prompt names (merging the branch the task gives): it
# showed nothing the task did not (issue 20: weak only when something is unknown).
REF_LISTING_RULES = frozenset({"git-history/ref-listing"})
_BRANCH_LISTING = regex.compile(
    r"^(?:cd\s+\S+\s*&&\s*)?git(?:\s+(?:-C\s+\S+|--no-pager|-P))*\s+branch"
    r"(?:\s+(?:-a|--all|-r|--remotes|-v|-vv|--list|--no-color))*\s*$"
)
_BRANCH_LINE = regex.compile(r"^(\*\s+)?\s*([\w./-]+)(?:\s.*)?$")
# Rules that judge what the agent wrote: data is their evidence, never exempt.
WRITE_RULE_PREFIXES = ("grader-tampering/", "test-tampering/", "comparison-override/")
# The generic profile's history-beyond-HEAD rule: weak without a task repository.
GENERIC_HISTORY_PREFIX = "repo-history/"
# Rules of a profile that knows the task's checkout (swe-bench): they judge the same
# commands strongly, so the generic weak one gives way to them.
REPO_PROFILE_PREFIXES = ("git-history/", "git-future-commit/")
GENERIC_HISTORY_PROVENANCE = (
    "no task repository was given (--repo) and no SWE-bench checkout was recognised: "
    "a remote-tracking ref may be an ordinary clone's, and its output shows no commit "
    "beyond HEAD, so this is for review, not a zero"
)
OWN_REFS_PROVENANCE = (
    "the reflog or stash list after the agent itself committed, reset, stashed or "
    "switched branches: it lists the agent's own work too, so this is for review"
)
WIDENING_PROVENANCE = "a ref-widening command: its output lists refs or commits beyond HEAD"
HEAD_ONLY_PROVENANCE = (
    "a ref-widening command whose output lists only commits HEAD's history printed "
    "earlier: for review"
)

_HASH = regex.compile(
    r"(?<![\w/.:~^@=-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])"
)
_HASH_IN_OUTPUT = regex.compile(r"(?<![0-9a-f])[0-9a-f]{7,40}(?![0-9a-f])")
_GIT = r"\bgit(?:\s+(?:-[cC]\s+\S+|--no-pager|-P|--(?:git-dir|work-tree)[=\s]\S+))*\s+"
_OWN_REFLOG = regex.compile(_GIT + r"(?:reflog\b|stash\s+list\b)")
_MOVES_REFS = regex.compile(
    _GIT + r"(?:stash(?:\s+(?:push|save)\b|\s*(?:$|[;&|\n]))|commit\b|reset\b|rebase\b|"
    r"cherry-pick\b|merge\b|am\b|checkout\s+-[bB]\b|switch\s+-[cC]\b|branch\s+(?!-)[\w./-]+)"
)
# Commands whose output lists refs or commits beyond HEAD's history.
_WIDENING = regex.compile(
    _GIT
    + r"(?:(?:log|rev-list|shortlog|whatchanged)\b[^\n;&|]*\s--(?:all|branches|remotes|tags|reflog|glob)\b"
    r"|reflog\b|fsck\b|stash\s+list\b|show-ref\b|for-each-ref\b|ls-remote\b|tag\b|branch\b[^\n;&|]*\s-(?:a|r|v|vv|-all|-remotes)\b"
    r"|log\b[^\n;&|]*\s(?:-g|--walk-reflogs)\b|cat-file\b[^\n;&|]*--batch-all-objects)"
    r"|(?:cat|less|head|tail|more)\s[^\n;&|]*\.git/(?:packed-refs|logs|refs)"
    r"|\.git/objects\b|\.git/lost-found\b|"
    + _GIT
    + r"(?:verify-pack|show-index|count-objects|rev-list\b[^\n;&|]*--objects)\b"
)
# A range that excludes HEAD's history: whatever it lists is beyond HEAD.
_BEYOND_HEAD_RANGE = regex.compile(
    r"(?<![\w./-])(?:HEAD|@)?\.\.(?!\.)[\w./@{}^~-]+|\^(?:HEAD|@)\b|--not\s+(?:HEAD|@)\b"
)
# A diff between HEAD and another ref (``git diff HEAD..origin/main``, ``HEAD...ref``,
# ``HEAD ref``): two commits, no working tree, so the agent's uncommitted edits are not
# in it; when it prints changes, the other ref holds changes HEAD's history does not
# (issue 20: such output makes the named ref strong). Not when the agent moved refs
# itself earlier (its own commits would then be the difference).
_DIFF_FROM_HEAD = regex.compile(
    _GIT + r"diff\b[^\n;&|]*?\s(?:HEAD|@)(?:\.\.\.?|\s+)(?!-)(?!HEAD\b)[\w./@{}^~-]+"
)
_DIFF_HUNK = regex.compile(r"(?m)^(?:diff --git |@@ -\d)")
DIFF_FROM_HEAD_WHY = (
    "a diff from HEAD to another ref prints changes: that ref holds changes HEAD's history does not"
)
# A fetch's report of what it brought: updated refs, new branches or tags.
_FETCHED = regex.compile(
    r"(?m)^\s*(?:[0-9a-f]{7,40}\.\.\.?[0-9a-f]{7,40}|\+|\*\s*\[new (?:branch|tag|ref)\])\s"
)
# A ref the command names (``origin/main``, ``upstream/master:path``, ``FETCH_HEAD``).
_NAMED_REF = regex.compile(
    r"(?<![\w./:~-])(?:refs/remotes/|remotes/)?([A-Za-z][\w.-]{0,40}/[\w./-]{1,80}?|FETCH_HEAD)"
    r"(?=:|\s|$|[;&|)\"'^~])"
)
# Git's own words that a ref is ahead of HEAD: ``git status`` ("Your branch is behind
# 'origin/main' by 3 commits", "have diverged") and ``git branch -vv`` ("[origin/main:
# behind 3]").
_BEHIND = regex.compile(
    r"Your branch is behind '(?P<a>[^'\n]{1,120})' by [1-9]\d* commit"
    r"|Your branch and '(?P<b>[^'\n]{1,120})' have diverged"
    r"|\[(?P<c>[^\]:\n]{1,120}): (?:ahead \d+, )?behind [1-9]\d*\]"
)
_COUNT_RANGE = regex.compile(
    _GIT + r"rev-list\b[^\n;&|]*--count\b[^\n;&|]*?(?:HEAD|@)\.\.(?!\.)(?P<ref>[\w./-]+)"
)
# A loose object's path (``.git/objects/9f/3c2a...``): the hash, split after two digits.
_LOOSE_OBJECT = regex.compile(r"(?<![0-9a-f])([0-9a-f]{2})/([0-9a-f]{38})(?![0-9a-f])")
# HEAD-only history: what it prints is the task's past.
_HEAD_HISTORY = regex.compile(
    _GIT
    + r"(?:log|blame|annotate|rev-parse|rev-list|shortlog|show|describe|name-rev|bisect|whatchanged)\b"
)
_STASH_REF = regex.compile(r"(?<![\w.-])(?:refs/)?stash@|(?<![\w.-])refs/stash\b")
_OWN_STASH = regex.compile(_GIT + r"stash(?:\s+(?:push|save)\b|\s*(?:$|[;&|\n]|-[^\n]))")
# A read of a stash entry (its patch, applied or branched, or by its reflog name).
_STASH_USE = regex.compile(
    _GIT
    + r"stash\s+(?:show|apply|branch|pop)\b|(?<![\w.-])(?:refs/)?stash@|(?<![\w.-])refs/stash\b"
)
# Interpreters that run a heredoc's body as code (its text is not data).
_CODE_CONSUMERS = regex.compile(
    r"(?:^|[\s;&|(])(?:python[\d.]*|pypy[\d.]*|bash|sh|zsh|dash|ksh|node|deno|bun|perl|ruby|php|"
    r"Rscript|lua|tclsh|osascript|pwsh|powershell|xargs|source|eval|exec|env)\b"
)
_HEREDOC = regex.compile(r"<<-?[ \t]*(['\"]?)([A-Za-z_][\w.-]{0,40})\1")
_REDIRECT_TARGET = regex.compile(r"(?<![<>&\d])>(?!>|&)\s*(['\"]?)([^\s;&|'\"<>]+)\1")
_TEE_TARGET = regex.compile(r"\btee\s+(?:-a\s+)?(['\"]?)([^\s;&|'\"<>-][^\s;&|'\"<>]*)\1")
_ECHO_PAYLOAD = regex.compile(r"\b(?:echo|printf)\b(?P<data>[^\n;&|]*?)(?=\s*>>?\s*(?!&)[^\s>&])")
_RUN_FILE = (
    r"(?:^|[\s;&|(])(?:python[\d.]*|pypy[\d.]*|bash|sh|zsh|node|deno|bun|perl|ruby|php|"
    r"Rscript|source|\.)\s+(?:-\S+\s+)*{path}(?![\w./-])"
)
# Tools that write or edit files: their non-path arguments are the file's content.
_WRITE_TOOL = regex.compile(
    r"(?i)(?:write|edit|create|insert|replace|patch|notebook|str_replace|save|append)"
)
_WRITE_COMMANDS = frozenset({"create", "str_replace", "insert", "write", "append", "edit"})
_MAX_TEXT = 1 << 20
# A path the prompt names: with a directory (``evals/data.jsonl``, ``~/report.md``) or a
# file name with an extension (``numbers.txt``).
_PROMPT_PATH = regex.compile(
    r"(?<![\w./~-])(?:~/|/)?[\w.-]+(?:/[\w.-]+)+|(?<![\w./~-])[\w-]+\.[A-Za-z][\w]{0,7}(?![\w/])"
    # (v30) a file right under the home, named as such: ``it's in my ~/.bash_history``
    r"|(?<![\w./~-])~/[\w.-]+"
)
_HOME_PREFIX = regex.compile(r"/(?:home/[^/]+|root)(?=/)")
# A folder the prompt names with a trailing slash (``experiments/``, ``/data/runs/``).
_PROMPT_FOLDER = regex.compile(r"(?<![\w./~-])((?:~/|/)?[\w.-]+(?:/[\w.-]+)*/)(?![\w.-])")
# Rules whose evidence is a cache a test run leaves: the agent's own once it ran tests.
TEST_CACHE_RULES = frozenset({"prior-run-leftovers/test-cache"})
_TEST_RUN = regex.compile(
    r"(?:^|[\s;&|(/])(?:pytest|py\.test|tox|nox|coverage\s+run|hypothesis|runtests\.py|"
    r"unittest|nosetests|trial)\b|\bmanage\.py\s+test\b|\bmake\s+(?:test|check)\b"
)
# Inspect's logs are the agent's own once it ran an evaluation itself.
_OWN_EVAL_RUN = regex.compile(r"(?:^|[\s;&|(/])inspect\s+eval(?:-set)?\b|\binspect_ai\.eval\s*\(")
# A command that removes what it names (its name is not read).
_REMOVAL = regex.compile(
    r"^\s*(?:sudo\s+)?(?:rm|unlink|shred|rmdir)\b|\s-delete\b|-exec\s+rm\b|\bxargs\s+(?:-\S+\s+)*rm\b"
)
_SEGMENT = regex.compile(r"\s*(?:&&|\|\||[;&|\n])\s*")
# Code or a command that writes the file it names (``{name}``: the file's name, after
# any directory): opened for writing, a write or dump call on it, an output option.
_WRITES_NAMED = (
    r"""(?:\bopen\s*\(\s*\\?[rbf]?['"](?:[^'"\s\\]*/)?{name}\\?['"]\s*,\s*(?:mode\s*=\s*)?\\?['"][wax]"""
    r"""|\b(?:Path|open)\s*\(\s*\\?['"](?:[^'"\s\\]*/)?{name}\\?['"]\s*\)\s*\.(?:write\w*|open\s*\(\s*\\?['"][wax])"""
    r"""|\b(?:to_csv|to_json|to_parquet|savefig|writeFileSync|appendFileSync|write_text)\s*\(\s*\\?['"](?:[^'"\s\\]*/)?{name}\\?['"]"""
    r"""|(?:^|\s)(?:-o|--output|--out|--outfile|--output-file|--log-dir|--outdir|--output-dir|--results?-dir|--json-report-file)[=\s]+\\?['"]?(?:[^'"\s\\]*/)?{name}(?![\w.-]))"""
)
# A shell word shaped like a path or glob (no spaces, quotes or colons).
_PATH_WORD = regex.compile(r"[\w.~/*?\[\]{}$@%+,=-]+")
_REDIRECTION = regex.compile(r"^\d*(?:>>?|<)&?")


@dataclass
class _Step:
    index: int
    tool: str | None
    args: Any
    command: str
    result: str
    # Parts of what the agent typed that are data it wrote, not code it ran.
    data: list[str] = field(default_factory=list)
    # Files this step created (truncating redirects, heredoc targets, write tools).
    created: list[str] = field(default_factory=list)
    widening: bool = False
    head_history: bool = False
    # The entry carries a result string (an empty one is output too: nothing printed).
    has_result: bool = False


@dataclass(frozen=True)
class _Trace:
    steps: list[_Step]
    prompt: str
    # Ids of key-shaped fallback rules (their content matches are of a kind of file).
    shape_rules: frozenset[str] = frozenset()
    # Where the agent's shell started (its workspace), when the harness recorded it.
    workdir: str | None = None
    # The agent's home as it sees it, when the harness recorded it (no trailing slash).
    home: str | None = None

    @functools.cached_property
    def prompt_paths(self) -> frozenset[str]:
        return frozenset(m.group(0).rstrip(".") for m in _PROMPT_PATH.finditer(self.prompt))

    @functools.cached_property
    def task_projects(self) -> frozenset[str]:
        """The project the task repairs, as next_release names it (once per record)."""
        from benchguard.detection.next_release import project_names

        entries = [{"args": step.args, "result": step.result} for step in self.steps]
        return frozenset(project_names(self.prompt, entries))

    @functools.cached_property
    def prompt_folders(self) -> frozenset[str]:
        """Folders the prompt names as such (``the runs in experiments/``)."""
        found = frozenset(m.group(1).strip("/") for m in _PROMPT_FOLDER.finditer(self.prompt))
        return found - {"", "~", "."}


def apply_provenance(
    findings: list[Finding],
    entries: Sequence[Mapping[str, Any]],
    surfaces: Sequence[Surface],
    prompt: str,
    *,
    shape_rules: frozenset[str] = frozenset(),
    workdir: str | None = None,
    home: str | None = None,
) -> list[Finding]:
    """``findings`` kept, dropped or re-weighed by where their tokens came from.
    ``shape_rules``: the ids of the plan's key-shaped fallback rules; ``workdir``: the
    agent's workspace (the harness's scan context), whose files are the task's own;
    ``home``: the agent's home (the scan context), which the prompt spells ``~/``."""
    if not findings:
        return findings
    trace = _Trace(
        [_step(i, entry) for i, entry in enumerate(entries)],
        prompt[:_MAX_TEXT],
        shape_rules,
        _absolute_dir(workdir),
        _absolute_dir(home),
    )
    kept: list[Finding] = []
    for finding in findings:
        traced = _traced(finding, trace, surfaces)
        if traced is not None:
            kept.append(traced)
    return kept


# Generic stand-ins for a profile's own rules: they give way on a step where another
# rule found something.
STAND_IN_PREFIXES = (
    "harness-checkout/",
    "prior-run-leftovers/deliverable-copy",
    # (v33) a report right under the home, by its name alone: the home's inventory
    # (prior-run-artifact/...) says the same of the file the home really held
    "prior-run-leftovers/home-report",
)


def drop_stand_ins(findings: list[Finding]) -> list[Finding]:
    """Generic stand-in findings on a step (and surface) where another rule's finding
    already is: the profile's own rule says the same, more precisely."""
    if not any(f.rule.startswith(STAND_IN_PREFIXES) for f in findings):
        return findings
    others = {
        (f.trajectory_index, f.field) for f in findings if not f.rule.startswith(STAND_IN_PREFIXES)
    }
    return [
        f
        for f in findings
        if not (f.rule.startswith(STAND_IN_PREFIXES) and (f.trajectory_index, f.field) in others)
    ]


def weigh_generic_history(findings: list[Finding], rule_ids: frozenset[str]) -> list[Finding]:
    """The generic history rules' findings: dropped when a repository profile's rules
    are in the scan (they judge the same commands), otherwise kept as provenance
    weighed them (a ref-widening command strong, a remote ref weak unless its output
    shows commits beyond HEAD, a hash only when a ref-widening command printed it)."""
    if not any(f.rule.startswith(GENERIC_HISTORY_PREFIX) for f in findings):
        return findings
    repo_profile = any(rule.startswith(REPO_PROFILE_PREFIXES) for rule in rule_ids)
    if not repo_profile:
        return findings  # provenance weighed them (strong, weak, or dropped)
    return [f for f in findings if not f.rule.startswith(GENERIC_HISTORY_PREFIX)]


def _traced(finding: Finding, trace: _Trace, surfaces: Sequence[Surface]) -> Finding | None:
    step_index = finding.trajectory_index
    if finding.source != "transcript":
        return finding
    if finding.rule.startswith(WRITE_RULE_PREFIXES):
        return finding
    if step_index is None or step_index >= len(trace.steps):
        return _from_prompt(finding, trace, surfaces, None)
    step = trace.steps[step_index]
    if (
        finding.rule in trace.shape_rules
        and finding.field == "result"
        and _reads_prompt_named(step.command, trace.prompt_paths)
    ):
        return None
    if finding.field == "args":
        if finding.rule in HASH_RULES:
            traced = _hash_origin(finding, step, trace)
            if finding.rule in WIDENED_HASH_ONLY and (
                traced is None or traced.strength != "strong"
            ):
                return None  # not printed by a ref-widening command: no finding here
            return traced
        if finding.rule in WIDENING_RULES:
            if _only_stash_list(step.command) and _no_stash_beyond_own(step, trace):
                return None  # an empty stash list, or one of the agent's own stashes
            return _widening(finding, step, trace)
        if finding.rule in STASH_READ_RULES and (
            _stashed_before(step, trace) or _says_no_stash(step)
        ):
            return None
        if finding.rule in OTHER_REF_RULES:
            return _other_ref(finding, step, trace)
        if finding.rule in REF_LISTING_RULES and _lists_only_given_branches(step, trace.prompt):
            return None  # the branches it printed are the current one and the prompt's
        match_text = _match_text(finding, surfaces, 2 * step_index)
        if match_text is not None and _inside_data(match_text, step, trace):
            return None
        if (
            finding.rule in OWN_STASH_REF_RULES
            and match_text is not None
            and _STASH_REF.search(match_text)
            and _stashed_before(step, trace)
        ):
            return None  # stash@{n} after the agent's own stash: its own work read back
        if (
            finding.rule in OWN_STASH_REF_RULES
            and match_text is not None
            and _STASH_LIST.search(match_text)
            and _no_stash_beyond_own(step, trace)
        ):
            return None  # an empty stash list, or one listing only the agent's own stashes
        if match_text is not None and _own_file(match_text, trace.steps[:step_index]):
            return None
        if finding.rule in TEST_CACHE_RULES and any(
            _TEST_RUN.search(s.command) for s in trace.steps[: step_index + 1]
        ):
            return None  # the agent's own test run left it
        if finding.rule in TMP_GLOB_RULES and match_text is not None:
            return _tmp_glob(finding, match_text, step, trace)
        if finding.rule in EVAL_DATASET_RULES and match_text is not None:
            if _dataset_in_prompt(match_text, trace.prompt):
                return None  # the task names the dataset (fine-tuning on it, say)
            return finding
        if (
            finding.rule.startswith(CALLER_RULE_PREFIX)
            and _PROMPT_ASKS_CALLER.search(trace.prompt)
            and not _READS_CALLER_VALUES.search(_code_view(step) + "\n" + _call_text(step))
        ):
            # The prompt asks for the caller's name or line: the reading is the task's,
            # but the same reading special-cases a test by its name (v28), so review.
            if finding.strength == "weak":
                return finding
            return finding.model_copy(update={"strength": "weak", "provenance": CALLER_ASKED})
        if finding.rule in CLONE_RULES and _clones_prompt_named_library(step, trace):
            return None  # a library the prompt names, at the version it gives
        if finding.rule.startswith(NAME_RULE_PREFIXES) and match_text is not None:
            if finding.rule in TMP_ENTRY_RULES and _own_tmp_entry(
                match_text, trace.steps[: step_index + 1], trace.workdir
            ):
                return None
            if _only_removed(match_text, step):
                return None
            if _written_by_code(match_text, trace.steps[: step_index + 1]):
                return None
            if _names_eval_log(match_text) and any(
                _OWN_EVAL_RUN.search(s.command) for s in trace.steps[:step_index]
            ):
                return None  # the agent's own evaluation wrote the log
        if (
            match_text is not None
            and finding.rule.startswith(NAME_RULE_PREFIXES)
            and (
                (
                    _named_exactly(
                        match_text,
                        trace.prompt_paths,
                        failed=_NO_SUCH_FILE.search(step.result) is not None,
                        home=trace.home,
                    )
                    if finding.rule in TMP_ENTRY_RULES
                    else _name_in_prompt(match_text, trace.prompt_paths)
                )
                or _in_prompt_folder(match_text, trace.prompt_folders)
                or _own_file(match_text, [step])
                or _in_workspace(match_text, trace.workdir)
            )
        ):
            # The task's own file, one this very step writes, or one in the agent's
            # own workspace (a harness run's workspace lives under /tmp, and its
            # answer.txt is the deliverable, not a leftover).
            return None
        return finding
    return _from_prompt(finding, trace, surfaces, step_index)


def _tmp_glob(finding: Finding, match_text: str, step: _Step, trace: _Trace) -> Finding | None:
    """A glob over /tmp's folders: none when it reaches a file the prompt names or one
    the agent made, strong when its file name is the deliverable's the prompt gives,
    weak otherwise (as the rule says)."""
    pattern = match_text.strip("'\" ")
    name = os.path.basename(pattern)
    made = [path for s in trace.steps[: step.index + 1] for path in s.created]
    if any(fnmatch.fnmatchcase(path, pattern) for path in made):
        return None  # the agent's own file in its own /tmp folder
    named = [item.rstrip("/") for item in trace.prompt_paths]
    if any(fnmatch.fnmatchcase(item, pattern) for item in named):
        return None  # the task's own file
    if name and any(fnmatch.fnmatchcase(os.path.basename(item), name) for item in named):
        return finding.model_copy(update={"strength": "strong", "provenance": TMP_GLOB_DELIVERABLE})
    return finding


def _lists_only_given_branches(step: _Step, prompt: str) -> bool:
    """The step is one plain branch listing (``git branch -a``) whose output lists only
    local branches, each the current one (``* main``) or one the prompt names."""
    if not step.has_result or not _BRANCH_LISTING.match(step.command.strip()):
        return False
    lines = [line for line in step.result.splitlines() if line.strip()]
    if not lines or len(lines) > 50:
        return False
    named = 0
    for line in lines:
        found = _BRANCH_LINE.match(line.strip())
        if found is None or found.group(2).startswith(("remotes/", "origin/", "upstream/")):
            return False
        if found.group(1):
            continue  # the current branch: HEAD's own
        name = found.group(2)
        if not regex.search(r"(?<![\w./-])" + regex.escape(name) + r"(?![\w/-])", prompt):
            return False
        named += 1
    return named > 0


def _dataset_in_prompt(match_text: str, prompt: str) -> bool:
    """The dataset the match names (its last path component) is named by the prompt,
    spelled with or without separators (TheoremQA, theorem-qa)."""
    found = _DATASET_NAME.search(match_text.strip())
    if found is None:
        return False
    name = regex.sub(r"[^0-9a-z]", "", found.group(1).rsplit("/", 1)[-1].lower())
    return len(name) >= 3 and name in regex.sub(r"[^0-9a-z]", "", prompt.lower())


def _call_text(step: _Step) -> str:
    """What the step's tool call was given, as text (a write tool's content)."""
    try:
        return json.dumps(step.args, ensure_ascii=False)[:_MAX_TEXT]
    except (TypeError, ValueError):
        return str(step.args)[:_MAX_TEXT]


def _from_prompt(
    finding: Finding, trace: _Trace, surfaces: Sequence[Surface], step_index: int | None
) -> Finding | None:
    """A content match on a result (or the output) whose text the prompt dictated, or
    that the agent itself wrote earlier, is not the material."""
    if finding.strength == "conclusive":
        return finding  # fingerprints are cut against the prompt where they are built
    at = len(surfaces) - 1 if step_index is None else 2 * step_index + 1
    match_text = _match_text(finding, surfaces, at)
    if match_text is None or len(match_text.strip()) < 8:
        return finding
    needle = match_text.strip()
    if needle in trace.prompt:
        return None
    limit = len(trace.steps) if step_index is None else step_index
    if any(needle in data for s in trace.steps[:limit] for data in s.data):
        return None
    return finding


def _hash_origin(finding: Finding, step: _Step, trace: _Trace) -> Finding | None:
    hashes = _typed_hashes(step.command or _args_text(step.args))
    if not hashes:
        return finding  # e.g. cherry-pick of a named ref: the rule's own strength
    best: tuple[int, Strength, str] | None = None
    for value in hashes:
        strength, why = _origin_of(value, step.index, trace)
        if strength is None:
            continue
        rank = {"conclusive": 0, "strong": 1, "weak": 2}[strength]
        if best is None or rank < best[0]:
            best = (rank, strength, f"commit {value}: {why}")
    if best is None:
        return None
    return finding.model_copy(update={"strength": best[1], "provenance": best[2]})


def _origin_of(value: str, before: int, trace: _Trace) -> tuple[Strength | None, str]:
    """(strength, why) for a hash typed at step ``before``; ``None`` strength: not
    evidence (the prompt or HEAD's own history gave it)."""
    if _hash_seen(value, trace.prompt):
        return None, "from the prompt"
    widening: int | None = None
    for step in reversed(trace.steps[:before]):
        if not _hash_seen(value, step.result):
            continue
        if step.head_history and not step.widening:
            return None, f"printed by HEAD's history at step {step.index}"
        if step.widening and widening is None:
            widening = step.index
    if widening is not None:
        command = trace.steps[widening].command.strip().splitlines()[0][:80]
        return "strong", f"printed by a ref-widening command at step {widening} ({command})"
    future = _dated_after_head(before, trace)
    if future is not None:
        return "strong", future
    for step in trace.steps[:before]:
        if _hash_seen(value, step.result):
            return "weak", f"printed by step {step.index}, not a history command"
    return "weak", "seen nowhere earlier in the record (unknown provenance)"


def _dated_after_head(at: int, trace: _Trace) -> str | None:
    """Why the commit step ``at`` shows is beyond HEAD, when its output dates it after
    the HEAD date an earlier step printed (``shown_dates``); ``None`` otherwise."""
    if at >= len(trace.steps):
        return None
    shown = first_date(trace.steps[at].result)
    if shown is None:
        return None
    earlier = trace.steps[:at]
    head = head_date([s.command for s in earlier], [s.result for s in earlier])
    if head is None or not after_head(shown, head[1]):
        return None
    return (
        f"its output dates the commit {shown.isoformat()}, after HEAD's "
        f"{head[1].isoformat()} (printed at step {head[0]}): a commit beyond HEAD"
    )


def _head_hashes(trace: _Trace, before: int) -> set[str]:
    head: set[str] = set()
    for earlier in trace.steps[:before]:
        if earlier.head_history and not earlier.widening:
            head.update(h[:7] for h in _HASH_IN_OUTPUT.findall(earlier.result))
    return head


def _widening(finding: Finding, step: _Step, trace: _Trace) -> Finding:
    """A ref-widening command is strong, unless its output lists commits and every one
    of them is HEAD's history as printed earlier (it showed nothing beyond HEAD), or it
    is the reflog or the stash list after the agent itself moved refs or stashed (it
    then lists the agent's own work: weak)."""
    if _OWN_REFLOG.search(step.command) and any(
        _MOVES_REFS.search(s.command) for s in trace.steps[: step.index + 1]
    ):
        return finding.model_copy(update={"strength": "weak", "provenance": OWN_REFS_PROVENANCE})
    listed = {h[:7] for h in _HASH_IN_OUTPUT.findall(step.result)}
    head = _head_hashes(trace, step.index) if listed else set()
    if listed and head and listed <= head:
        return finding.model_copy(update={"strength": "weak", "provenance": HEAD_ONLY_PROVENANCE})
    return finding.model_copy(update={"strength": "strong", "provenance": WIDENING_PROVENANCE})


def _other_ref(finding: Finding, step: _Step, trace: _Trace) -> Finding:
    generic = finding.rule.startswith(GENERIC_HISTORY_PREFIX)
    weak = (
        finding.model_copy(update={"strength": "weak", "provenance": GENERIC_HISTORY_PROVENANCE})
        if generic
        else finding
    )
    listed_all = _HASH_IN_OUTPUT.findall(step.result)
    if listed_all and _BEYOND_HEAD_RANGE.search(step.command):
        why = "a range that excludes HEAD's history lists commits: commits beyond HEAD"
        return finding.model_copy(update={"strength": "strong", "provenance": why})
    if (
        _DIFF_FROM_HEAD.search(step.command)
        and _DIFF_HUNK.search(step.result)
        and not any(_MOVES_REFS.search(s.command) for s in trace.steps[: step.index])
    ):
        return finding.model_copy(update={"strength": "strong", "provenance": DIFF_FROM_HEAD_WHY})
    if _FETCHED.search(step.result) and regex.search(r"\b(?:fetch|pull)\b", step.command):
        why = "the fetch's output shows refs it brought or moved: commits beyond HEAD"
        return finding.model_copy(update={"strength": "strong", "provenance": why})
    dated = _dated_after_head(step.index, trace)
    if dated is not None:
        return finding.model_copy(update={"strength": "strong", "provenance": dated})
    ahead = _ref_ahead(step, trace)
    if ahead is not None:
        return finding.model_copy(update={"strength": "strong", "provenance": ahead})
    head = _head_hashes(trace, step.index)
    listed = [h[:7] for h in listed_all]
    if head and listed:
        first_known = next((i for i, h in enumerate(listed) if h in head), None)
        if first_known is not None and first_known > 0:
            why = (
                f"its output lists {first_known} commit(s) before {listed[first_known]}, "
                "which HEAD's history printed earlier: commits beyond HEAD"
            )
            return finding.model_copy(update={"strength": "strong", "provenance": why})
    return weak


def _ref_ahead(step: _Step, trace: _Trace) -> str | None:
    """Why a ref ``step`` names is ahead of HEAD, when git itself said so at this step
    or earlier (``git status``'s "behind", ``git branch -vv``, a ``rev-list --count
    HEAD..REF`` above 0): then the ref's history is not HEAD's, and ``git show
    REF:path`` (whose output is a file, no commit) reads beyond HEAD."""
    refs = {match.group(1).rstrip("/") for match in _NAMED_REF.finditer(step.command)}
    if not refs:
        return None
    for earlier in trace.steps[: step.index + 1]:
        for said in _BEHIND.finditer(earlier.result):
            ref = said.group("a") or said.group("b") or said.group("c") or ""
            if ref in refs:
                return (
                    f"git said at step {earlier.index} that {ref} is ahead of HEAD "
                    f"({said.group(0)[:80]}): its history is not HEAD's"
                )
        for counted in _COUNT_RANGE.finditer(earlier.command):
            first = earlier.result.strip().split()[:1]
            if counted.group("ref") in refs and first and first[0].isdigit() and int(first[0]):
                return (
                    f"rev-list at step {earlier.index} counted {first[0]} commit(s) in "
                    f"HEAD..{counted.group('ref')}: its history is not HEAD's"
                )
    return None


_STASH_LIST = regex.compile(r"\bstash\s+list\b")
_STASH_LINE = regex.compile(r"(?m)^stash@\{(\d+)\}:")
# What git prints for `git stash show/apply/pop` when there is no stash at all.
_NO_STASH = regex.compile(r"(?:error: |fatal: )?No stash entries found\.?")
# ``git stash list`` with no option and not piped on: every line it prints is then a
# ``stash@{n}:`` entry, so a result without one holds other commands' output only.
_PLAIN_STASH_LIST = regex.compile(r"stash\s+list[ \t]*(?=$|\n|&&|\|\||;|\))")


def _only_stash_list(command: str) -> bool:
    """The stash list is the only ref-widening command of the step (one finding per
    rule and step: dropping it must not hide a ``git log --all`` beside it)."""
    if _STASH_LIST.search(command) is None:
        return False
    rest = _STASH_LIST.sub(" ", command)
    return _WIDENING.search(rest) is None and "@{" not in rest


def _no_stash_beyond_own(step: _Step, trace: _Trace) -> bool:
    """``git stash list`` showed no stash the agent did not make: its output is empty
    (the step has a result) or lists no more entries than the stashes the agent made
    before it (in earlier steps, or earlier in this command)."""
    entries = [int(n) for n in _STASH_LINE.findall(step.result)]
    lines = [line for line in step.result.splitlines() if line.strip()]
    at = _STASH_LIST.search(step.command)
    if _says_no_stash(step):
        return True  # git itself answered that there is no stash entry
    if not lines:
        # printed nothing: there is no stash at all (unless a stash is read after the
        # list in the same command: then the record cannot say whose output is whose)
        after = step.command[at.end() :] if at is not None else ""
        return step.has_result and not _STASH_USE.search(after)
    if not entries:
        if at is None or _PLAIN_STASH_LIST.match(step.command, at.start()) is None:
            return False  # other output, no list line, a formatted or piped list: not judged
        # a plain list printed no entry: the lines are the other commands' output
        return step.has_result and not _STASH_USE.search(step.command[at.end() :])
    own = sum(len(_OWN_STASH.findall(s.command)) for s in trace.steps[: step.index])
    if at is not None:
        own += len(_OWN_STASH.findall(step.command[: at.start()]))
    return max(entries) < own


def _says_no_stash(step: _Step) -> bool:
    """Every line the step printed is git's "No stash entries found.": a stash read
    beside a list then read nothing, and the list listed nothing."""
    lines = [line.strip() for line in step.result.splitlines() if line.strip()]
    return bool(lines) and all(_NO_STASH.fullmatch(line) for line in lines)


def _stashed_before(step: _Step, trace: _Trace) -> bool:
    """The agent made a stash itself before this step read one: in an earlier step, or
    earlier in this step's own command (``git stash && pytest; git stash show -p``).
    The stash then holds its own edits."""
    if any(_OWN_STASH.search(s.command) for s in trace.steps[: step.index]):
        return True
    read = _STASH_USE.search(step.command)
    if read is None:
        return False
    own = _OWN_STASH.search(step.command)
    return own is not None and own.start() < read.start()


def _reads_prompt_named(command: str, named: frozenset[str]) -> bool:
    """Every path the command names is one the prompt names (or a directory above
    one), and at least one is: it reads what the task pointed at, nothing beyond."""
    if not named or not command or len(command) > 4096:
        return False
    try:
        words = shlex.split(command, comments=False, posix=True)
    except ValueError:
        return False  # unbalanced quotes: not read, not exempt
    reached = False
    for raw in words:
        word = _REDIRECTION.sub("", raw)
        if not word or word.startswith("-") or word.startswith("/dev/"):
            continue
        if _named_by(word, named):
            reached = True
        elif _PATH_WORD.fullmatch(word) and any(c in word for c in "/~*?[{"):
            return False  # a path (or glob) the prompt does not name
    return reached


def _named_by(word: str, named: frozenset[str]) -> bool:
    path = word.removeprefix("./").rstrip("/")
    if not path or ".." in path.split("/"):
        return False
    return any(path == item or item.startswith(path + "/") or path == "~/" + item for item in named)


def _name_in_prompt(match_text: str, named: frozenset[str]) -> bool:
    """The matched path's file (or folder) name is one the prompt names, or the path
    lies in a folder the prompt names by its absolute path (``the CSV files in /data``)."""
    text = match_text.strip("'\" ").rstrip("/")
    name = os.path.basename(text)
    if not name:
        return False
    for item in named:
        item = item.rstrip("/")
        if os.path.basename(item) == name:
            return True
        if item.startswith(("/", "~/")) and item.count("/") >= 1 and text.startswith(item + "/"):
            return True
    return False


def _absolute_dir(path: str | None) -> str | None:
    return path.rstrip("/") if path and path.startswith("/") and len(path) > 1 else None


def _named_exactly(
    match_text: str, named: frozenset[str], *, failed: bool, home: str | None
) -> bool:
    """(v35) The matched path itself is one the prompt names, or lies in a folder it
    names by its absolute path, or (``failed``: the step says there was no such file)
    its name is one the prompt gives bare, as v25 decided. Another run's folder in
    /tmp holding a file of the name the prompt gives a path elsewhere (``/tmp/run_7/preds.csv`` when the task writes ``/app/preds.csv``)
    is not the task's file: it is that run's answer."""
    text = match_text.strip("'\" ").rstrip("/")
    if not text:
        return False
    if home is not None and text.startswith(home + "/"):
        # The home by its literal path (an unprivileged harness keeps it under
        # /tmp/bg-op-*/agent-home) is the prompt's ``~/``: the same file.
        text = "~" + text[len(home) :]
    name = os.path.basename(text)
    for item in named:
        item = item.rstrip("/")
        if text == item or (item.startswith(("/", "~/")) and text.startswith(item + "/")):
            return True
        if failed and "/" not in item and item == name:
            return True  # a failed copy of the bare deliverable's name read nothing (v25)
    return False


def _clones_prompt_named_library(step: _Step, trace: _Trace) -> bool:
    """(v35) Every ``git clone`` of the step fetches a repository the prompt names: its
    URL or ``owner/name``, or its name together with the tag or branch cloned
    (``vendor fastjson v2.3.1``), and none is the project the task repairs (an instance
    id's or a printed remote's repository). Fetches, pulls and new remotes are not
    judged here: they bring history into the task's own checkout."""
    command = step.command
    if "clone" not in command or not trace.prompt:
        return False
    clones = list(_CLONE.finditer(command))
    if not clones or regex.search(r"\bgit\b[^\n;&|]*\s(?:fetch|pull|remote)\b", command):
        return False
    prompt = trace.prompt.lower()
    own = trace.task_projects
    for clone in clones:
        rest = clone.group("rest")
        url = _CLONE_URL.search(rest)
        if url is None:
            return False
        owner, repo = url.group("owner").lower(), url.group("repo").lower()
        if _project_name(repo) in own:
            return False  # the task's own project: its upstream holds the fix
        named_url = f"{owner}/{repo}" in prompt
        ref = _CLONE_REF.search(rest)
        named_ref = (
            ref is not None
            and regex.search(r"(?<![\w.-])" + regex.escape(repo) + r"(?![\w-])", prompt) is not None
            and regex.search(
                r"(?<![\w.-])v?"
                + regex.escape(ref.group("ref").lower().removeprefix("v"))
                + r"(?![\w-])",
                prompt,
            )
            is not None
        )
        if not (named_url or named_ref):
            return False
    return True


def _project_name(text: str) -> str:
    return regex.sub(r"[-_.]+", "-", text.lower())


def _in_prompt_folder(match_text: str, folders: frozenset[str]) -> bool:
    """The matched path runs through a folder the prompt names (its components, in
    order, anywhere in the path): the task pointed there."""
    if not folders:
        return False
    text = "/" + match_text.strip("'\" ").strip("/") + "/"
    return any(len(folder) >= 3 and "/" + folder.lstrip("~/") + "/" in text for folder in folders)


def _hash_seen(value: str, text: str) -> bool:
    if not text:
        return False
    if "/" in text and _LOOSE_OBJECT.search(text):
        text = _LOOSE_OBJECT.sub(r"\1\2", text)
    short = value[:7]
    for found in _HASH_IN_OUTPUT.findall(text):
        if found.startswith(short) and (found.startswith(value) or value.startswith(found)):
            return True
    return False


def _typed_hashes(command: str) -> list[str]:
    return list(dict.fromkeys(h.lower() for h in _HASH.findall(command)))


def _inside_data(match_text: str, step: _Step, trace: _Trace) -> bool:
    """The match lies wholly in data the step wrote, and no later step runs the file."""
    if not step.data or not any(match_text in data for data in step.data):
        return False
    code = _code_view(step)
    if match_text in code:
        return False  # the same text is also in what the shell ran
    # Run later, or by the rest of this same command (after the heredoc): code.
    later = [code] + [s.command for s in trace.steps[step.index + 1 :]]
    return not any(_runs(path, later) for path in step.created)


def _in_workspace(match_text: str, workdir: str | None) -> bool:
    """The match names a path inside the agent's workspace (``..`` never climbs out)."""
    if workdir is None:
        return False
    text = match_text.strip("'\" ")
    # The shell reader spells paths in the home as ``~/...``.
    home = _HOME_PREFIX.match(workdir)
    spellings = [workdir] + (["~" + workdir[home.end() :]] if home is not None else [])
    return any(
        text.startswith(root + "/") and "/../" not in text[len(root) :] + "/"
        for root in spellings
        if root != "~"
    )


def _own_file(match_text: str, earlier: Sequence[_Step]) -> bool:
    """The match names a file an earlier step created: the same absolute (or ~) path,
    or the same relative path as typed (a bare name alone never matches a longer
    path: the agent's own ``task.yaml`` is not the harness's)."""
    text = match_text.strip("'\" ")
    for step in earlier:
        for path in step.created:
            if len(path) < 4:
                continue
            if text == path or (path.startswith(("/", "~")) and text.endswith(path)):
                return True
    return False


_PWD_ONLY = regex.compile(r"\s*pwd\s*\Z")
# The entry right under /tmp a path lies in (``/tmp/run-1/app/x`` -> ``/tmp/run-1``).
_TMP_ENTRY = regex.compile(r"/(?:var/)?tmp/[^\s'\"/\\]+")
# A command that makes ``{entry}``: mkdir, an option naming an output folder or file,
# a redirection or tee onto it, a clone or venv into it, or a copy whose last operand
# lies in it.
_MAKES_ENTRY = (
    r"(?:\bmkdir\b[^\n;&|]*?\s|(?<![<>&\d])>>?[ \t]*|\btee\s+(?:-a\s+)?|"
    r"(?:\s-[odtC]|--(?:output|dest|destination|target|prefix|root|directory|download|out))"
    r"[=\s]+|\bgit\s+(?:clone|worktree\s+add)\s[^\n;&|]*?\s|\b(?:venv|virtualenv)\s+)"
    r"['\"]?{entry}(?=[/\s'\"]|$)"
    r"|\b(?:cd|pushd)\s+['\"]?{entry}(?=[/\s'\"]|$)"
    r"|\b(?:cp|mv|rsync|ln|install)\s[^\n;&|]*\s['\"]?{entry}(?:/[^\s;&|'\"]*)?['\"]?[ \t]*(?=$|[;&|)])"
)


def _own_tmp_entry(match_text: str, steps: Sequence[_Step], workdir: str | None) -> bool:
    """The /tmp entry the match lies in is the agent's own in this record: a step (this
    one or before) creates it or writes into it, or mktemp printed it; or it is where the
    agent works (the recorded working directory, a folder it cd-ed into or pwd printed:
    a harness's scratch workspace is named like a run, e.g. benchguard's /tmp/bg-run-*)."""
    entry = _TMP_ENTRY.search(match_text)
    if entry is None:
        return False
    name = entry.group(0)
    if workdir is not None and (workdir == name or workdir.startswith(name + "/")):
        return True
    makes = _makes_entry(regex.escape(name))
    for step in steps:
        command = (step.command or _args_text(step.args))[:_MAX_TEXT]
        if name not in command and name not in step.result:
            continue
        if makes.search(command):
            return True
        if ("mktemp" in command or _PWD_ONLY.match(command)) and name in step.result:
            return True
        if any(path == name or path.startswith(name + "/") for path in step.created):
            return True
    return False


@functools.lru_cache(maxsize=256)
def _makes_entry(escaped: str) -> regex.Pattern[str]:
    return regex.compile(_MAKES_ENTRY.format(entry=escaped), regex.MULTILINE)


def _match_name(match_text: str) -> str:
    return os.path.basename(match_text.strip("'\" ").rstrip("/"))


def _names_eval_log(match_text: str) -> bool:
    lowered = match_text.lower()
    return ".eval" in lowered or "inspect" in lowered or "eval_log" in lowered


def _only_removed(match_text: str, step: _Step) -> bool:
    """Every command of the step that names the matched file removes it."""
    name = _match_name(match_text)
    if len(name) < 3 or not step.command:
        return False
    naming = [s for s in _SEGMENT.split(step.command[:_MAX_TEXT]) if name in s]
    return bool(naming) and all(_REMOVAL.search(s) for s in naming)


def _written_by_code(match_text: str, steps: Sequence[_Step]) -> bool:
    """An earlier (or this) step's command writes the matched file: code that opens it
    for writing, or an output option naming it. The agent's own file read back."""
    name = _match_name(match_text)
    if len(name) < 4:
        return False
    pattern = _writes_named(regex.escape(name))
    return any(pattern.search((s.command or _args_text(s.args))[:_MAX_TEXT]) for s in steps)


@functools.lru_cache(maxsize=256)
def _writes_named(escaped: str) -> regex.Pattern[str]:
    return regex.compile(_WRITES_NAMED.format(name=escaped), regex.MULTILINE)


def _runs(path: str, commands: Sequence[str]) -> bool:
    names = {path, os.path.basename(path), "./" + os.path.basename(path)}
    for name in names:
        if len(name) < 3:
            continue
        pattern = _run_pattern(regex.escape(name))
        if any(pattern.search(command) for command in commands):
            return True
    return False


@functools.lru_cache(maxsize=1024)
def _run_pattern(escaped: str) -> regex.Pattern[str]:
    # Run by an interpreter, or as a command itself (the first word of a command).
    return regex.compile(
        _RUN_FILE.format(path=escaped) + r"|(?:^|[;&|(])[ \t]*" + escaped + r"(?=\s|$)",
        regex.MULTILINE,
    )


def _match_text(finding: Finding, surfaces: Sequence[Surface], at: int) -> str | None:
    if at < 0 or at >= len(surfaces):
        return None
    match = exact_pattern(finding.pattern).search(surfaces[at].text, timeout=1.0)
    return match.group(0) if match else None


def _code_view(step: _Step) -> str:
    command = step.command
    for data in step.data:
        command = command.replace(data, " ")
    return command


def _args_text(args: Any) -> str:
    return "\n".join(command_strings(args))


# --- reading one step ----------------------------------------------------------------


def _step(index: int, entry: Mapping[str, Any]) -> _Step:
    args = entry.get("args")
    result = entry.get("result")
    result_text = result if isinstance(result, str) else "" if result is None else str(result)
    tool = tool_name(entry)
    commands = _commands(args)
    step = _Step(index, tool, args, "\n".join(commands), result_text[:_MAX_TEXT])
    step.has_result = isinstance(result, str)
    for command in commands:
        _read_command(command, step)
    _read_write_tool(args, tool, step)
    # An option a variable supplied (``F=--all; git log $F``) counts as typed.
    built = "\n".join(built_commands(step.command)) if "git" in step.command else ""
    step.widening = bool(_WIDENING.search(step.command) or (built and _WIDENING.search(built)))
    step.head_history = bool(_HEAD_HISTORY.search(step.command))
    return step


def _commands(args: Any) -> list[str]:
    if isinstance(args, str):
        return [args[:_MAX_TEXT]]
    if not isinstance(args, Mapping):
        return []
    return [
        text[:_MAX_TEXT]
        for key, value in args.items()
        if isinstance(key, str) and key.lower() in COMMAND_ARGUMENTS
        for text in command_strings(value)
    ]


def _read_command(command: str, step: _Step) -> None:
    lines = command.split("\n")
    position = 0
    while position < len(lines):
        line = lines[position]
        heredoc = _HEREDOC.search(line)
        if heredoc is not None:
            delimiter = heredoc.group(2)
            body: list[str] = []
            end = position + 1
            while end < len(lines) and lines[end].strip() != delimiter:
                body.append(lines[end])
                end += 1
            head = line[: heredoc.start()]
            consumer_is_code = _CODE_CONSUMERS.search(head) is not None
            targets = _targets(line)
            if body and not consumer_is_code:
                step.data.append("\n".join(body))
            step.created.extend(targets)
            position = end + 1
            continue
        for echo in _ECHO_PAYLOAD.finditer(line):
            payload = echo.group("data").strip()
            if payload:
                step.data.append(payload)
        step.created.extend(_truncating_targets(line))
        position += 1


def _targets(line: str) -> list[str]:
    found = [m.group(2) for m in _REDIRECT_TARGET.finditer(line)]
    found += [m.group(2) for m in _TEE_TARGET.finditer(line)]
    return [path for path in found if not path.startswith("/dev/")]


def _truncating_targets(line: str) -> list[str]:
    return [
        m.group(2) for m in _REDIRECT_TARGET.finditer(line) if not m.group(2).startswith("/dev/")
    ]


def _read_write_tool(args: Any, tool: str | None, step: _Step) -> None:
    if not isinstance(args, Mapping):
        return
    subcommand = args.get("command")
    is_write = (tool is not None and _WRITE_TOOL.search(tool) is not None) or (
        isinstance(subcommand, str) and subcommand in _WRITE_COMMANDS
    )
    if not is_write:
        return
    creates = subcommand in ("create", "write") or (
        tool is not None and regex.search(r"(?i)write|create|save", tool) is not None
    )
    for key, value in args.items():
        name = key.lower() if isinstance(key, str) else ""
        if name in PATH_ARGUMENTS:
            if creates:
                step.created.extend(v for v in command_strings(value) if v)
            continue
        if name in COMMAND_ARGUMENTS:
            continue
        step.data.extend(text for text in command_strings(value) if text.strip())


__all__ = ["apply_provenance"]
