"""The one lenient edge parser: any JSON-ish value in, a bounded ``RunRecord`` out.

The harness's capture, the importers and the results reader all pass through here;
inside, code trusts the type. The bounds are named in ``record.bounds``.

What the edge parser guarantees, whatever the input was:

- text is valid Unicode: lone surrogates (``"\\ud800"`` in a JSON line) and invalid
  UTF-8 are replaced by U+FFFD, so writing the record can never fail on encoding;
- nesting is at most :data:`MAX_DEPTH` levels: a deeper value is replaced by a string
  holding its text leaves (capped), so what it said is still scanned;
- non-finite numbers (``NaN``, ``Infinity``) are refused: replaced by ``null`` with a
  note in ``record_errors``;
- a trajectory keeps at most :data:`MAX_STEPS` steps and :data:`MAX_TRAJECTORY_BYTES`
  of step text (its head and its tail, as the transcript reader does for bytes); a cut
  sets ``transcript_truncated``, which the detector reads as an incomplete scan, and
  says what was dropped in ``transcript_errors``. Padding never makes a record clean;
- the output keeps :data:`MAX_OUTPUT_CHARS` characters (head and tail, marked as a
  cut); any other field but the report past :data:`MAX_FIELD_CHARS` characters of text
  is kept as cut text (a typed field then falls back to its default, noted), so a
  record's size is bounded field by field.

Foreign records (imported logs, older results files) may carry keys this model does not
declare: they are kept (``extra="allow"``) after the same sanitising, and written back
as they came.
"""

from __future__ import annotations

import functools
import json
import math
import re
from collections import deque
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Generic, TypeVar

from pydantic import TypeAdapter, ValidationError

from benchguard.record.bounds import (
    CUT_MARK,
    DEPTH_MARK,
    MAX_DEPTH,
    MAX_FIELD_CHARS,
    MAX_FLATTENED_CHARS,
    MAX_HEAD_STEP_BYTES,
    MAX_HEAD_STEPS,
    MAX_NOTES,
    MAX_OUTPUT_CHARS,
    MAX_STEPS,
    MAX_TAIL_STEP_BYTES,
    MAX_TAIL_STEPS,
    MAX_TRAJECTORY_BYTES,
    REPLACEMENT,
)
from benchguard.record.run import RunRecord
from benchguard.record.steps import STEP_STATUSES, Step

T = TypeVar("T")
_SURROGATE = re.compile("[\ud800-\udfff]")
# Where a replaced value sat, in a note: enough to find it, never the whole path.
_MAX_WHERE_CHARS = 120


@dataclass
class _Notes:
    """What sanitising replaced, capped at MAX_NOTES messages plus a count."""

    messages: list[str] = field(default_factory=list)
    dropped: int = 0
    # Characters of text sanitised so far (see sanitize_json).
    chars: int = 0

    def add(self, message: str) -> None:
        if len(self.messages) < MAX_NOTES:
            self.messages.append(message)
        else:
            self.dropped += 1

    def result(self) -> list[str]:
        more = [f"... and {self.dropped} more replaced value(s)"] if self.dropped else []
        return self.messages + more


def clean_text(text: str) -> str:
    """``text`` with lone surrogates replaced by U+FFFD (anything else unchanged)."""
    if text.isascii():
        return text
    try:
        text.encode("utf-8")
        return text
    except UnicodeEncodeError:
        return _SURROGATE.sub(REPLACEMENT, text)


def decode_bytes(data: bytes) -> str:
    """UTF-8 bytes as text, invalid sequences (and encoded surrogates) replaced."""
    return data.decode("utf-8", errors="replace")


def sanitize_json(value: Any, notes: _Notes | None = None, *, where: str = "") -> Any:
    """A JSON-safe copy of ``value``: valid text, finite numbers, at most MAX_DEPTH deep.

    Never recurses past MAX_DEPTH; anything deeper becomes a flattened string.
    Non-JSON values (a tuple from an importer, a Path) become lists and strings.
    ``notes.chars`` grows by the characters of text kept (a step's cost, cheaply).
    """
    sink = notes if notes is not None else _Notes()
    return _sanitize(value, 0, sink, (where,) if where else ())


# A value's place, as a chain of parts joined only when a note needs it (most values
# never do, and building the string for each of them dominated the parser's time).
_Where = tuple[Any, ...]


