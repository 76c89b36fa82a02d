"""How ``benchguard score`` prints a :class:`benchguard.workflows.score_command.ScoreResult`:
notes on stderr, then on stdout the summary table with what was written (or JSON rows,
SARIF or JUnit), then what needs attention and what was bad input, on stderr.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence

from rich.table import Table
from rich.text import Text

from benchguard import __version__
from benchguard.cli._json_text import indented_json
from benchguard.cli._output import plain_console, print_error, print_warning
from benchguard.cli._view import print_table
from benchguard.detection.models import Rule
from benchguard.engines.work import record_label
from benchguard.results.aggregate import ROWS_FILENAME
from benchguard.results.formats import ReportedRecord, junit_xml, sarif_log
from benchguard.results.rows import INTEGRITY_STATUSES, ResultRow
from benchguard.workflows.profiles import describe_names
from benchguard.workflows.score import RESULTS_FILENAME, ScoreInput, stored_report
from benchguard.workflows.score_command import ScoreResult


def print_score(result: ScoreResult) -> None:
    """Everything ``score`` prints for ``result``."""
    # Markup off: paths, task folders and setup ids in these files print as themselves.
    out, err = plain_console(), plain_console(stderr=True)
    outcome = result.outcome
    for note in outcome.notes:
        print_warning(err, note)
    if result.output_format == "table":
        if outcome.scored:
            print_table(out, _score_summary([(str(i.path), rows) for i, rows in outcome.scored]))
        for item, _ in outcome.scored:
            out.print(
                f"wrote {item.target / RESULTS_FILENAME}, {item.target / ROWS_FILENAME}",
                soft_wrap=True,
            )
        for described in dict.fromkeys(c.describe() for c in outcome.choices.values()):
            out.print(f"profiles: {described}", soft_wrap=True)
        if not outcome.choices:
            out.print(f"profiles: {describe_names(result.profiles)}", soft_wrap=True)
    else:
        _print_scored(result.output_format, outcome.scored, result.rules)
    for message in (*outcome.incomplete, *outcome.warnings):
        print_warning(err, message)
    for message in outcome.bad:
        print_error(err, message)
    review = sum(row.integrity_status == "review" for row in outcome.rows)
    if review:
        print_warning(err, f"{review} record(s) sent to review (weak findings only; not gated)")


def _print_scored(
    chosen: str, scored: Sequence[tuple[ScoreInput, list[ResultRow]]], ruleset: Sequence[Rule]
) -> None:
    """The scored records as JSON rows, SARIF or JUnit (each naming its input file)."""
    if chosen == "json":
        document = [
            {
                "input": str(item.path),
                "outputs": str(item.target),
                "rows": [row.to_json() for row in rows],
            }
            for item, rows in scored
        ]
        sys.stdout.write(indented_json(document) + "\n")
        return
    reported = [
        ReportedRecord(str(item.path), record_label(record, index), stored_report(record))
        for item, _ in scored
        for index, record in enumerate(item.document.records)
        if isinstance(record, dict)
    ]
    if chosen == "sarif":
        log = sarif_log(reported, ruleset, tool_version=__version__)
        sys.stdout.write(indented_json(log) + "\n")
    else:
        sys.stdout.write(junit_xml(reported, name="benchguard score"))


def _score_summary(summaries: Sequence[tuple[str, list[ResultRow]]]) -> Table:
    """One line per scored file (read from its rows), and a total line when there are
    several."""
    several = len(summaries) > 1
    table = Table(title="Scored", title_justify="left", header_style="bold")
    if several:
        table.add_column("results", overflow="fold")
    for name in ("runs", "scored", "gated", *INTEGRITY_STATUSES, "dismissed"):
        table.add_column(name, justify="right")
    for label, rows in summaries:
        label_cell = [Text(label)] if several else []
        table.add_row(*label_cell, *_summary_cells(rows))
    if several:
        every = [row for _, rows in summaries for row in rows]
        table.add_row(Text("total", style="bold"), *_summary_cells(every))
    return table


def _summary_cells(rows: Sequence[ResultRow]) -> list[str | Text]:
    status = [r.integrity_status for r in rows]
    return [
        str(len(rows)),
        str(sum(r.outcome_score is not None for r in rows)),
        Text(str(sum(r.catastrophic for r in rows)), style="bold red"),
        *(str(status.count(s)) for s in INTEGRITY_STATUSES),
        str(sum(r.dismissed_findings for r in rows)),
    ]
