"""JUnit XML for CI test reports: one test case per record, one suite per log file.

A flagged record is a ``failure`` whose message names the rules that fired and whose
body lists each finding's rule, step and surface; a scan that could not finish is a
failure too (fail closed), saying so; a record with nothing to scan (``no_data``) is
``skipped``, never passed. Dismissed findings are listed in ``system-out`` so the
reviewed audit trail shows in the CI report without failing the case.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Sequence

from benchguard.results.formats._record import ReportedRecord


def junit_xml(records: Sequence[ReportedRecord], *, name: str = "benchguard") -> str:
    """The JUnit XML document (UTF-8 text, with declaration) for ``records``."""
    root = ET.Element("testsuites", name=name)
    suites: dict[str, list[ReportedRecord]] = {}
    for record in records:
        suites.setdefault(record.file, []).append(record)
    for file, members in suites.items():
        suite = ET.SubElement(root, "testsuite", name=file)
        for record in members:
            _testcase(suite, file, record)
        _count(suite)
    _count(root)
    ET.indent(root)
    body = ET.tostring(root, encoding="unicode")
    return f'<?xml version="1.0" encoding="UTF-8"?>\n{_xml_safe(body)}\n'


def _testcase(suite: ET.Element, file: str, record: ReportedRecord) -> None:
    case = ET.SubElement(suite, "testcase", classname=file, name=record.label)
    report = record.report
    if report.status == "no_data":
        ET.SubElement(case, "skipped", message="no data: nothing in the record to scan")
    elif report.status == "flagged":
        rules = sorted({f.rule for f in report.findings})
        reasons = [f"rules: {', '.join(rules)}"] if rules else []
        if report.incomplete:
            reasons.append("scan incomplete: the run could not be verified")
        failure = ET.SubElement(
            case,
            "failure",
            type="benchguard.flagged",
            message=f"flagged ({', '.join(report.categories)}): {'; '.join(reasons)}",
        )
        # One line per distinct finding: two matches of one rule on the same surface
        # of the same step read the same here and are listed once.
        failure.text = "\n".join(
            dict.fromkeys(
                f"{f.rule} [{f.severity}] {f.material}: {f.field} of "
                + (
                    "the final output"
                    if f.trajectory_index is None
                    else f"step {f.trajectory_index}"
                )
                + (f" ({f.tool})" if f.tool else "")
                for f in report.findings
            )
        )
    elif report.status == "review":
        # Not a failure (the run is not gated); the weak findings are listed for a reader.
        review = ET.SubElement(case, "system-out")
        review.text = "review (weak findings only, not gated):\n" + "\n".join(
            dict.fromkeys(
                f"{f.rule} [{f.strength}] {f.material}: {f.field} of "
                + (
                    "the final output"
                    if f.trajectory_index is None
                    else f"step {f.trajectory_index}"
                )
                for f in report.findings
            )
        )
    if report.dismissed:
        out = ET.SubElement(case, "system-out")
        out.text = "\n".join(
            f"dismissed {d.finding.rule} by {d.reviewer} ({d.date}): {d.reason}"
            for d in report.dismissed
        )


def _count(element: ET.Element) -> None:
    cases = list(element.iter("testcase"))
    element.set("tests", str(len(cases)))
    element.set("failures", str(sum(c.find("failure") is not None for c in cases)))
    element.set("errors", "0")
    element.set("skipped", str(sum(c.find("skipped") is not None for c in cases)))


def _xml_safe(text: str) -> str:
    """Drop characters XML 1.0 cannot carry (control characters from untrusted names),
    which ElementTree would otherwise write as they are, making the file unreadable."""
    return "".join(
        c
        for c in text
        if c in "\t\n\r"
        or 0x20 <= ord(c) <= 0xD7FF
        or 0xE000 <= ord(c) <= 0xFFFD
        or 0x10000 <= ord(c) <= 0x10FFFF
    )