def _sanitize(value: Any, depth: int, notes: _Notes, where: _Where) -> Any:
    kind = type(value)
    if kind is str:
        notes.chars += len(value)
        return value if value.isascii() else clean_text(value)
    if value is None or kind is bool or kind is int:
        return value
    if kind is float:
        if math.isfinite(value):
            return value
        notes.add(f"{_where_text(where)}: non-finite number {value!r} replaced by null")
        return None
    if depth >= MAX_DEPTH and isinstance(value, Mapping | list | tuple):
        notes.add(f"{_where_text(where)}: nested deeper than {MAX_DEPTH} levels; flattened")
        flat = DEPTH_MARK.format(depth=MAX_DEPTH) + flatten_leaves(value, MAX_FLATTENED_CHARS)
        notes.chars += len(flat)
        return flat
    if kind is dict or isinstance(value, Mapping):
        out: dict[str, Any] = {}
        chars = 0
        for key, item in value.items():
            name = key if type(key) is str and key.isascii() else clean_text(str(key))
            chars += len(name)
            # ASCII text and plain scalars, most leaves, are kept as they are here
            # rather than in a call each (the walk is the edge parser's main cost).
            item_kind = type(item)
            if item_kind is str and item.isascii():
                chars += len(item)
                out[name] = item
            elif item is None or item_kind is bool or item_kind is int:
                out[name] = item
            else:
                out[name] = _sanitize(item, depth + 1, notes, (where, ".", name))
        notes.chars += chars
        return out
    if kind is list or isinstance(value, list | tuple):
        items: list[Any] = []
        for index, item in enumerate(value):
            item_kind = type(item)
            if item_kind is str and item.isascii():
                notes.chars += len(item)
                items.append(item)
            elif item is None or item_kind is bool or item_kind is int:
                items.append(item)
            else:
                items.append(_sanitize(item, depth + 1, notes, (where, "[", index)))
        return items
    if isinstance(value, bool):
        return bool(value)
    if isinstance(value, str):  # a str subclass (an enum member)
        return _sanitize(str.__str__(value), depth, notes, where)
    if isinstance(value, int | float):  # an int or float subclass (an IntEnum)
        return _sanitize(
            int(value) if isinstance(value, int) else float(value), depth, notes, where
        )
    return _sanitize(str(value), depth, notes, where)


def _where_text(where: _Where) -> str:
    """``where`` as ``trajectory[3].args.command``, at most _MAX_WHERE_CHARS long."""
    parts: list[str] = []
    node: Any = where
    while node:
        if len(node) == 1:
            parts.append(str(node[0]))
            break
        parent, kind, key = node
        parts.append(f".{key}" if kind == "." else f"[{key}]")
        node = parent
    text = "".join(reversed(parts)).lstrip(".") or "value"
    if len(text) > _MAX_WHERE_CHARS:
        return text[:_MAX_WHERE_CHARS] + "..."
    return text


def flatten_leaves(value: Any, cap: int) -> str:
    """The keys and scalar leaves of ``value``, space-separated, at most ``cap`` chars.

    Iterative (an explicit stack), so no nesting depth can exhaust the call stack.
    """
    parts: list[str] = []
    size = 0
    stack: list[Any] = [value]
    while stack and size < cap:
        item = stack.pop()
        if isinstance(item, Mapping):
            for key, child in reversed(list(item.items())):
                stack.append(child)
                stack.append(str(key))
            continue
        if isinstance(item, list | tuple):
            stack.extend(reversed(item))
            continue
        if item is None:
            continue
        text = clean_text(item if isinstance(item, str) else str(item))
        if isinstance(item, float) and not math.isfinite(item):
            text = "null"
        parts.append(text)
        size += len(text) + 1
    return " ".join(parts)[:cap]


def bound_text(text: str, cap: int = MAX_OUTPUT_CHARS) -> tuple[str, bool]:
    """``text`` (surrogates replaced), or its head and tail past ``cap``; True if cut."""
    text = clean_text(text)
    if len(text) <= cap:
        return text, False
    head = cap * 6 // 7
    return text[:head] + CUT_MARK + text[len(text) - (cap - head) :], True


_STEP_KEYS = frozenset({"name", "args", "result", "status"})


