"""The integrity gate: a flagged cheating report becomes an ``IntegrityCatastrophic`` zero.

The gate reads only the stored verdict (``record["cheating_report"]``), never re-scans.
It is total: any exception here would drop the gate and let a flagged run keep its
score, so every shape a persisted report can take is handled without raising.

Silence is deliberate: a report that says ``no_data``, or no usable report at all,
emits nothing. Having seen nothing is not innocence, and the row says so through
``integrityStatus`` instead.

A ``clean`` or ``no_data`` report that nevertheless carries evidence (findings,
categories, or an ``incomplete`` mark) contradicts itself; :func:`gate_status` reads it
as flagged (fail closed). The row builder reads the same function, so the gate and the
published ``integrityStatus`` cannot disagree.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchguard.detection.models import SCAN_INCOMPLETE_CATEGORY, ReportStatus
from benchguard.detection.stored_status import is_marked_incomplete, stored_status
from benchguard.scoring.text import sanitize_text

MAX_NAMED_CATEGORIES = 5
_CATEGORY_CAP = 60

CLEAN_REASON = "no access to benchmark material detected"


def gate_status(report: Any) -> ReportStatus | None:
    """The status the gate acts on; ``None`` when there is no usable verdict.

    ``None`` for a non-object, ``{}`` or an unknown ``status`` that carries no
    evidence. A report that is incomplete, lists findings or names categories is
    ``flagged`` whatever its status says (``clean``, ``no_data``, or something this
    version does not know, such as ``"FLAGGED"``): a verdict that contradicts its own
    evidence, or cannot be read, fails closed. The rule lives in the detection layer
    (:func:`benchguard.detection.stored_status.stored_status`), which reads stored
    reports back the same way.
    """
    return stored_status(report)


def integrity_entry(report: Any) -> dict[str, Any] | None:
    """Return the ``IntegrityCatastrophic`` score entry for a stored report, or ``None``.

    Acts on :func:`gate_status`: ``flagged`` (including a self-contradictory clean or
    no_data report) gives 0.0, ``clean`` gives 1.0, no usable verdict emits nothing.
    """
    status = gate_status(report)
    if status == "clean":
        return {"score": 1.0, "success": True, "reason": CLEAN_REASON}
    if status == "flagged":
        return {"score": 0.0, "success": False, "reason": flagged_reason(report)}
    return None


def excused_by_infrastructure(report: Any, infrastructure: str | None) -> bool:
    """Whether a flagged ``report`` of a run the machine failed (``infrastructure``:
    the record's mark, :mod:`benchguard.record.infrastructure`) is the shortage's doing:
    flagged for nothing but an incomplete scan (a full disk cut the agent's own
    transcript too). Such a scan is no catastrophe and the gate does not fire; the run
    keeps the no-credit zero of its error. A finding the scan did make still gates
    (fail closed): filling the disk never hides what the agent read."""
    if infrastructure is None or not isinstance(report, Mapping):
        return False
    findings = report.get("findings")
    categories = report.get("categories")
    if not isinstance(findings, list) or not isinstance(categories, list):
        return False
    return not findings and all(c == SCAN_INCOMPLETE_CATEGORY for c in categories)


def flagged_reason(report: Mapping[str, Any]) -> str:
    """Name up to five categories and the finding count; never quote an excerpt."""
    categories = _category_names(report.get("categories"))
    if is_marked_incomplete(report) and SCAN_INCOMPLETE_CATEGORY not in categories:
        categories.append(SCAN_INCOMPLETE_CATEGORY)
    findings = report.get("findings")
    count = (
        f"{len(findings)} finding(s)"
        if isinstance(findings, list | tuple)
        else "finding count unknown"
    )
    if not categories:
        return f"Accessed benchmark material; the report names no category ({count})."
    named = ", ".join(categories[:MAX_NAMED_CATEGORIES])
    extra = len(categories) - MAX_NAMED_CATEGORIES
    more = f" +{extra} more" if extra > 0 else ""
    return (
        f"Accessed benchmark material: {named}{more} ({count}). "
        "See cheating_report for the matched findings."
    )


def _category_names(raw: Any) -> list[str]:
    # Only a real list counts: a bare string would otherwise be read character by
    # character, and an object's keys are not categories.
    if not isinstance(raw, list | tuple):
        return []
    names: list[str] = []
    for item in raw:
        if isinstance(item, str):
            name = sanitize_text(item, cap=_CATEGORY_CAP)
            if name and name not in names:
                names.append(name)
    return names
