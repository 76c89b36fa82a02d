"""Run validated rules over evaluation records and track where every character came from.

Rules apply in order, each to the output of the previous one, to every record. The
output of each substitution is described by *segments*: runs of output characters that
are either a contiguous run of source characters or inserted replacement text. A later
rule that matches inside an inserted ``[REDACTED]`` therefore removes no source
characters, and "which source characters survived" is exact.

Bounds (all fail closed: any error makes the whole outcome invalid and stops scanning):

* one episode budget of :data:`EPISODE_CPU_BUDGET_S` seconds of *CPU time* for all rules
  and records, read from ``time.process_time`` before every regex call and passed as the
  call's ``timeout`` (``regex`` also counts process CPU time, and restarts its timer on
  every call). CPU time, not wall time, so that a busy machine cannot turn a passing
  reply into a timed-out one: the same reply gets the same reward idle or under load;
* at most :data:`MAX_MATCHES` matches per episode, which also bounds output growth;
* a zero-width match is an error (rules are validated never to match empty, so this is
  the backstop).

Process CPU time counts every thread of the process, so a scan sharing its process with
other busy threads fails sooner, never later (conservative). For load-independent
rewards, scan in a single-threaded process: the taskset does, through
:mod:`redaction_pressure.scoring_pool`, whose wall-clock backstop bounds the wait.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from redaction_pressure.records import LabelledRecord
from redaction_pressure.rules import CompiledRule

EPISODE_CPU_BUDGET_S: Final = 0.25
"""CPU seconds for one reply over all evaluation records. Honest rule sets score in a few
milliseconds (bench/redaction_scoring.py), so this leaves two orders of magnitude of
headroom; load does not eat into it, because it is CPU time. Small enough that replies
which burn all of it (hostile rules) still let training proceed on two cores
(bench/redaction_throughput.py)."""

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

    @property
    def valid(self) -> bool:
        return not self.errors


class _ScanError(Exception):
    pass


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
                raise _ScanError(
                    f"rules[{rule.index}]: episode budget of {budget_s:g} CPU seconds "
                    f"exhausted on evaluation record {record.index}"
                )
            try:
                match = search(text, position, timeout=remaining)
            except TimeoutError:
                raise _ScanError(
                    f"rules[{rule.index}]: regex timed out on evaluation record "
                    f"{record.index}; episode budget of {budget_s:g} CPU seconds exhausted"
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