def parse_step(raw: Any, notes: _Notes, where: str) -> dict[str, Any]:
    """One step from a foreign dict, leniently: bad fields become defaults, noted.

    A plain dict in the ``Step`` shape (validated into a ``Step`` with its record).
    A step already in that shape (most are) is built directly, only its arguments
    walked: the same dict and the same ``notes`` as :func:`_parse_any_step`, which
    handles everything else."""
    if type(raw) is dict and raw.keys() <= _STEP_KEYS:
        name = raw.get("name")
        args = raw.get("args")
        result = raw.get("result")
        status = raw.get("status", "completed")
        if (
            type(name) is str
            and name
            and type(args) is dict
            and (result is None or type(result) is str)
            and type(status) is str
            and status in STEP_STATUSES
        ):
            name = name if name.isascii() else clean_text(name)
            if result is not None and not result.isascii():
                result = clean_text(result)
            # What sanitize_json would count: every key, and each text value.
            notes.chars += sum(map(len, raw)) + len(name) + len(result or "")
            if "status" in raw:
                notes.chars += len(status)
            clean_args = _sanitize(args, 1, notes, ((where,), ".", "args"))
            return {"name": name, "args": clean_args, "result": result, "status": status}
    return _parse_any_step(raw, notes, where)


def _parse_any_step(raw: Any, notes: _Notes, where: str) -> dict[str, Any]:
    item = raw if isinstance(raw, Mapping) else {"name": "unknown", "args": {"raw": raw}}
    clean = sanitize_json(item, notes, where=where)
    name = clean.get("name")
    args = clean.get("args")
    result = clean.get("result")
    status = clean.get("status", "completed")
    if not isinstance(name, str) or not name:
        name = "unknown"
    if not isinstance(args, dict):
        args = {} if args is None else {"raw": args}
    if result is not None and not isinstance(result, str):
        result = json.dumps(result, sort_keys=True, ensure_ascii=False)
    if status not in STEP_STATUSES:
        status = "error"
    extra = {k: v for k, v in clean.items() if k not in ("name", "args", "result", "status")}
    if extra:
        args = {**args, "_unknown": extra}
    return {"name": name, "args": args, "result": result, "status": status}


class StepWindow(Generic[T]):
    """Steps arriving one at a time, kept within the record's bounds as they come.

    The first MAX_HEAD_STEPS steps (and MAX_HEAD_STEP_BYTES of text) are kept, then a
    rolling window of the last MAX_TAIL_STEPS (MAX_TAIL_STEP_BYTES): memory stays
    bounded however many steps a transcript holds, and a read at its end is kept.
    Generic over the step type, so the transcript reader can window its raw dicts
    before they are ever typed.
    """

    def __init__(
        self,
        *,
        head_steps: int = MAX_HEAD_STEPS,
        tail_steps: int = MAX_TAIL_STEPS,
        head_bytes: int = MAX_HEAD_STEP_BYTES,
        tail_bytes: int = MAX_TAIL_STEP_BYTES,
    ) -> None:
        self._head: list[T] = []
        self._head_bytes = 0
        self._tail: deque[tuple[T, int]] = deque()
        self._tail_bytes = 0
        self._limits = (head_steps, tail_steps, head_bytes, tail_bytes)
        self.seen = 0
        self.dropped = 0
        self._head_full = False

    def add(self, step: T, size: int) -> None:
        """Offer one step carrying ``size`` characters of text."""
        head_steps, tail_steps, head_bytes, tail_bytes = self._limits
        self.seen += 1
        if not self._head_full:
            if len(self._head) < head_steps and self._head_bytes + size <= head_bytes:
                self._head.append(step)
                self._head_bytes += size
                return
            self._head_full = True
        self._tail.append((step, size))
        self._tail_bytes += size
        while self._tail and (len(self._tail) > tail_steps or self._tail_bytes > tail_bytes):
            _, dropped_size = self._tail.popleft()
            self._tail_bytes -= dropped_size
            self.dropped += 1

    def extend(self, steps: list[T], sizes: list[int]) -> None:
        """:meth:`add` for each step and its size, in order; a trajectory that fits the
        head whole (most do) is taken in one step."""
        head_steps, _, head_bytes, _ = self._limits
        if (
            not self._head_full
            and len(self._head) + len(steps) <= head_steps
            and self._head_bytes + sum(sizes) <= head_bytes
        ):
            # add() would put every one of them in the head: nothing fails to fit.
            self._head.extend(steps)
            self._head_bytes += sum(sizes)
            self.seen += len(steps)
            return
        for step, size in zip(steps, sizes, strict=True):
            self.add(step, size)

    @property
    def truncated(self) -> bool:
        return self.dropped > 0

    def steps(self) -> list[T]:
        return self._head + [step for step, _ in self._tail]

    def problem(self) -> str | None:
        """What the cut dropped, in one line; None when nothing was."""
        if not self.dropped:
            return None
        return (
            f"trajectory cut at the record bound: kept the first {len(self._head)} and the "
            f"last {len(self._tail)} of {self.seen} steps "
            f"(limits {MAX_STEPS} steps, {MAX_TRAJECTORY_BYTES} bytes)"
        )


