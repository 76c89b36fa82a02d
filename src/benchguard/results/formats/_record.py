"""The one input every output format reads."""

from __future__ import annotations

from dataclasses import dataclass

from benchguard.detection.models import CheatingReport


@dataclass(frozen=True)
class ReportedRecord:
    """A record's verdict and where it came from.

    ``label`` names the record the way people refer to it (``folder#iteration`` for a
    harness run, the log's own name for an imported one); ``line`` is the 1-based line
    the record starts on when its format has one record per line, else None.
    """

    file: str
    label: str
    report: CheatingReport
    line: int | None = None
