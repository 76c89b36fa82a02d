"""The status a stored (possibly malformed) cheating report stands for, read fail-closed.

A persisted report is untrusted input: an older version, a hand edit or a bug can leave
``status: clean`` beside findings. One predicate decides what such a report means, so
the detector's lenient reader, the integrity gate and the published row cannot
disagree: whatever its ``status`` says (``clean``, ``no_data`` or a value this version
does not know), a report that lists findings, names categories or carries an
``incomplete`` mark is flagged. ``review`` (only weak findings) is believed only when
every finding says ``strength: weak`` and the scan is complete.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from benchguard.detection.models import ReportStatus

KNOWN_STATUSES: tuple[ReportStatus, ...] = ("clean", "flagged", "review", "no_data")


def stored_status(report: Any) -> ReportStatus | None:
    """The status ``report`` stands for; ``None`` when there is no usable verdict.

    ``None`` for a non-object, ``{}`` or an unknown ``status`` that carries no
    evidence. Otherwise ``flagged`` when the report carries evidence
    (:func:`carries_evidence`), else its own known status.
    """
    if not isinstance(report, Mapping):
        return None
    status = report.get("status")
    if carries_evidence(report):
        return "review" if status == "review" and _only_weak(report) else "flagged"
    for known in KNOWN_STATUSES:
        if status == known:
            return known
    return None


def _only_weak(report: Mapping[str, Any]) -> bool:
    """A ``review`` report reads as review only when it is complete and every finding
    is an object marked ``strength: weak``; anything else (a finding with no strength,
    junk, a bare category) reads as flagged (fail closed)."""
    findings = report.get("findings")
    if is_marked_incomplete(report) or not isinstance(findings, list | tuple) or not findings:
        return False
    if not all(isinstance(f, Mapping) and f.get("strength") == "weak" for f in findings):
        return False
    # A category no finding carries is evidence nobody weighed (a bound, a hand edit).
    categories = report.get("categories")
    if categories is None:
        return True
    if not isinstance(categories, list | tuple):
        return False
    return set(map(str, categories)) <= {str(f.get("category")) for f in findings}


def carries_evidence(report: Mapping[str, Any]) -> bool:
    """Findings, categories (any non-empty shape) or an incomplete mark are present."""
    return is_marked_incomplete(report) or any(
        _non_empty(report.get(key)) for key in ("findings", "categories")
    )


def is_marked_incomplete(report: Mapping[str, Any]) -> bool:
    return is_marked(report, "incomplete")


def is_marked(mapping: Mapping[str, Any], key: str) -> bool:
    """``mapping`` carries the mark ``key``: only absent, null or false means not.

    Junk such as ``"yes"`` or ``1`` reads as marked (fail closed).
    """
    mark = mapping.get(key)
    return mark is not None and mark is not False


def _non_empty(value: Any) -> bool:
    # A clean verdict has no findings or categories at all, so any non-empty value
    # counts whatever its shape.
    if value is None or value is False:
        return False
    try:
        return len(value) > 0
    except TypeError:
        return True  # a number or other scalar where a list belongs: junk, fail closed