def step_size(step: Mapping[str, Any] | Step) -> int:
    """Characters of text a step carries: the cost of keeping (and scanning) it."""
    name: Any
    args: Any
    result: Any
    if isinstance(step, Step):
        name, args, result = step.name, step.args, step.result
    else:
        name, args, result = step.get("name"), step.get("args"), step.get("result")
    size = len(name) if isinstance(name, str) else 8
    size += len(result) if isinstance(result, str) else 0
    if args:
        try:
            size += len(json.dumps(args, ensure_ascii=False, default=str))
        except (ValueError, RecursionError):
            size += MAX_FLATTENED_CHARS
    return size


def bound_steps(raw_steps: Iterable[Any], notes: _Notes) -> StepWindow[dict[str, Any]]:
    window: StepWindow[dict[str, Any]] = StepWindow()
    steps: list[dict[str, Any]] = []
    sizes: list[int] = []
    for index, raw in enumerate(raw_steps):
        before = notes.chars
        step = _plain_step(raw, notes)
        if step is None:
            step = parse_step(raw, notes, f"trajectory[{index}]")
        steps.append(step)
        sizes.append(notes.chars - before)
    window.extend(steps, sizes)
    return window


def _plain_step(raw: Any, notes: _Notes) -> dict[str, Any] | None:
    """The commonest step, ``{name, args, result?, status?}`` with ASCII text and
    arguments that are ASCII strings, as :func:`parse_step` builds it (the same dict
    and the same ``notes.chars``); None for anything else, which ``parse_step`` reads.
    Nothing is ever noted for such a step, so no note is lost by taking this path."""
    if type(raw) is not dict or not raw.keys() <= _STEP_KEYS:
        return None
    name = raw.get("name")
    args = raw.get("args")
    result = raw.get("result")
    status = raw.get("status", "completed")
    if not (
        type(name) is str
        and name
        and name.isascii()
        and type(args) is dict
        and (result is None or (type(result) is str and result.isascii()))
        and type(status) is str
        and status in STEP_STATUSES
    ):
        return None
    chars = sum(map(len, raw)) + len(name) + len(result or "")
    if "status" in raw:
        chars += len(status)
    for key, value in args.items():
        if type(key) is not str or type(value) is not str or not key.isascii():
            return None
        if not value.isascii():
            return None
        chars += len(key) + len(value)
    notes.chars += chars
    return {"name": name, "args": dict(args), "result": result, "status": status}


_RECORD_FIELDS = frozenset(RunRecord.model_fields)


def parse_record(raw: Any) -> RunRecord:
    """A record from any JSON-ish value, leniently: never raises for bad content.

    Bounds and sanitising as in the module doc; fields of the wrong type fall back to
    their defaults with a note in ``record_errors``; a value that is not an object
    yields an empty record saying so. Unknown keys are kept, sanitised.
    """
    return _parse_record(raw, typed_steps=True)[0]


