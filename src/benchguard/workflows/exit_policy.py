"""One exit policy for every command that reaches a verdict (``scan``, ``score``, ``run``).

0 clean; 1 something gated or flagged; 2 bad input; 3 incomplete (something skipped,
unread, errored or interrupted). When several apply, bad input wins over a verdict and
a verdict over incompleteness: a cheating run is never hidden behind a skipped file,
and nothing is reported over a file that could not be used. The table of codes lives
in ``docs/exit-codes.md``; every command's help links there.

``review`` is the hook for a verdict that asks for a person's look without gating (the
detection work's ``review`` status): it exits 0 unless the caller was asked to fail on
it (``fail_on_review``), then 1.
"""

from __future__ import annotations

from benchguard.errors import EXIT_BAD_INPUT, EXIT_FINDINGS, EXIT_INCOMPLETE, EXIT_OK

EXIT_CODES_DOC = "docs/exit-codes.md"
# The status the review hook looks for (typed ``str``: the report and row statuses do
# not hold it yet).
REVIEW_STATUS: str = "review"


def verdict_exit_code(
    *,
    bad_input: bool = False,
    gated: bool = False,
    incomplete: bool = False,
    review: bool = False,
    fail_on_review: bool = False,
) -> int:
    """The exit code for what a command found, in the documented order of precedence."""
    if bad_input:
        return EXIT_BAD_INPUT
    if gated or (review and fail_on_review):
        return EXIT_FINDINGS
    if incomplete:
        return EXIT_INCOMPLETE
    return EXIT_OK


__all__ = ["EXIT_CODES_DOC", "REVIEW_STATUS", "verdict_exit_code"]
