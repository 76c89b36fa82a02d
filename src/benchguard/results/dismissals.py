"""Reviewed dismissals: a named reviewer overturns one rule's findings on one record.

A dismissal file lists entries ``{run_id?, task, iteration, rule, reviewer, reason,
date}`` as YAML or JSON, either a bare list or ``{"dismissals": [...]}``. Applying one
to a report moves that rule's findings into ``report.dismissed`` (the audit trail,
carried forward on every rescore) and recomputes the verdict: a report whose every
finding was dismissed reads clean. Dismissals act on the verdict, before the gate; the
gate and the rows never special-case them.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from benchguard.detection.models import CheatingReport, DismissedFinding, status_for
from benchguard.results.io import ResultsFileError, dumps, read_json, write_text_atomic
from benchguard.yamlfile import YamlFileError, load_yaml_file

_YAML_SUFFIXES = (".yaml", ".yml")


class DismissalFileError(ResultsFileError):
    """A dismissal file that cannot be used; the message names the file and entry."""


class Dismissal(BaseModel):
    """One reviewed dismissal. ``run_id`` narrows it to one run; without it the entry
    applies to that task and iteration in any results file it is used with."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str | None = None
    task: str
    iteration: int = Field(ge=0)
    rule: str
    reviewer: str
    reason: str
    # As ``benchguard dismiss`` does: an entry written without a date is dated the day
    # it is applied.
    date: dt.date = Field(default_factory=dt.date.today)

    @field_validator("task", "rule", "reviewer", "reason")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value.strip()

    def applies_to(self, *, run_id: str | None, task: str, iteration: int) -> bool:
        if self.run_id is not None and self.run_id != run_id:
            return False
        return self.task == task and self.iteration == iteration

    def describe(self) -> str:
        run = f"run {self.run_id}, " if self.run_id else ""
        return f"{run}task {self.task!r} iteration {self.iteration}, rule {self.rule!r}"


def load_dismissals(path: Path) -> tuple[Dismissal, ...]:
    """Read and validate a dismissal file; a missing file is an error, not an empty list."""
    entries = _read_entries(path)
    dismissals = []
    for index, entry in enumerate(entries):
        try:
            dismissals.append(Dismissal.model_validate(entry))
        except ValidationError as exc:
            # Every problem of the entry at once (all its missing fields, not the first).
            problems = "; ".join(
                f"{'.'.join(str(p) for p in error['loc']) or '(entry)'}: {error['msg']}"
                for error in exc.errors(include_url=False)
            )
            raise DismissalFileError(path, f"dismissal {index} is invalid: {problems}") from None
    return tuple(dismissals)


def append_dismissal(path: Path, dismissal: Dismissal) -> None:
    """Add one entry to a dismissal file (created if absent), written atomically in the
    file's own format (YAML for .yaml/.yml, JSON otherwise)."""
    existing = load_dismissals(path) if path.exists() else ()
    entries = [_entry_json(d) for d in (*existing, dismissal)]
    if path.suffix.lower() in _YAML_SUFFIXES:
        text = yaml.safe_dump({"dismissals": entries}, sort_keys=False, allow_unicode=True)
    else:
        text = dumps({"dismissals": entries})
    write_text_atomic(path, text)


def apply_dismissals(
    report: CheatingReport, dismissals: Sequence[Dismissal]
) -> tuple[CheatingReport, frozenset[str]]:
    """Move the findings of each dismissed rule into ``report.dismissed``.

    Returns the new report and the rule ids that matched at least one finding. When a
    rule is dismissed twice, the first entry is the one recorded on its findings.
    """
    by_rule: dict[str, Dismissal] = {}
    for dismissal in dismissals:
        by_rule.setdefault(dismissal.rule, dismissal)
    remaining = []
    newly: list[DismissedFinding] = []
    for finding in report.findings:
        chosen = by_rule.get(finding.rule)
        if chosen is None:
            remaining.append(finding)
        else:
            newly.append(
                DismissedFinding(
                    finding=finding,
                    reviewer=chosen.reviewer,
                    reason=chosen.reason,
                    date=chosen.date.isoformat(),
                )
            )
    if not newly:
        return report, frozenset()
    finding_categories = {f.category for f in report.findings}
    # A category no finding carries (a scan that hit its bound) is not dismissable.
    orphaned = {c for c in report.categories if c not in finding_categories}
    categories = sorted({f.category for f in remaining} | orphaned)
    still_flagged = bool(orphaned) or report.incomplete
    status = "flagged" if still_flagged else status_for(remaining, incomplete=False)
    updated = CheatingReport.model_validate(
        {
            **report.model_dump(),
            "status": status,
            "categories": tuple(categories),
            "findings": tuple(remaining),
            "dismissed": (*report.dismissed, *newly),
        }
    )
    return updated, frozenset(f.finding.rule for f in newly)


def carried_dismissals(
    report: Any, *, run_id: str | None, task: str, iteration: int
) -> list[Dismissal]:
    """The dismissals recorded on a stored report, as entries a rescore re-applies, so a
    reviewed dismissal survives rescoring without its file."""
    dismissed = report.get("dismissed") if isinstance(report, dict) else None
    if not isinstance(dismissed, list | tuple):
        return []
    carried = []
    for item in dismissed:
        try:
            previous = DismissedFinding.model_validate(item)
            carried.append(
                Dismissal(
                    run_id=run_id,
                    task=task,
                    iteration=iteration,
                    rule=previous.finding.rule,
                    reviewer=previous.reviewer,
                    reason=previous.reason,
                    date=dt.date.fromisoformat(previous.date),
                )
            )
        except (ValidationError, ValueError):
            continue
    return _unique(carried)


def _unique(dismissals: Iterable[Dismissal]) -> list[Dismissal]:
    seen: dict[tuple[str, str, str, dt.date], Dismissal] = {}
    for d in dismissals:
        seen.setdefault((d.rule, d.reviewer, d.reason, d.date), d)
    return list(seen.values())


def _read_entries(path: Path) -> list[Any]:
    data = _read_data(path)
    if data is None:
        return []
    entries = data.get("dismissals") if isinstance(data, dict) else data
    if isinstance(data, dict) and set(data) - {"dismissals"}:
        extra = ", ".join(sorted(str(k) for k in set(data) - {"dismissals"}))
        raise DismissalFileError(path, f"unknown top-level field(s): {extra}")
    if not isinstance(entries, list):
        raise DismissalFileError(
            path, "expected a list of dismissals or an object with a 'dismissals' list"
        )
    return entries


def _entry_json(dismissal: Dismissal) -> dict[str, Any]:
    data = dismissal.model_dump(mode="json")
    if data["run_id"] is None:
        del data["run_id"]
    return data


def _read_data(path: Path) -> Any:
    """The file's JSON (a ``.json`` file) or YAML, by the shared readers."""
    if path.suffix.lower() == ".json":
        try:
            return read_json(path)
        except ResultsFileError as exc:
            raise DismissalFileError(path, exc.reason) from None
    try:
        return load_yaml_file(path)
    except YamlFileError as exc:
        raise DismissalFileError(path, _yaml_reason(exc)) from None


def _yaml_reason(exc: YamlFileError) -> str:
    if exc.kind == "missing":
        return "file not found"
    if exc.kind == "unreadable":
        return f"cannot read: {exc.problem}"
    if exc.kind == "too_deep":
        return "cannot parse: nested too deeply"
    return f"cannot parse: {exc.problem}"
