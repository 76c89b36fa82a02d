"""What a scan could not read, and what its summary owes the reader.

A scan fails closed on its input: a skipped sample, a file it could not read or did
not recognise, a file with no records, or no input at all is an *input gap*. Gaps are
listed (text: one warning each; JSON: one entry each, with ``"report": null`` and the
``skipped`` reason) and make the exit code 3 (incomplete) unless bad input (2) wins.
The summary also names the profile and ruleset used, and warns when the input's
framework has material the chosen profile does not cover.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from benchguard.engines import FileScan

EXIT_INCOMPLETE = 3

# The profile that covers each log format's own framework material.
FORMAT_PROFILES: dict[str, str] = {
    "inspect": "inspect",
    "verifiers": "verifiers",
    "swe-agent": "swe-bench",
    "mini-swe-agent": "swe-bench",
    "atif": "terminal-bench",
}
_FRAMEWORK_NAMES = {
    "inspect": "Inspect logs",
    "verifiers": "verifiers traces",
    "swe-agent": "SWE-agent trajectories",
    "mini-swe-agent": "mini-swe-agent trajectories",
    "atif": "Harbor ATIF trajectories",
}


@dataclass(frozen=True)
class InputGap:
    """One thing the scan did not read: the file, the record if known, and why."""

    file: str
    reason: str
    record: int | None = None

    def json_entry(self) -> dict[str, Any]:
        return {
            "file": self.file,
            "format": None,
            "record": self.record,
            "name": None,
            "label": None,
            "report": None,
            "skipped": self.reason,
        }


def input_gaps(
    scans: Sequence[FileScan], *, named: set[str], walked_roots: Sequence[str]
) -> list[InputGap]:
    """Every gap in what ``scans`` read, in file order.

    ``named`` are files given on the command line (their read failures are bad input,
    reported elsewhere, not gaps); ``walked_roots`` are the paths given, used to name
    an input that held no log file at all.
    """
    gaps: list[InputGap] = []
    for scanned in scans:
        for problem in scanned.problems:
            gaps.append(InputGap(scanned.path, problem))
        if scanned.error_kind == "unknown-format" and scanned.path not in named:
            gaps.append(InputGap(scanned.path, "not a log format we read; skipped"))
        elif scanned.error and scanned.path not in named:
            gaps.append(InputGap(scanned.path, scanned.error))
        elif not scanned.error and not scanned.records:
            gaps.append(InputGap(scanned.path, "the file holds no records"))
    where = ", ".join(walked_roots) or "the input"
    if not scans:
        gaps.append(InputGap(where, "no log files found: nothing was scanned"))
    statuses = [r.report.status for s in scans for r in s.records]
    if statuses and all(status == "no_data" for status in statuses):
        # Every record was read and none held anything to scan (e.g. an Inspect log
        # whose samples all errored): a clean exit would vouch for nothing.
        gaps.append(
            InputGap(
                where,
                f"no record had anything to scan ({len(statuses)} record(s), all no data)",
            )
        )
    return gaps


def coverage_warnings(scans: Sequence[FileScan], profile: str | Sequence[str]) -> list[str]:
    """Warnings for inputs whose framework's material the profiles do not cover (none
    under ``auto``, which chose each file's profiles from the file). ``profile`` is one
    name or every name given (a repeated ``--profile`` is their union)."""
    names = (profile,) if isinstance(profile, str) else tuple(profile)
    warnings: list[str] = []
    if "auto" in names:
        return warnings
    formats = sorted({s.format for s in scans if s.format and s.records})
    shown = " + ".join(names)
    for name in formats:
        wanted = FORMAT_PROFILES.get(name)
        if wanted is not None and wanted not in names:
            warnings.append(
                f"the input holds {_FRAMEWORK_NAMES[name]}, whose material (prior logs, "
                f"answers, history) profile {shown} does not cover; "
                f"add --profile {wanted} (repeated profiles are a union)"
            )
    return warnings


def summary_line(profile: str, digest: str, gaps: Sequence[InputGap], exit_code: int) -> str:
    """The scan's provenance line, its incompleteness when there is any, and the exit
    code the process really ends with (a finding's 1 wins over an input gap's 3)."""
    line = f"profile {profile}, ruleset {digest[:19]}"
    if gaps:
        line += f"; INCOMPLETE: {len(gaps)} input problem(s) (skipped, unread or empty)"
    return f"{line}; exit code {exit_code}"


__all__ = [
    "EXIT_INCOMPLETE",
    "FORMAT_PROFILES",
    "InputGap",
    "coverage_warnings",
    "input_gaps",
    "summary_line",
]
