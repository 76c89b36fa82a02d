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

A record is matched to an instance by its ``instance_id`` field or by an instance id
that its name, label or prompt contains. Bad input (no such repository, a base commit
git cannot resolve, an instances file without the fields) is a clear error naming the
file, field or value.
"""

from __future__ import annotations

import datetime as dt
import json
import subprocess
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import regex

from benchguard.errors import BadInputError
from benchguard.record.report import CheatingReport, DismissedFinding, Finding, status_for

# Findings whose evidence is a typed commit hash.
RESOLVABLE_RULES = frozenset({"git-future-commit/show-or-diff"})
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


class History:
    """One repository; answers for commits with ``git`` (results remembered)."""

    def __init__(self, repo: Path) -> None:
        self.repo = repo
        self._answers: dict[tuple[str, str], str] = {}
        if not repo.is_dir():
            raise BadInputError(f"--repo {repo}: no such directory")
        if self._git("rev-parse", "--git-dir").returncode != 0:
            raise BadInputError(f"--repo {repo}: not a git repository")

    def check_base(self, base: str, where: str) -> str:
        done = self._git("rev-parse", "--verify", "--quiet", f"{base}^{{commit}}")
        if done.returncode != 0:
            raise BadInputError(f"{where}: base commit {base!r} is not a commit of {self.repo}")
        return done.stdout.strip()

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
        found[instance_id] = Instance(
            instance_id, base, created if isinstance(created, str) else None
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


def resolve_report(report: CheatingReport, history: History, base: str) -> CheatingReport:
    """``report`` with its hash findings resolved against ``base``: past ones moved to
    ``dismissed`` (saying why), future ones conclusive, unknown ones unchanged."""
    kept: list[Finding] = []
    dropped: list[DismissedFinding] = []
    today = dt.date.today().isoformat()
    for finding in report.findings:
        if finding.rule not in RESOLVABLE_RULES:
            kept.append(finding)
            continue
        hashes = list(dict.fromkeys(h.lower() for h in _HASH.findall(finding.excerpt)))
        relations = {h: history.relation(h, base) for h in hashes}
        future = [h for h, r in relations.items() if r == "future"]
        if future:
            why = f"resolved with git: {future[0]} is not an ancestor of base {base[:12]} (future)"
            kept.append(finding.model_copy(update={"strength": "conclusive", "provenance": why}))
        elif hashes and all(r == "past" for r in relations.values()):
            why = f"resolved with git: {', '.join(hashes)} an ancestor of base {base[:12]} (past)"
            dropped.append(
                DismissedFinding(finding=finding, reviewer=REVIEWER, reason=why, date=today)
            )
        else:
            kept.append(finding)
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


@dataclass(frozen=True)
class HistoryKnowledge:
    """What the user gave: the repository and either one base commit or instances."""

    history: History
    base: str | None
    instances: Mapping[str, Instance]

    def base_for(self, record: Mapping[str, Any], label: str) -> str | None:
        if self.instances:
            instance = instance_for(record, label, self.instances)
            if instance is None:
                return None
            return self.history.check_base(
                instance.base_commit, f"--instances: {instance.instance_id}"
            )
        return self.base

    def resolve_scan(self, scanned: Any) -> Any:
        """A ``FileScan`` with each record's report resolved (matched to an instance
        by the record's name, label and task)."""
        records = []
        for rec in scanned.records:
            base = self.base_for({"name": rec.name}, f"{rec.label} {rec.task}")
            report = rec.report if base is None else resolve_report(rec.report, self.history, base)
            records.append(
                rec if report is rec.report else rec.model_copy(update={"report": report})
            )
        return scanned.model_copy(update={"records": tuple(records)})


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
        table = read_instances(instances)
        return HistoryKnowledge(history, None, table)
    if base_commit is None:
        raise BadInputError("--repo needs --base-commit REV or --instances FILE")
    return HistoryKnowledge(history, history.check_base(base_commit, "--base-commit"), {})


def resolve_verdicts(
    records: Sequence[Any], verdicts: Mapping[int, Any], knowledge: HistoryKnowledge
) -> dict[int, Any]:
    """``score``'s fresh verdicts (by record position) with each report resolved against
    its record's base commit, as ``scan`` resolves them; a verdict that is not a report
    (a rescan failure) is left as it is."""
    resolved: dict[int, Any] = {}
    for index, verdict in verdicts.items():
        record = records[index] if 0 <= index < len(records) else None
        if not isinstance(verdict, CheatingReport) or not isinstance(record, Mapping):
            resolved[index] = verdict
            continue
        label = " ".join(
            str(record[key])
            for key in ("folder", "task", "label")
            if isinstance(record.get(key), str)
        )
        base = knowledge.base_for(record, label)
        resolved[index] = (
            verdict if base is None else resolve_report(verdict, knowledge.history, base)
        )
    return resolved


def resolve_records(
    records: Sequence[tuple[Mapping[str, Any], str, CheatingReport]], knowledge: HistoryKnowledge
) -> list[CheatingReport]:
    """Each (record, label, report) resolved with the base its instance names."""
    resolved = []
    for record, label, report in records:
        base = knowledge.base_for(record, label)
        resolved.append(report if base is None else resolve_report(report, knowledge.history, base))
    return resolved


__all__ = [
    "History",
    "HistoryKnowledge",
    "Instance",
    "history_knowledge",
    "instance_for",
    "read_instances",
    "resolve_records",
    "resolve_report",
    "resolve_verdicts",
]
