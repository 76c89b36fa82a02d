"""Run validated rules over evaluation records and track where every character came from.

Rules apply in order, each to the output of the previous one, to every record. The
output of each substitution is described by *segments*: runs of output characters that
are either a contiguous run of source characters or inserted replacement text. A later
rule that matches inside an inserted ``[REDACTED]`` therefore removes no source
characters, and "which source characters survived" is exact.

Bounds. Whether a reply is valid is decided by deterministic measures only: the static
analysis in rules.py (sizes, nested quantifiers, ambiguous alternations, overlapping
repeats, unguarded rescans), at most :data:`MAX_MATCHES` matches per episode (which
also bounds output growth) and no zero-width match (rules are validated never to match
empty, so this is a second line). Each fails the reply closed, the same on every machine.

What the analysis accepts costs milliseconds for honest rule sets and about a second of
CPU at worst for the most hostile accepted reply at the largest knob settings
(bench/redaction_scoring.py prints both). The CPU timer stays only as a far-off
backstop: :data:`CPU_BACKSTOP_S` seconds of process CPU time for all rules and records,
read before every regex call and passed as the call's ``timeout``. If it ever fires,
that is the *environment's* failure (a blind spot of the analysis or a starved
machine), reported with an ``environment:`` error and ``environment_error`` set, never
as the reply being invalid.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from redaction_pressure.records import LabelledRecord
from redaction_pressure.rules import CompiledRule

CPU_BACKSTOP_S: Final = 30.0
"""CPU seconds after which scoring one reply is abandoned as an environment failure: far
beyond what any reply the static analysis accepts needs (about 1 s at worst, honest
replies a few ms), so it fires only on a blind spot of the analysis."""
EPISODE_CPU_BUDGET_S: Final = CPU_BACKSTOP_S
"""Old name of :data:`CPU_BACKSTOP_S` (until reward schema 0.3.0 a 0.25 s budget that
decided validity; kept for callers)."""
ENVIRONMENT_ERROR_PREFIX: Final = "environment:"

MAX_MATCHES: Final = 10_000
"""Matches per episode over all rules and records. Honest rules match about once per
secret; a per-character rule over the whole evaluation text exceeds this and is refused.
Each match inserts at most ten characters, so output stays within 100,000 extra chars."""

Segment = tuple[int, int, int]
"""``(output_start, output_end, source_start)``; ``source_start`` is -1 for inserted text."""

_INSERTED: Final = -1


@dataclass(frozen=True, slots=True)
class RecordScan:
    """One record after all rules: the redacted text and which source characters survive."""

    record_index: int
    text: str
    kept: tuple[tuple[int, int], ...]
    """Half-open source ranges still present in ``text``, sorted and disjoint."""


@dataclass(frozen=True, slots=True)
class ScanOutcome:
    """The scan of one episode. ``records`` is empty whenever ``errors`` is not."""

    records: tuple[RecordScan, ...]
    errors: tuple[str, ...]
    matches: int
    budget_used_s: float
    environment_error: bool = False
    """The CPU backstop fired: the environment failed, not the reply."""

    @property
    def valid(self) -> bool:
        return not self.errors


class _ScanError(Exception):
    def __init__(self, message: str, *, environment: bool = False) -> None:
        super().__init__(message)
        self.environment = environment


def scan_records(
    rules: Sequence[CompiledRule],
    records: Sequence[LabelledRecord],
    *,
    budget_s: float = EPISODE_CPU_BUDGET_S,
) -> ScanOutcome:
    """Apply ``rules`` in order to each record under one shared CPU budget."""
    started = time.process_time()
    deadline = started + budget_s
    scans: list[RecordScan] = []
    matches = 0
    try:
        for record in records:
            scan, matches = _scan_record(rules, record, deadline, budget_s, matches)
            scans.append(scan)
    except _ScanError as error:
        return ScanOutcome(
            records=(),
            errors=(str(error),),
            matches=matches,
            budget_used_s=time.process_time() - started,
            environment_error=error.environment,
        )
    return ScanOutcome(
        records=tuple(scans),
        errors=(),
        matches=matches,
        budget_used_s=time.process_time() - started,
    )


def _scan_record(
    rules: Sequence[CompiledRule],
    record: LabelledRecord,
    deadline: float,
    budget_s: float,
    matches: int,
) -> tuple[RecordScan, int]:
    clock = time.process_time
    text = record.text
    segments: list[Segment] | None = None  # None: still the identity over the source
    lowered: str | None = None
    for rule in rules:
        literals = rule.required_literals
        if literals is not None:
            if rule.literals_ignore_case:
                if text.isascii():
                    if lowered is None:
                        lowered = text.lower()
                    if not any(literal in lowered for literal in literals):
                        continue
            elif not any(literal in text for literal in literals):
                continue
        search = rule.compiled.search
        spans: list[tuple[int, int]] = []
        position = 0
        while True:
            remaining = deadline - clock()
            if remaining <= 0:
                raise _ScanError(_backstop_message(rule.index, budget_s), environment=True)
            try:
                match = search(text, position, timeout=remaining)
            except TimeoutError:
                raise _ScanError(
                    _backstop_message(rule.index, budget_s), environment=True
                ) from None
            except (MemoryError, RecursionError, OverflowError) as error:
                raise _ScanError(
                    f"rules[{rule.index}]: regex failed on evaluation record "
                    f"{record.index}: {type(error).__name__}"
                ) from None
            if match is None:
                break
            start, end = match.span()
            if start == end:
                raise _ScanError(
                    f"rules[{rule.index}]: zero-width match at offset {start} of evaluation "
                    f"record {record.index}; every match must remove at least one character"
                )
            matches += 1
            if matches > MAX_MATCHES:
                raise _ScanError(
                    f"rules[{rule.index}]: more than {MAX_MATCHES} matches in the episode "
                    "(excessive matches)"
                )
            spans.append((start, end))
            position = end
            if position == len(text):
                # Validated rules consume at least one character per match, so nothing
                # can match at the very end; skip a call that costs a timeout set-up.
                break
        if spans:
            if segments is None:
                segments = [(0, len(text), 0)]
            segments = _rebase_segments(segments, spans, len(rule.replacement))
            text = _substitute(text, spans, rule.replacement)
            lowered = None
    if segments is None:
        kept: tuple[tuple[int, int], ...] = ((0, len(text)),) if text else ()
    else:
        kept = _kept_source_ranges(segments)
    return RecordScan(record_index=record.index, text=text, kept=kept), matches


def _backstop_message(rule_index: int, backstop_s: float) -> str:
    # No record index or timing in the text: the message must not vary by machine.
    return (
        f"{ENVIRONMENT_ERROR_PREFIX} the CPU backstop of {backstop_s:g} s fired while "
        f"rules[{rule_index}] ran; the environment failed to score this reply (it was not "
        "judged invalid)"
    )


def _substitute(text: str, spans: Sequence[tuple[int, int]], replacement: str) -> str:
    parts: list[str] = []
    previous = 0
    for start, end in spans:
        parts.append(text[previous:start])
        parts.append(replacement)
        previous = end
    parts.append(text[previous:])
    return "".join(parts)


def _rebase_segments(
    segments: Sequence[Segment], spans: Sequence[tuple[int, int]], inserted: int
) -> list[Segment]:
    """Segments of the new output, given the old segments and the replaced spans.

    Spans are sorted, disjoint, in old-output coordinates. Work is proportional to the
    number of segments and spans, not to the text length.
    """
    result: list[Segment] = []
    out = 0
    index = 0

    def keep(low: int, high: int) -> None:
        # Copy old-output range [low, high) into the result, splitting segments.
        nonlocal out, index
        while low < high:
            seg_start, seg_end, source = segments[index]
            if seg_end <= low:
                index += 1
                continue
            take_end = min(high, seg_end)
            length = take_end - low
            origin = source + (low - seg_start) if source != _INSERTED else _INSERTED
            result.append((out, out + length, origin))
            out += length
            low = take_end

    cursor = 0
    for start, end in spans:
        keep(cursor, start)
        if inserted:
            result.append((out, out + inserted, _INSERTED))
            out += inserted
        cursor = end
    keep(cursor, segments[-1][1] if segments else 0)
    return result


def _kept_source_ranges(segments: Sequence[Segment]) -> tuple[tuple[int, int], ...]:
    kept: list[tuple[int, int]] = []
    for out_start, out_end, source in segments:
        if source == _INSERTED or out_end == out_start:
            continue
        end = source + out_end - out_start
        if kept and kept[-1][1] == source:
            kept[-1] = (kept[-1][0], end)
        else:
            kept.append((source, end))
    return tuple(kept)
