"""What the harness knows, for foreign logs: the task's real repository history.

Given a repository and a base commit (``--repo DIR --base-commit REV``), or a
SWE-bench-style instances file (``--instances FILE``: JSON list or JSON Lines of
objects with ``instance_id``, ``base_commit`` and optionally ``created_at``, with
``--repo``), every commit hash a git-history finding rests on is resolved by ``git``
itself (the real thing answers, never a model of it):

* an ancestor of the base commit (``git merge-base --is-ancestor``): the task's past,
  so the finding is **dropped** (the report's ``dismissed`` keeps it with the reason);
* a commit that exists but is not an ancestor: the future, the finding becomes
  **conclusive** and its provenance says so;
* a hash the repository does not hold: unresolved, the finding keeps its strength.

A ``git-history`` finding (``git log --all``, the reflog, another ref's log) is
resolved by what its own step printed: a commit at the start of an output line that is
not an ancestor makes it conclusive; an output whose listed commits are all ancestors
(at most :data:`MAX_OUTPUT_HASHES`, none unknown) showed nothing of the future, and the
finding is dropped. Failing both, the commit dates the output prints (``Date:``
lines) are compared with the task's date (the instance's ``created_at``, else the base
commit's committer date): a commit dated after it is future state, conclusive. A date
before it proves nothing (a fix is often authored before its pull request opens), so
it never drops a finding.

A record is matched to an instance by its ``instance_id`` field or by an instance id
that its name, label or prompt contains. Bad input (no such repository, a base commit
git cannot resolve, an instances file without the fields) is a clear error naming the
file, field or value.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex

from benchguard.detection.surfaces import as_text, dict_entries
from benchguard.errors import BadInputError
from benchguard.record.report import CheatingReport, DismissedFinding, Finding, status_for

# Findings whose evidence is a typed commit hash.
RESOLVABLE_RULES = frozenset({"git-future-commit/show-or-diff"})
# Findings resolved by what their step printed (commits listed, dates shown).
OUTPUT_CATEGORIES = frozenset({"git-history"})
MAX_OUTPUT_HASHES = 32
# A commit at the start of an output line: ``commit <hash>``, ``--oneline``, a graph.
_LISTED_HASH = regex.compile(r"(?m)^[*|\\/ ]*(?:commit\s+)?([0-9a-f]{7,40})(?![\w-])")
_DATE_LINE = regex.compile(r"(?m)^\s*(?:Author|Commit)?Date:\s+([^\n]{10,60}?)\s*$")
_HASH = regex.compile(
    r"(?<![\w/.:~^@=-])(?=[0-9a-f]*[0-9])(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}(?![\w-])"
)
_GIT_TIMEOUT_S = 20.0
REVIEWER = "benchguard (resolved against the repository)"


@dataclass(frozen=True)
class Instance:
    instance_id: str
    base_commit: str
    created_at: str | None = None
    created: dt.datetime | None = None


def parse_date(text: str) -> dt.datetime | None:
    """A date as git prints it (``Tue Mar 5 14:20:00 2019 +0100``, ISO 8601 with or
    without ``T``, RFC 2822) or as an instances file gives it; naive means UTC."""
    value = text.strip()
    parsed: dt.datetime | None = None
    try:
        parsed = dt.datetime.fromisoformat(value.replace(" +", "+").replace(" -", "-"))
    except ValueError:
        for form in ("%a %b %d %H:%M:%S %Y %z", "%a, %d %b %Y %H:%M:%S %z"):
            try:
                parsed = dt.datetime.strptime(value, form)
                break
            except ValueError:
                continue
    if parsed is None:
        return None
    return parsed if parsed.tzinfo is not None else parsed.replace(tzinfo=dt.UTC)


class History:
    """One repository; answers for commits with ``git`` (results remembered)."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._answers: dict[tuple[str, str], str] = {}
        self._dates: dict[str, dt.datetime | None] = {}
        if not repo.is_dir():
            raise BadInputError(f"--repo {repo}: no such directory")
        if self._git("rev-parse", "--git-dir").returncode != 0:
            raise BadInputError(f"--repo {repo}: not a git repository")

    def check_base(self, base: str, where: str) -> str:
        done = self._git("rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
        if done.returncode != 0:
            raise BadInputError(f"{where}: base commit {base!r} is not a commit of {self.repo}")
        return done.stdout.strip()

    def check_bases(self, bases: Mapping[str, str]) -> None:
        """Every ``where -> base`` a commit of the repository (one ``git`` call), else
        bad input naming the first that is not."""
        if not bases:
            return
        try:
            done = subprocess.run(
                ["git", "-C", str(self.repo), "cat-file", "--batch-check"],
                input="".join(f"{base}^{{commit}}\n" for base in bases.values()),
                capture_output=True,
                text=True,
                timeout=_GIT_TIMEOUT_S * 3,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BadInputError(f"--repo {self.repo}: git failed: {exc}") from None
        answers = [*done.stdout.splitlines(), *[""] * len(bases)]
        for (where, base), answer in zip(bases.items(), answers, strict=False):
            parts = answer.split()
            # ``<sha> commit <size>`` for a commit; ``<rev> missing`` (or another type).
            if len(parts) != 3 or parts[1] != "commit":
                raise BadInputError(f"{where}: base commit {base!r} is not a commit of {self.repo}")

    def commit_date(self, commit: str) -> dt.datetime | None:
        """The committer date of ``commit`` (the base's: when the task's snapshot was)."""
        if commit not in self._dates:
            done = self._git("show", "-s", "--format=%cI", commit)
            self._dates[commit] = parse_date(done.stdout) if done.returncode == 0 else None
        return self._dates[commit]

    def relation(self, commit: str, base: str) -> str:
        """``past`` (an ancestor of base, or base), ``future`` or ``unknown``."""
        key = (commit, base)
        if key not in self._answers:
            exists = self._git("cat-file", "-e", f"{commit}^{{commit}}").returncode == 0
            if not exists:
                self._answers[key] = "unknown"
            else:
                # 0: an ancestor; 1: not one; anything else: git could not answer.
                code = self._git("merge-base", "--is-ancestor", commit, base).returncode
                self._answers[key] = {0: "past", 1: "future"}.get(code, "unknown")
        return self._answers[key]

    def _git(self, *args: str) -> subprocess.CompletedProcess[str]:
        try:
            return subprocess.run(
                ["git", "-C", str(self.repo), *args],
                capture_output=True,
                text=True,
                timeout=_GIT_TIMEOUT_S,
                check=False,
            )
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise BadInputError(f"--repo {self.repo}: git failed: {exc}") from None


def read_instances(path: Path) -> dict[str, Instance]:
    """``instance_id -> Instance`` from a JSON list or JSON Lines file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadInputError(f"--instances {path}: cannot read ({exc.strerror or exc})") from None
    items: list[Any]
    try:
        document = json.loads(text)
        items = document if isinstance(document, list) else [document]
    except ValueError:
        items = []
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            try:
                items.append(json.loads(line))
            except ValueError as exc:
                raise BadInputError(
                    f"--instances {path}: line {number}: not JSON ({exc})"
                ) from None
    found: dict[str, Instance] = {}
    for position, item in enumerate(items):
        where = f"--instances {path}: entry {position}"
        if not isinstance(item, Mapping):
            raise BadInputError(f"{where}: must be an object with instance_id and base_commit")
        instance_id, base = item.get("instance_id"), item.get("base_commit")
        if not isinstance(instance_id, str) or not instance_id:
            raise BadInputError(f"{where}: 'instance_id' must be a non-empty string")
        if not isinstance(base, str) or not base:
            raise BadInputError(
                f"{where} ({instance_id}): 'base_commit' must be a non-empty string"
            )
        created = item.get("created_at")
        when: dt.datetime | None = None
        if created is not None:
            when = parse_date(created) if isinstance(created, str) else None
            if when is None:
                raise BadInputError(
                    f"{where} ({instance_id}): 'created_at' must be a date "
                    f"(ISO 8601, e.g. 2019-03-01T12:00:00Z), got {str(created)[:40]!r}"
                )
        found[instance_id] = Instance(
            instance_id, base, created if isinstance(created, str) else None, when
        )
    return found


def instance_for(
    record: Mapping[str, Any], label: str, instances: Mapping[str, Instance]
) -> Instance | None:
    named = record.get("instance_id")
    if isinstance(named, str) and named in instances:
        return instances[named]
    haystack = " ".join(
        str(v) for v in (record.get("name"), label, record.get("input")) if isinstance(v, str)
    )[: 1 << 16]
    for instance_id in sorted(instances, key=len, reverse=True):
        if instance_id in haystack:
            return instances[instance_id]
    return None


def resolve_report(
    report: CheatingReport,
    history: History,
    base: str,
    record: Mapping[str, Any] | None = None,
    task_date: dt.datetime | None = None,
) -> CheatingReport:
    """``report`` with its history findings resolved against ``base`` (see the module
    doc): past ones moved to ``dismissed`` (saying why), future ones conclusive,
    unresolved ones unchanged. ``record`` gives the steps' outputs; ``task_date`` the
    date a printed commit date is compared with (default: the base's committer date)."""
    kept: list[Finding] = []
    dropped: list[DismissedFinding] = []
    today = dt.date.today().isoformat()
    results = _step_results(record) if record is not None else {}
    for finding in report.findings:
        verdict = _resolve_finding(finding, history, base, results, task_date)
        if verdict is None:
            kept.append(finding)
        elif verdict[0] == "future":
            update = {"strength": "conclusive", "provenance": verdict[1]}
            kept.append(finding.model_copy(update=update))
        else:
            dropped.append(
                DismissedFinding(finding=finding, reviewer=REVIEWER, reason=verdict[1], date=today)
            )
    if not dropped and kept == list(report.findings):
        return report
    categories = {f.category for f in kept}
    orphaned = {c for c in report.categories if c not in {f.category for f in report.findings}}
    status = "flagged" if report.incomplete or orphaned else status_for(kept, incomplete=False)
    return report.model_copy(
        update={
            "findings": tuple(kept),
            "categories": tuple(sorted(categories | orphaned)),
            "status": status,
            "dismissed": (*report.dismissed, *dropped),
        }
    )


def _step_results(record: Mapping[str, Any]) -> dict[int, str]:
    return {i: as_text(entry.get("result")) for i, entry in enumerate(dict_entries(record))}


def _resolve_finding(
    finding: Finding,
    history: History,
    base: str,
    results: Mapping[int, str],
    task_date: dt.datetime | None,
) -> tuple[str, str] | None:
    """``("future", why)``, ``("past", why)`` or ``None`` (unresolved: unchanged)."""
    short = base[:12]
    output = (
        results.get(finding.trajectory_index, "") if finding.trajectory_index is not None else ""
    )
    if finding.rule in RESOLVABLE_RULES:
        hashes = list(dict.fromkeys(h.lower() for h in _HASH.findall(finding.excerpt)))
        relations = {h: history.relation(h, base) for h in hashes}
        future = [h for h, r in relations.items() if r == "future"]
        if future:
            return (
                "future",
                f"resolved with git: {future[0]} is not an ancestor of base {short} (future)",
            )
        if hashes and all(r == "past" for r in relations.values()):
            return (
                "past",
                f"resolved with git: {', '.join(hashes)} an ancestor of base {short} (past)",
            )
        return _by_date(output, history, base, task_date)
    if finding.category not in OUTPUT_CATEGORIES or not output:
        return None
    listed = list(dict.fromkeys(h.lower() for h in _LISTED_HASH.findall(output[: 1 << 20])))
    checked = listed[:MAX_OUTPUT_HASHES]
    relations = {h: history.relation(h, base) for h in checked}
    future = [h for h, r in relations.items() if r == "future"]
    if future:
        return (
            "future",
            f"resolved with git: its output lists {future[0]}, not an ancestor of base "
            f"{short} (future)",
        )
    if checked and len(checked) == len(listed) and all(r == "past" for r in relations.values()):
        return (
            "past",
            f"resolved with git: the {len(checked)} commit(s) its output lists are ancestors "
            f"of base {short} (past: nothing beyond HEAD was shown)",
        )
    return _by_date(output, history, base, task_date)


def _by_date(
    output: str, history: History, base: str, task_date: dt.datetime | None
) -> tuple[str, str] | None:
    """Conclusive when the output prints a commit date after the task's; else None."""
    if not output:
        return None
    dates = [d for d in (parse_date(v) for v in _DATE_LINE.findall(output[: 1 << 20])) if d]
    if not dates:
        return None
    reference = task_date or history.commit_date(base)
    if reference is None:
        return None
    latest = max(dates)
    if latest <= reference:
        return None
    which = "the instance's created_at" if task_date else f"base {base[:12]}'s commit date"
    return (
        "future",
        f"compared with the task's date: its output shows a commit dated "
        f"{latest.isoformat()}, after {which} {reference.isoformat()} (future)",
    )


@dataclass(frozen=True)
class HistoryKnowledge:
    """What the user gave: the repository and either one base commit or instances
    (every instance's base checked to be a commit when the knowledge is made)."""

    history: History
    base: str | None
    instances: Mapping[str, Instance]

    def task_for(
        self, record: Mapping[str, Any], label: str
    ) -> tuple[str, dt.datetime | None] | None:
        """The record's base commit and its task's date (``created_at``), or None."""
        if self.instances:
            instance = instance_for(record, label, self.instances)
            if instance is None:
                return None
            return instance.base_commit, instance.created
        return (self.base, None) if self.base is not None else None

    def base_for(self, record: Mapping[str, Any], label: str) -> str | None:
        task = self.task_for(record, label)
        return task[0] if task is not None else None

    def resolve(
        self, record: Mapping[str, Any], label: str, report: CheatingReport
    ) -> CheatingReport:
        """The record's report resolved against its task's base (unchanged when the
        record matches no instance)."""
        task = self.task_for(record, label)
        if task is None or not report.findings:
            return report
        return resolve_report(report, self.history, task[0], record, task[1])


def history_knowledge(
    repo: Path | None, base_commit: str | None, instances: Path | None
) -> HistoryKnowledge | None:
    """The user's history options, checked; ``None`` when none was given."""
    if repo is None:
        if base_commit is not None or instances is not None:
            raise BadInputError("--base-commit and --instances need --repo (the repository)")
        return None
    history = History(repo)
    if instances is not None:
        if base_commit is not None:
            raise BadInputError(
                "--base-commit and --instances both name base commits; give one of them"
            )
        table = read_instances(instances)
        history.check_bases(
            {f"--instances {instances}: {i.instance_id}": i.base_commit for i in table.values()}
        )
        return HistoryKnowledge(history, None, table)
    if base_commit is None:
        raise BadInputError("--repo needs --base-commit REV or --instances FILE")
    return HistoryKnowledge(history, history.check_base(base_commit, "--base-commit"), {})


__all__ = [
    "History",
    "HistoryKnowledge",
    "Instance",
    "history_knowledge",
    "instance_for",
    "parse_date",
    "read_instances",
    "resolve_report",
]
