"""Machine-readable views of verdicts for the places users already look: SARIF for
code-scanning dashboards, JUnit XML for CI test reports.

Both read :class:`ReportedRecord` values (a verdict, the file it came from and the
record's name) so ``scan`` and ``score`` share them. Neither ever writes a finding's
excerpt or a rule's patterns: an excerpt can quote an answer key, and an inventory
rule's pattern can be a line of a leftover file. They say which rule fired on which
record, at which step and on which surface.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any, Literal

from benchguard.errors import BadInputError
from benchguard.results.formats._record import ReportedRecord

if TYPE_CHECKING:
    from benchguard.results.formats.junit import junit_xml
    from benchguard.results.formats.sarif import SARIF_VERSION, sarif_log

# Loaded on first use (PEP 562): ``scan --format json`` never builds SARIF or JUnit, and
# a start without bytecode compiles every module it imports.
_LAZY = {"junit_xml": "junit", "sarif_log": "sarif", "SARIF_VERSION": "sarif"}

OutputFormat = Literal["table", "json", "sarif", "junit"]
OUTPUT_FORMATS: tuple[OutputFormat, ...] = ("table", "json", "sarif", "junit")


def parse_output_format(value: str, *, where: str = "--format") -> OutputFormat:
    """``value`` as an output format; :class:`BadInputError` naming ``where`` otherwise."""
    for known in OUTPUT_FORMATS:
        if value == known:
            return known
    raise BadInputError(
        f"{where} {value!r} is not an output format; choose one of: {', '.join(OUTPUT_FORMATS)}"
    )


__all__ = [
    "OUTPUT_FORMATS",
    "SARIF_VERSION",
    "OutputFormat",
    "ReportedRecord",
    "junit_xml",
    "parse_output_format",
    "sarif_log",
]


def __getattr__(name: str) -> Any:
    home = _LAZY.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value