def _parse_record(raw: Any, *, typed_steps: bool) -> tuple[RunRecord, list[dict[str, Any]] | None]:
    """:func:`parse_record`, and the bounded steps as dicts. Without ``typed_steps`` the
    record's trajectory is left empty: the caller wants the step dicts, which are
    already in the ``Step`` shape, not ``Step`` models dumped back to the same dicts."""
    notes = _Notes()
    if not isinstance(raw, Mapping):
        record = RunRecord(status="error", error=f"record is {type(raw).__name__}, not an object")
        record.record_errors = [record.error or ""]
        return record, None
    trajectory_raw = raw.get("trajectory")
    window = bound_steps(trajectory_raw if isinstance(trajectory_raw, list) else [], notes)
    if trajectory_raw is not None and not isinstance(trajectory_raw, list):
        notes.add(f"trajectory is {type(trajectory_raw).__name__}, not a list; dropped")
    rest: dict[str, Any] = {}
    for raw_key, raw_value in raw.items():
        if raw_key == "trajectory":
            continue
        key = clean_text(str(raw_key))
        before = notes.chars
        rest[key] = sanitize_json(raw_value, notes, where=key)
        if key not in _UNCAPPED_FIELDS and notes.chars - before > MAX_FIELD_CHARS:
            # Bytes per record are bounded field by field: past the cap a field keeps
            # its text, cut, as one string (a typed field then falls back to its default).
            rest[key] = flatten_leaves(rest[key], MAX_FIELD_CHARS) + CUT_MARK.rstrip()
            notes.add(f"{key}: more than {MAX_FIELD_CHARS} characters; kept as cut text")
    fields: dict[str, Any] = {}
    for key, value in rest.items():
        if key in _RECORD_FIELDS:
            checked = _field_value(key, value, notes)
            if checked is not _INVALID:
                fields[key] = checked
        else:
            fields[key] = value
    if "output" in fields:
        fields["output"], cut = bound_text(fields["output"])
        if cut:
            fields["transcript_truncated"] = True
            notes.add(f"output cut at {MAX_OUTPUT_CHARS} characters")
    steps = None
    if trajectory_raw is not None:
        steps = window.steps()
        fields["trajectory"] = steps if typed_steps else []
    problem = window.problem()
    if problem is not None:
        fields["transcript_truncated"] = True
        fields["transcript_errors"] = [*fields.get("transcript_errors", []), problem]
    record = RunRecord.model_validate(fields)
    found = notes.result()
    if found:
        record.record_errors = [*record.record_errors, *found]
    return record, steps


_INVALID = object()
# Bounded elsewhere: the output by its own head-and-tail cap; the report by the
# detector (findings are capped) and by its dynamic rules being the harness's own home
# inventory. A report must never be cut: losing its rules could clear a cheat on rescan.
_UNCAPPED_FIELDS = frozenset({"output", "cheating_report"})


def _field_value(key: str, value: Any, notes: _Notes) -> Any:
    """``value`` if it fits the field's type, else ``_INVALID`` (the default is kept)."""
    try:
        return _field_adapter(key).validate_python(value)
    except ValidationError:
        notes.add(f"{key}: {_describe(value)} is not a valid value; default kept")
        return _INVALID


@functools.cache
def _field_adapter(key: str) -> TypeAdapter[Any]:
    info = RunRecord.model_fields[key]
    annotation: Any = info.annotation
    if info.metadata:
        annotation = Annotated[(annotation, *info.metadata)]
    return TypeAdapter(annotation)


def _describe(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def parse_records(raw_records: Iterable[Any]) -> Iterator[RunRecord]:
    """:func:`parse_record` over many records, one at a time."""
    for raw in raw_records:
        yield parse_record(raw)


def bounded_record_dict(raw: Any) -> dict[str, Any]:
    """The edge function for importers: a foreign record dict, bounded and sanitised,
    keeping only the keys it had (plus the marks a cut added).

    The same dict as ``parse_record(raw).to_json(complete=False)``, without typing the
    steps only to dump them back (``parse_step`` already gives the ``Step`` shape)."""
    record, steps = _parse_record(raw, typed_steps=False)
    dumped = record.to_json(complete=False)
    if steps is not None:
        dumped["trajectory"] = steps
    return dumped


def sanitized_record_dict(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A JSON-safe copy of a stored record: text, numbers and depth as the edge parser
    makes them, what was replaced appended to ``record_errors``, and nothing else
    changed (no typing, no step caps). For readers of our own files, which must give
    back exactly what was written when nothing needed replacing."""
    notes = _Notes()
    clean: dict[str, Any] = sanitize_json(raw, notes)
    found = notes.result()
    if found:
        kept = clean.get("record_errors")
        clean["record_errors"] = [*(kept if isinstance(kept, list) else []), *found]
    return clean


def dumps_strict(value: Any, *, indent: int | None = None) -> str:
    """JSON text that any strict reader accepts (``ValueError`` on NaN or Infinity)."""
    return json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)
