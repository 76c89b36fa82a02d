"""The dismiss workflow: record a reviewed dismissal of one rule's findings on one record.

:func:`dismiss_finding` finds the scored record (a results file as it is; for another
tool's log, the results ``score`` wrote for it), checks that the rule has findings on
it, and appends the validated entry to the dismissal file. Every problem is a
:class:`benchguard.errors.BadInputError` naming the file or flag; nothing here prints.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from benchguard.errors import BadInputError
from benchguard.results.dismissals import Dismissal, append_dismissal
from benchguard.results.io import ResultsDocument, ResultsFileError, read_results
from benchguard.results.rows import record_iteration, record_task_folder
from benchguard.suggest import did_you_mean
from benchguard.workflows.score import RESULTS_FILENAME, read_score_input

DEFAULT_DISMISSALS_FILE = "dismissals.yaml"


@dataclass(frozen=True)
class DismissOptions:
    """The command's options as given; each field is the flag of the same name."""

    results: Path
    task: str
    iteration: int
    rule: str
    reviewer: str
    reason: str
    # Default: ``dismissals.yaml`` beside ``results``.
    file: Path | None = None
    # YYYY-MM-DD; default today.
    date: str | None = None


@dataclass(frozen=True)
class DismissResult:
    """The entry recorded, and the file it was appended to."""

    entry: Dismissal
    target: Path


def dismiss_finding(options: DismissOptions) -> DismissResult:
    """Validate and record the dismissal; :class:`BadInputError` when it cannot be."""
    document, run_id = _dismissable(options.results)
    report = _find_report(options.results, document, options.task, options.iteration)
    try:
        entry = Dismissal.model_validate(
            {
                "run_id": run_id,
                "task": options.task,
                "iteration": options.iteration,
                "rule": options.rule,
                "reviewer": options.reviewer,
                "reason": options.reason,
                "date": options.date if options.date is not None else dt.date.today().isoformat(),
            }
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        raise BadInputError(f"--{first['loc'][0]}: {first['msg']}") from None
    with_findings = _report_rules(report)
    if options.rule not in with_findings:
        raise BadInputError(
            f"{options.results}: task {options.task!r} iteration {options.iteration} has no "
            f"finding of rule {options.rule!r} (rules with findings: "
            f"{', '.join(with_findings) or 'none'})"
        )
    target = (
        options.file
        if options.file is not None
        else (options.results.parent / DEFAULT_DISMISSALS_FILE)
    )
    try:
        append_dismissal(target, entry)
    except OSError as exc:
        raise BadInputError(f"{target}: cannot write: {exc.strerror or exc}") from None
    return DismissResult(entry, target)


def _dismissable(results: Path) -> tuple[ResultsDocument, str]:
    """The scored document whose findings a dismissal names, and its run id: a results
    file as it is; for another tool's log, the results ``score`` wrote for it."""
    item = read_score_input(results)
    if not item.subdir:
        return item.document, item.manifest.run_id
    scored = item.target / RESULTS_FILENAME
    if not scored.is_file():
        raise ResultsFileError(
            results,
            f"not scored yet ({scored} is missing): run benchguard score {results} first, "
            "so the dismissal names findings the scan really made",
        )
    return read_results(scored), item.manifest.run_id


def _find_report(
    results: Path, document: ResultsDocument, task: str, iteration: int
) -> dict[str, Any]:
    for record in document.records:
        if (
            isinstance(record, dict)
            and record_task_folder(record) == task
            and record_iteration(record) == iteration
        ):
            report = record.get("cheating_report")
            return report if isinstance(report, dict) else {}
    folders = [record_task_folder(r) for r in document.records if isinstance(r, dict)]
    raise ResultsFileError(
        results,
        f"no record for task {task!r} iteration {iteration}{did_you_mean(task, folders)}",
    )


def _report_rules(report: dict[str, Any]) -> list[str]:
    """Rule ids with findings on the report, dismissed ones included (a second reviewer
    may add their own dismissal)."""
    findings = report.get("findings")
    dismissed = report.get("dismissed")
    candidates: list[Any] = list(findings) if isinstance(findings, list) else []
    for item in dismissed if isinstance(dismissed, list) else []:
        if isinstance(item, dict):
            candidates.append(item.get("finding"))
    return sorted(
        {f["rule"] for f in candidates if isinstance(f, dict) and isinstance(f.get("rule"), str)}
    )


__all__ = ["DEFAULT_DISMISSALS_FILE", "DismissOptions", "DismissResult", "dismiss_finding"]
