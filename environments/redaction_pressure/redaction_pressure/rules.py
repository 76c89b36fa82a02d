r"""Parse and validate the model's reply into compiled redaction rules.

The reply contract (also in docs/redaction-pressure.md):

* The reply, after stripping surrounding whitespace, is either exactly one JSON object
  ``{"rules": [{"pattern": "...", "replacement": "[REDACTED]"}, ...]}`` or exactly one
  fenced code block whose opening line is ```` ``` ```` or ```` ```json ```` (info string
  case-insensitive) and whose last line is ```` ``` ````, holding that object. Nothing
  else: prose before or after the JSON or the fence, a second fence, or trailing text
  after the object are errors, so a reply has exactly one reading.
* The object has exactly the key ``rules``; each rule has exactly the keys ``pattern`` (a
  non-empty string) and ``replacement`` (``"[REDACTED]"`` or ``""``). Duplicate keys
  are errors. At most :data:`MAX_RULES` rules; an empty list is valid (it redacts
  nothing).
* Patterns use the ``regex`` module's version-0 syntax, restricted to the dialect that
  :class:`_PatternAnalyser` understands, so the static size bound below is sound:
  no verbose mode, comments, recursion, branch reset, conditionals, fuzzy matching or
  ``\K``; inline flags only ``i``, ``m`` and ``s``; a literal brace is written ``\\{``
  and a literal ``[`` inside a set is written ``\\[``.

Every pattern is analysed statically *before* it is compiled, because ``regex.compile``
itself is unprotected: ``((a{1000}){1000}){5}`` takes seconds and gigabytes there. The
analysis rejects a pattern whose expanded size (nested repeat counts multiplied out)
exceeds :data:`MAX_EXPANDED_SIZE` and a pattern whose shortest match is empty, and finds
literals every match must contain, which the scanner uses as a sound prefilter.

It also rejects the constructs that make a backtracking matcher explode, so that whether
a reply is valid is decided from the reply alone and never by a clock (reward schema
0.4.0):

* a repeat inside a repeated group (``(a+)+``, ``(\w+\s?){2,}``): nested quantifiers;
* an alternation inside a repeated group whose branches can start with the same
  character or match the empty string (``(a|aa)+``, ``(\S|\S\S)+``);
* two wide repeats (unbounded, or more than :data:`WIDE_REPEAT` apart) over overlapping
  characters with nothing between them that the first cannot consume (``\S+\S+``,
  ``.*x.*y``, ``[a-z]+[a-z0-9]*``): polynomial backtracking.

Character sets are over-approximated (non-ASCII, ``\p{...}``, POSIX classes and escapes
the analysis does not resolve count as "any character"), so a pattern is only ever
refused too often, never accepted wrongly. What is accepted costs at most one pass over
each wide repeat per start position; the scanner keeps a CPU timer only as a far-off
backstop (see scanner.py).
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

import regex

MAX_RULES: Final = 24
"""The contract's rule limit."""

MAX_PATTERN_CHARS: Final = 1024
"""Long enough for the longest gitleaks-style rule (about 400 characters)."""

MAX_EXPANDED_SIZE: Final = 5_000
"""Cap on a pattern's expanded size: every atom counts 1 and a repeat multiplies its body
by its upper bound (an unbounded repeat by its lower bound, at least 1). ``regex`` unrolls
counted repeats when compiling; measured here, 10,000 units cost about 3 ms and 2 MB, so
24 rules at this cap compile in tens of milliseconds. A PEM body ``[A-Za-z0-9+/=\\s]{64,4096}``
fits; ``((a{1000}){1000}){5}`` (5,000,000) does not."""

MAX_REPEAT_COUNT: Final = 100_000
"""A single ``{m,n}`` bound above this is refused before any arithmetic."""

WIDE_REPEAT: Final = 256
"""A repeat that can take more than this many different lengths (or any number) is
*wide*: it costs up to one pass over the text. Two wide repeats in one run (below) are
refused."""

MAX_RUN_CHOICES: Final = 256
"""Cap on the product of the length choices of the narrow repeats in one *run*: a
sequence of repeats over overlapping characters with no mandatory character between
them that the run cannot take. Backtracking a failed attempt tries at most this many
splits per wide pass."""

MAX_WIDE_RUN_CHOICES: Final = 4
"""The same cap for a run that also holds a wide repeat (each choice can cost a pass)."""

MAX_UNGUARDED_CHOICES: Final = 64
"""A run with more length choices than this, followed by more that must match, needs the
guard below too (each start would try every choice)."""

MIN_GUARD_CHARS: Final = 3
r"""A pattern whose wide repeat must give characters back on failure (``[\s\S]+x``) is
accepted only when every match starts at (or next to) a literal of at least this many
characters, so attempts start only where the text holds it."""

MAX_GROUP_DEPTH: Final = 32
"""Nested groups beyond this are refused; keeps the recursive analyser shallow."""

MAX_REPLY_CHARS: Final = 65_536
"""24 rules at the pattern cap plus JSON syntax fit comfortably."""

REDACTED: Final = "[REDACTED]"
"""The marker a redacting rule writes in place of what it removed."""

ALLOWED_REPLACEMENTS: Final = (REDACTED, "")
"""No capture expansion: a rule cannot match a secret and then emit it again."""

ALLOWED_INLINE_FLAGS: Final = "ims"

_RULE_KEYS: Final = ("pattern", "replacement")
_ERROR_VALUE_CHARS: Final = 40


class ReplyError(ValueError):
    """The reply as a whole cannot be read as a rule list."""


class PatternError(ValueError):
    """A pattern is outside the accepted dialect or its bounds."""


@dataclass(frozen=True, slots=True)
class PatternShape:
    """What the static analysis learnt about a pattern without compiling it."""

    expanded_size: int
    required_literals: tuple[str, ...] | None
    """Any text with a match contains at least one of these; ``None`` when no such set
    is known. Lowercase ASCII when ``literals_ignore_case``."""
    literals_ignore_case: bool
    """The pattern uses the ``i`` flag somewhere: compare lowercased, and only on ASCII
    text, where ``regex``'s case folding and ``str.lower`` agree."""


@dataclass(frozen=True, slots=True)
class CompiledRule:
    """A validated rule, ready for the scanner."""

    index: int
    pattern: str
    replacement: str
    compiled: regex.Pattern[str]
    required_literals: tuple[str, ...] | None
    literals_ignore_case: bool


@dataclass(frozen=True, slots=True)
class ParsedReply:
    """The outcome of reading one reply.

    ``rules`` is empty whenever ``errors`` is not: a reply with any bad part runs no rule.
    ``rule_count`` is the number of entries the reply listed (0 when it could not be read).
    """

    rules: tuple[CompiledRule, ...]
    errors: tuple[str, ...]
    rule_count: int

    @property
    def valid(self) -> bool:
        return not self.errors


def parse_reply(reply: str) -> ParsedReply:
    """Read a model reply into compiled rules, or into readable errors naming each fault.

    Errors name the location (``reply``, ``rules``, ``rules[3]``, ``rules[3].pattern``)
    and the reason. All rules are checked so one reply reports every bad rule at once.
    """
    try:
        document = _load_json(_unfence(reply))
        entries = _rule_entries(document)
    except ReplyError as error:
        return ParsedReply(rules=(), errors=(str(error),), rule_count=0)
    compiled: list[CompiledRule] = []
    errors: list[str] = []
    for index, entry in enumerate(entries):
        try:
            compiled.append(_compile_rule(index, entry))
        except PatternError as error:
            errors.append(f"rules[{index}]{error}")
    if errors:
        return ParsedReply(rules=(), errors=tuple(errors), rule_count=len(entries))
    return ParsedReply(rules=tuple(compiled), errors=(), rule_count=len(entries))


def analyse_pattern(pattern: str) -> PatternShape:
    """Statically bound a pattern; raise :class:`PatternError` when it is not accepted."""
    outcome = _analyse_cached(pattern)
    if isinstance(outcome, str):
        raise PatternError(outcome)
    return outcome


@functools.lru_cache(maxsize=8192)
def _analyse_cached(pattern: str) -> PatternShape | str:
    # A pure function of the pattern: a trainer sees the same patterns again and again
    # (as regex's own compile cache does for the matcher).
    try:
        return _PatternAnalyser(pattern).run()
    except PatternError as error:
        return str(error)


# --- the reply envelope ------------------------------------------------------------


def _unfence(reply: str) -> str:
    if len(reply) > MAX_REPLY_CHARS:
        raise ReplyError(f"reply: {len(reply)} characters, at most {MAX_REPLY_CHARS} are accepted")
    text = reply.strip()
    if not text:
        raise ReplyError('reply: empty; expected a JSON object {"rules": [...]}')
    lines = text.split("\n")
    fence_lines = [n for n, line in enumerate(lines) if line.lstrip().startswith("```")]
    if not text.startswith("```"):
        if fence_lines:
            raise ReplyError(
                "reply: text outside the code fence; the reply must be only the JSON "
                "object or only one ```json fenced block"
            )
        if not text.startswith("{"):
            raise ReplyError(
                'reply: expected a JSON object {"rules": [...]} (optionally in one ```json '
                f"fence), got text starting with {_show(text[:20])}"
            )
        return text
    if len(fence_lines) > 2:
        raise ReplyError(
            f"reply: {len(fence_lines)} fence lines; exactly one ```json block is accepted"
        )
    info = lines[0][3:].strip()
    if info.lower() not in ("", "json"):
        raise ReplyError(
            f"reply: the opening fence line must be ``` or ```json, got {_show(lines[0])}"
        )
    if len(fence_lines) < 2:
        raise ReplyError("reply: the code fence is not closed")
    closing = fence_lines[1]
    if closing != len(lines) - 1:
        raise ReplyError("reply: text after the closing code fence")
    if lines[closing].strip() != "```":  # e.g. "```python" used as a closer
        raise ReplyError(f"reply: the closing fence line must be ```, got {_show(lines[closing])}")
    return "\n".join(lines[1:closing])


def _reject_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ReplyError(f"reply: duplicate key {_show(key)} in a JSON object")
        result[key] = value
    return result


def _load_json(text: str) -> Any:
    try:
        return json.loads(text, object_pairs_hook=_reject_duplicate_keys)
    except json.JSONDecodeError as error:
        if error.msg == "Extra data":
            raise ReplyError(
                f"reply: text after the JSON object (line {error.lineno} column {error.colno})"
            ) from None
        raise ReplyError(
            f"reply: malformed JSON: {error.msg} (line {error.lineno} column {error.colno})"
        ) from None
    except RecursionError:
        raise ReplyError("reply: JSON nested too deeply") from None
    except ReplyError:
        raise
    except ValueError:
        # Python refuses to convert integers of more than 4,300 digits (a guard against
        # quadratic-time parsing); anything else json raises is also malformed input.
        raise ReplyError("reply: malformed JSON: a number is too long to read") from None


def _rule_entries(document: Any) -> list[Any]:
    if not isinstance(document, dict):
        raise ReplyError(
            f'reply: expected a JSON object {{"rules": [...]}}, got {_json_type(document)}'
        )
    unknown = [key for key in document if key != "rules"]
    if unknown:
        raise ReplyError(f"reply: unknown top-level key {_show(unknown[0])} (allowed: rules)")
    if "rules" not in document:
        raise ReplyError("reply: missing key 'rules'")
    entries = document["rules"]
    if not isinstance(entries, list):
        raise ReplyError(f"rules: must be a list of rule objects, got {_json_type(entries)}")
    if len(entries) > MAX_RULES:
        raise ReplyError(f"rules: {len(entries)} rules, at most {MAX_RULES} are allowed")
    return entries


def _compile_rule(index: int, entry: Any) -> CompiledRule:
    if not isinstance(entry, dict):
        raise PatternError(
            f": must be an object with keys pattern and replacement, got {_json_type(entry)}"
        )
    unknown = [key for key in entry if key not in _RULE_KEYS]
    if unknown:
        raise PatternError(f": unknown key {_show(unknown[0])} (allowed: {', '.join(_RULE_KEYS)})")
    for key in _RULE_KEYS:
        if key not in entry:
            raise PatternError(f": missing key {_show(key)}")
    pattern, replacement = entry["pattern"], entry["replacement"]
    if not isinstance(replacement, str) or replacement not in ALLOWED_REPLACEMENTS:
        shown = _show(replacement) if isinstance(replacement, str) else _json_type(replacement)
        raise PatternError(f'.replacement: must be "[REDACTED]" or "", got {shown}')
    if not isinstance(pattern, str):
        raise PatternError(f".pattern: must be a string, got {_json_type(pattern)}")
    try:
        shape = analyse_pattern(pattern)
    except PatternError as error:
        raise PatternError(f".pattern: {error}") from None
    try:
        compiled = regex.compile(pattern, regex.VERSION0)
    except regex.error as error:
        raise PatternError(f".pattern: invalid regex: {error}") from None
    except (OverflowError, ValueError, MemoryError, RecursionError) as error:
        raise PatternError(f".pattern: invalid regex: {type(error).__name__}") from None
    # The static bound already says every match is non-empty; this is the cheap check
    # that the engine agrees, so a blind spot in the analyser still fails closed.
    if compiled.search("") is not None:
        raise PatternError(".pattern: can match the empty string")
    return CompiledRule(
        index=index,
        pattern=pattern,
        replacement=replacement,
        compiled=compiled,
        required_literals=shape.required_literals,
        literals_ignore_case=shape.literals_ignore_case,
    )


def _json_type(value: Any) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return "null"


def _show(value: str) -> str:
    if len(value) > _ERROR_VALUE_CHARS:
        return repr(value[:_ERROR_VALUE_CHARS]) + "..."
    return repr(value)


# --- static pattern analysis -------------------------------------------------------

_ZERO_WIDTH_ESCAPES: Final = frozenset("bBAZzGmM")
_CLASS_ESCAPES: Final = frozenset("dDwWsSX")
_CONTROL_ESCAPES: Final = {"t": "\t", "n": "\n", "r": "\r", "f": "\f", "v": "\v", "a": "\a"}
_HEX_ESCAPE_DIGITS: Final = {"x": 2, "u": 4, "U": 8}
_HEX: Final = frozenset("0123456789abcdefABCDEF")
_OCTAL: Final = frozenset("01234567")
_QUANTIFIER_STARTS: Final = frozenset("*+?{")
_INLINE_FLAGS: Final = regex.compile(r"(?<!\\)\(\?([a-zA-Z]*)(?:-[a-zA-Z]*)?[:)]")
"""The switched-on letters of every inline flag group (escaped backslashes removed)."""


_ASCII_ALL: Final = (1 << 128) - 1
_OTHER_ALL: Final = 0b1111
"""Non-ASCII characters in four disjoint kinds (bits): spaces, digits, other word
characters, the rest (what ``\\s``, ``\\d`` and ``\\w`` split them into)."""
_UPPER_MASK: Final = sum(1 << c for c in range(ord("A"), ord("Z") + 1))
_LOWER_MASK: Final = _UPPER_MASK << 32


def _mask(chars: str) -> int:
    return sum(1 << ord(c) for c in set(chars))


def _other_kind(char: str) -> int:
    if char.isspace():
        return 0b0001
    if char.isdecimal():
        return 0b0010
    return 0b0100 if char.isalnum() else 0b1000


class _Chars(NamedTuple):
    """An over-approximation of a set of characters: a bit per ASCII member, and a bit
    per kind of non-ASCII character it may hold (a NamedTuple of ints: the analysis
    unions thousands of these per reply)."""

    ascii: int
    other: int

    def __or__(self, other: object) -> _Chars:  # type: ignore[override]
        assert isinstance(other, _Chars)
        return _Chars(self.ascii | other.ascii, self.other | other.other)

    def overlaps(self, other: _Chars) -> bool:
        return bool(self.ascii & other.ascii) or bool(self.other & other.other)

    def complement(self) -> _Chars:
        return _Chars(_ASCII_ALL & ~self.ascii, _OTHER_ALL & ~self.other)

    def folded(self) -> _Chars:
        """Both cases of every ASCII letter (for case-insensitive patterns)."""
        letters = ((self.ascii & _UPPER_MASK) << 32) | ((self.ascii & _LOWER_MASK) >> 32)
        return _Chars(self.ascii | letters, self.other)


_ANY: Final = _Chars(_ASCII_ALL, _OTHER_ALL)
_NONE: Final = _Chars(0, 0)
_ESCAPE_SETS: Final = {
    "d": _Chars(_mask("0123456789"), 0b0010),
    "w": _Chars(_mask("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_"), 0b0110),
    "s": _Chars(_mask(" \t\n\r\f\v"), 0b0001),
}


@functools.lru_cache(maxsize=1024)
def _literal_chars(char: str) -> _Chars:
    if char.isascii():
        return _Chars(1 << ord(char), 0)
    return _Chars(0, _other_kind(char))


def _escape_chars(char: str, literal: str | None) -> _Chars:
    if literal is not None:
        return _literal_chars(literal)
    if char in _ESCAPE_SETS:
        return _ESCAPE_SETS[char]
    if char.lower() in _ESCAPE_SETS:
        return _ESCAPE_SETS[char.lower()].complement()
    return _ANY


@dataclass(slots=True)  # not frozen: a frozen dataclass's __init__ is several times slower
class _Piece:
    """The analysis of one atom, sequence or alternation."""

    min_length: int
    size: int
    literal: str | None = None
    """Set when the piece is exactly one literal character (case-sensitive)."""
    required: tuple[str, ...] | None = None
    """Any-of literal set every match of the piece contains."""
    zero_width: bool = False
    chars: _Chars = _ANY
    """Characters a match of the piece may consume."""
    first: _Chars = _ANY
    """Characters a non-empty match of the piece may start with."""
    repeats: bool = False
    """The piece contains a repeat whose bounds differ (``*``, ``+``, ``?``, ``{m,n}``)."""
    run_wide: int = 0
    """Wide repeats in the piece's worst run (see :data:`MAX_RUN_CHOICES`)."""
    run_choices: int = 1
    """Product of the narrow repeats' length choices in that run."""
    ambiguous: bool = False
    """The piece contains an alternation whose branches can start alike or be empty."""
    continued: bool = False
    """A wide repeat in the piece is followed, before anything fences it off, by more
    that must match (so a failed attempt gives its characters back one by one)."""
    continued_choices: int = 1
    """The most length choices of a narrow run followed that way."""
    prefix: tuple[str, ...] | None = None
    """Literal strings one of which every match starts with (None: not known)."""
    complete: bool = False
    """Every match is exactly one of :attr:`prefix` (the piece is pure literal text)."""


class _PatternAnalyser:
    """A recursive-descent reader of the accepted dialect.

    It never builds the regex: it only measures. Anything it does not understand is
    refused, so the size bound it computes covers everything ``regex`` will compile.
    """

    def __init__(self, pattern: str) -> None:
        self._pattern = pattern
        self._pos = 0
        self._case_insensitive = False
        # Any inline ``i`` flag: fold every character set (over-approximates scoped flags).
        self._folds = any(
            "i" in flags for flags in _INLINE_FLAGS.findall(pattern.replace("\\\\", ""))
        )

    def _fold(self, chars: _Chars) -> _Chars:
        return chars.folded() if self._folds else chars

    def run(self) -> PatternShape:
        if not self._pattern:
            raise PatternError("empty pattern")
        if len(self._pattern) > MAX_PATTERN_CHARS:
            raise PatternError(
                f"{len(self._pattern)} characters, at most {MAX_PATTERN_CHARS} are allowed"
            )
        piece = self._alternation(depth=0)
        if self._pos < len(self._pattern):
            raise PatternError(f"unbalanced ')' at position {self._pos}")
        if piece.size > MAX_EXPANDED_SIZE:
            raise PatternError(
                f"expanded size {piece.size} (nested repeat counts multiplied out) is over "
                f"the cap of {MAX_EXPANDED_SIZE}; refused before compiling"
            )
        if piece.min_length == 0:
            raise PatternError(
                "can match the empty string; every match must remove at least one character"
            )
        required = piece.required
        if required is not None and self._case_insensitive:
            if all(literal.isascii() for literal in required):
                required = tuple(sorted({literal.lower() for literal in required}))
            else:
                required = None
        return PatternShape(
            expanded_size=piece.size,
            required_literals=required,
            literals_ignore_case=self._case_insensitive,
        )

    # -- helpers --

    def _peek(self, offset: int = 0) -> str:
        at = self._pos + offset
        return self._pattern[at] if at < len(self._pattern) else ""

    def _startswith(self, text: str) -> bool:
        return self._pattern.startswith(text, self._pos)

    def _fail(self, reason: str) -> PatternError:
        return PatternError(f"{reason} at position {self._pos}")

    # -- grammar --

    def _alternation(self, depth: int) -> _Piece:
        branches = [self._sequence(depth)]
        while self._peek() == "|":
            self._pos += 1
            branches.append(self._sequence(depth))
        if len(branches) == 1:
            return branches[0]
        required: tuple[str, ...] | None = None
        if all(branch.required for branch in branches):
            required = tuple(sorted({lit for b in branches for lit in b.required or ()}))
        ambiguous = any(b.ambiguous or b.min_length == 0 for b in branches) or any(
            a.first.overlaps(b.first) for i, a in enumerate(branches) for b in branches[i + 1 :]
        )
        chars, first = _NONE, _NONE
        for branch in branches:
            chars, first = chars | branch.chars, first | branch.first
        return _Piece(
            min_length=min(b.min_length for b in branches),
            size=sum(b.size for b in branches),
            required=required,
            chars=chars,
            first=first,
            repeats=any(b.repeats for b in branches),
            run_wide=max(b.run_wide for b in branches),
            run_choices=max(b.run_choices for b in branches),
            ambiguous=ambiguous,
            continued=any(b.continued for b in branches),
            continued_choices=max(b.continued_choices for b in branches),
            prefix=(
                tuple(sorted({x for b in branches for x in b.prefix or ()}))
                if all(b.prefix for b in branches)
                else None
            ),
            complete=all(b.complete for b in branches),
        )

    def _sequence(self, depth: int) -> _Piece:
        min_length = 0
        size = 0
        candidates: list[tuple[str, ...]] = []
        run = ""
        chars, first = _NONE, _NONE
        first_open = True  # no mandatory atom yet: later atoms can still start a match
        repeats = ambiguous = False
        group: _Chars | None = None
        """Characters of the current run of repeats (None: no run open)."""
        run_wide = worst_wide = run_repeats = 0
        run_choices = worst_choices = 1
        continued = False
        continued_choices = 1
        guarded = False  # the branch starts with a literal or a lookaround that needs one
        starts: tuple[str, ...] = ("",)
        in_prefix = True  # only zero-width atoms and unrepeated literal text read so far
        complete = True
        while self._pos < len(self._pattern) and self._peek() not in "|)":
            start = self._pos
            atom = self._atom(depth)
            low, high, quantified = self._quantifier(atom)
            if atom.zero_width and quantified:
                raise self._fail("a zero-width assertion cannot be repeated")
            repeated = quantified and (high is None or high > 1)
            if repeated and atom.repeats:
                raise PatternError(
                    f"a repeat inside a repeated group at position {start} (nested "
                    "quantifiers can backtrack catastrophically)"
                )
            if repeated and atom.ambiguous:
                raise PatternError(
                    f"an alternation inside a repeated group at position {start} whose "
                    "branches can start with the same character or be empty (it can "
                    "backtrack catastrophically)"
                )
            if in_prefix:
                if atom.zero_width:
                    if atom.required and min(map(len, atom.required)) >= MIN_GUARD_CHARS:
                        guarded = True
                elif atom.prefix and not quantified and len(starts) * len(atom.prefix) <= 64:
                    starts = tuple(a + b for a in starts for b in atom.prefix)
                    in_prefix = atom.complete
                else:
                    in_prefix = False
            complete = complete and not atom.zero_width and atom.complete and not quantified
            continued = continued or atom.continued
            continued_choices = max(continued_choices, atom.continued_choices)
            variable = quantified and high != low
            follows = (low >= 1 and atom.min_length >= 1) or (atom.zero_width and atom.size > 1)
            # More must match after repeats it may have to give characters back to.
            if group is not None and follows and (atom.zero_width or group.overlaps(atom.first)):
                continued = continued or run_wide > 0
                # Splits between several repeats each rescan what follows: count 4x.
                weight = 4 if run_repeats > 1 else 1
                continued_choices = max(continued_choices, run_choices * weight)
            if variable or atom.repeats:
                wide, choices = atom.run_wide, atom.run_choices
                if variable:
                    lengths = None if high is None else high - low + 1
                    if lengths is None or lengths > WIDE_REPEAT:
                        wide += 1
                    else:
                        choices *= lengths
                if group is not None and group.overlaps(atom.chars):
                    group, run_wide = group | atom.chars, run_wide + wide
                    run_repeats += 1
                    run_choices = min(run_choices * choices, MAX_RUN_CHOICES + 1)
                else:
                    group, run_wide, run_repeats = atom.chars, wide, 1
                    run_choices = min(choices, MAX_RUN_CHOICES + 1)
                if run_wide > 1:
                    raise PatternError(
                        f"the repeat at position {start} can take the same characters as an "
                        "earlier unbounded (or very wide) repeat with nothing fencing them "
                        "apart, so it can backtrack polynomially; put a character between "
                        "them that the first cannot match"
                    )
                limit = MAX_WIDE_RUN_CHOICES if run_wide else MAX_RUN_CHOICES
                if run_choices > limit:
                    raise PatternError(
                        f"the repeats up to position {self._pos} over overlapping characters "
                        f"allow more than {limit} ways to split a match (they can "
                        "backtrack combinatorially); fence them with characters they cannot "
                        "match or bound them more tightly"
                    )
                worst_wide = max(worst_wide, run_wide)
                worst_choices = max(worst_choices, run_choices)
            elif (
                group is not None
                and low >= 1
                and atom.min_length >= 1
                and not group.overlaps(atom.first)
            ):
                group, run_wide, run_choices = None, 0, 1
            if not atom.zero_width:
                chars = chars | atom.chars
                if first_open:
                    first = first | atom.first
                    if low >= 1 and atom.min_length >= 1:
                        first_open = False
            repeats = repeats or atom.repeats or variable
            ambiguous = ambiguous or atom.ambiguous
            count = high if high is not None else max(low, 1)
            min_length += atom.min_length * low
            size += atom.size * max(count, 1)
            if size > MAX_EXPANDED_SIZE * MAX_REPEAT_COUNT:
                # Stop multiplying early: the pattern is refused either way.
                size = MAX_EXPANDED_SIZE + 1
            if atom.literal is not None and low >= 1:
                run += atom.literal
                if quantified:
                    candidates.append((run,))
                    run = ""
                continue
            if run:
                candidates.append((run,))
                run = ""
            if atom.required and low >= 1:
                candidates.append(atom.required)
        if run:
            candidates.append((run,))
        best = max(candidates, key=lambda c: (min(len(x) for x in c), -len(c)), default=None)
        prefix = starts if min(map(len, starts)) > 0 else None
        guarded = guarded or (prefix is not None and min(map(len, prefix)) >= MIN_GUARD_CHARS)
        if depth == 0 and not guarded and continued_choices > MAX_UNGUARDED_CHOICES:
            raise PatternError(
                f"repeats with more than {MAX_UNGUARDED_CHOICES} ways to split a match are "
                "followed by more that must match, and the pattern does not start with a "
                f"literal (or a lookaround needing one) of {MIN_GUARD_CHARS}+ characters, so "
                "every start tries them all (it can backtrack quadratically); start it with "
                "such a literal or bound them more tightly"
            )
        if depth == 0 and continued and not guarded:
            raise PatternError(
                "a wide repeat is followed by more that must match, and the pattern does not "
                f"start with a literal (or a lookaround needing one) of {MIN_GUARD_CHARS}+ "
                "characters, so every failed start rescans the text (it can backtrack quadratically); start it "
                "with such a literal, or end it with the wide repeat"
            )
        return _Piece(
            min_length=min_length,
            size=size,
            required=best,
            chars=chars,
            first=first,
            repeats=repeats,
            run_wide=worst_wide,
            run_choices=worst_choices,
            ambiguous=ambiguous,
            continued=continued,
            continued_choices=continued_choices,
            prefix=prefix,
            complete=complete and prefix is not None,
        )

    def _quantifier(self, atom: _Piece) -> tuple[int, int | None, bool]:
        char = self._peek()
        if char == "*":
            self._pos += 1
            low, high = 0, None
        elif char == "+":
            self._pos += 1
            low, high = 1, None
        elif char == "?":
            self._pos += 1
            low, high = 0, 1
        elif char == "{":
            low, high = self._braces()
        else:
            return 1, 1, False
        if self._peek() in ("?", "+"):
            self._pos += 1
        if self._peek() in ("*", "+", "?") or (
            self._peek() == "{" and self._brace_bounds() is not None
        ):
            raise self._fail("multiple repeat")
        return low, high, True

    def _brace_bounds(self) -> tuple[int, int | None, int] | None:
        """Parse ``{m}``, ``{m,}``, ``{,n}``, ``{m,n}`` at the cursor without consuming."""
        end = self._pattern.find("}", self._pos)
        if end < 0:
            return None
        body = self._pattern[self._pos + 1 : end]
        low_text, comma, high_text = body.partition(",")
        if not (low_text.isascii() and high_text.isascii()):
            return None
        if not (low_text.isdigit() or (comma and low_text == "")):
            return None
        if high_text and not high_text.isdigit():
            return None
        if not low_text and not high_text:
            return None
        for digits in (low_text, high_text):
            if len(digits) > 6 or (digits and int(digits) > MAX_REPEAT_COUNT):
                raise self._fail(f"repeat count {digits} is over {MAX_REPEAT_COUNT}")
        low = int(low_text) if low_text else 0
        high: int | None = low if not comma else (int(high_text) if high_text else None)
        return low, high, end + 1

    def _braces(self) -> tuple[int, int | None]:
        bounds = self._brace_bounds()
        if bounds is None:
            raise self._fail("a literal '{' must be escaped as \\{")
        low, high, after = bounds
        if high is not None and high < low:
            raise self._fail("repeat minimum is greater than its maximum")
        self._pos = after
        return low, high

    def _atom(self, depth: int) -> _Piece:
        char = self._peek()
        if char == "(":
            return self._group(depth)
        if char == "[":
            chars = self._fold(self._char_class())
            return _Piece(min_length=1, size=1, chars=chars, first=chars)
        if char == "\\":
            return self._escape()
        if char in _QUANTIFIER_STARTS:
            if char == "{" and self._brace_bounds() is None:
                raise self._fail("a literal '{' must be escaped as \\{")
            raise self._fail("nothing to repeat")
        self._pos += 1
        if char in "^$":
            return _Piece(min_length=0, size=1, zero_width=True, chars=_NONE, first=_NONE)
        if char == ".":
            return _Piece(min_length=1, size=1)
        chars = self._fold(_literal_chars(char))
        return _Piece(
            min_length=1,
            size=1,
            literal=char,
            chars=chars,
            first=chars,
            prefix=None if self._folds else (char,),
            complete=not self._folds,
        )

    def _group(self, depth: int) -> _Piece:
        if depth >= MAX_GROUP_DEPTH:
            raise self._fail(f"groups nested deeper than {MAX_GROUP_DEPTH}")
        start = self._pos
        self._pos += 1
        kind = "plain"
        if self._peek() == "?":
            kind = self._group_kind()
            if kind == "flags":
                return _Piece(min_length=0, size=0, zero_width=True, chars=_NONE, first=_NONE)
            if kind == "backref":
                return _Piece(min_length=0, size=1)
        inner = self._alternation(depth + 1)
        if self._peek() != ")":
            self._pos = start
            raise self._fail("unterminated group")
        self._pos += 1
        # A lookaround consumes nothing; its own contents were checked when it was read.
        if kind == "negative":
            return _Piece(
                min_length=0,
                size=inner.size + 1,
                zero_width=True,
                chars=_NONE,
                first=_NONE,
                continued=inner.continued,
                continued_choices=inner.continued_choices,
            )
        if kind == "lookaround":
            # What a positive lookaround requires is in the text next to the match.
            required = inner.required
            return _Piece(
                min_length=0,
                size=inner.size + 1,
                required=required,
                zero_width=True,
                chars=_NONE,
                first=_NONE,
                continued=inner.continued,
                continued_choices=inner.continued_choices,
            )
        return _Piece(
            min_length=inner.min_length,
            size=inner.size + 1,
            required=inner.required,
            chars=inner.chars,
            first=inner.first,
            repeats=inner.repeats,
            run_wide=inner.run_wide,
            run_choices=inner.run_choices,
            ambiguous=inner.ambiguous,
            continued=inner.continued,
            continued_choices=inner.continued_choices,
            prefix=inner.prefix,
            complete=inner.complete,
        )

    def _group_kind(self) -> str:
        """Consume the ``?...`` head of a group; refuse any construct outside the dialect."""
        rest = self._pattern[self._pos :]
        heads = (
            (("?:", "?>"), "plain"),
            (("?=", "?<="), "lookaround"),
            (("?!", "?<!"), "negative"),
        )
        for head, kind in heads:
            for prefix in head:
                if rest.startswith(prefix):
                    self._pos += len(prefix)
                    return kind
        for prefix in ("?P<", "?<"):
            if rest.startswith(prefix):
                self._pos += len(prefix)
                self._group_name(">")
                return "plain"
        if rest.startswith("?P="):
            self._pos += 3
            self._group_name(")")
            return "backref"
        self._pos += 1
        return self._inline_flags()

    def _group_name(self, terminator: str) -> None:
        end = self._pattern.find(terminator, self._pos)
        name = self._pattern[self._pos : end] if end >= 0 else ""
        if not name.isidentifier():
            raise self._fail("a group name must be an identifier")
        self._pos = end + 1

    def _inline_flags(self) -> str:
        on = ""
        while self._peek().isalpha():
            on += self._peek()
            self._pos += 1
        off = ""
        if self._peek() == "-":
            self._pos += 1
            while self._peek().isalpha():
                off += self._peek()
                self._pos += 1
        closer = self._peek()
        flags_ok = all(flag in ALLOWED_INLINE_FLAGS for flag in on + off)
        if not (on or off) or not flags_ok or closer not in (":", ")"):
            raise self._fail(
                "unsupported group syntax; allowed: (...), (?:...), (?>...), (?P<name>...), "
                "(?<name>...), (?P=name), lookarounds, and inline flags (?ims) or (?ims-ims:...)"
            )
        if "i" in on:
            self._case_insensitive = True
        self._pos += 1
        return "flags" if closer == ")" else "plain"

    def _escape(self) -> _Piece:
        self._pos += 1
        char = self._peek()
        if not char:
            raise self._fail("the pattern ends with a backslash")
        self._pos += 1
        if char in _ZERO_WIDTH_ESCAPES:
            return _Piece(min_length=0, size=1, zero_width=True, chars=_NONE, first=_NONE)
        if char in "123456789":
            octal = self._three_digit_octal(char)
            if octal is not None:
                chars = self._fold(_literal_chars(octal))
                return _Piece(min_length=1, size=1, literal=octal, chars=chars, first=chars)
            if self._peek().isdigit():
                self._pos += 1
            return _Piece(min_length=0, size=1)
        literal = self._escaped_character(char, in_class=False)
        chars = self._fold(_escape_chars(char, literal))
        known = literal is not None and not self._folds
        return _Piece(
            min_length=1,
            size=1,
            literal=literal,
            chars=chars,
            first=chars,
            prefix=(literal,) if known and literal is not None else None,
            complete=known,
        )

    def _three_digit_octal(self, first: str) -> str | None:
        """``regex`` reads ``\\ddd`` (three octal digits, first not 0) as one character,
        not a backreference: consume and return it; else consume nothing."""
        digits = first + self._pattern[self._pos : self._pos + 2]
        if len(digits) == 3 and set(digits) <= _OCTAL:
            self._pos += 2
            return chr(int(digits, 8))
        return None

    def _escaped_character(self, char: str, *, in_class: bool) -> str | None:
        """Consume the rest of a one-character escape; return its literal when plain."""
        if char in _CLASS_ESCAPES and not (in_class and char == "X"):
            return None
        if char in _CONTROL_ESCAPES:
            return _CONTROL_ESCAPES[char]
        if in_class and char == "b":
            return "\b"
        if char in _HEX_ESCAPE_DIGITS:
            digits = self._pattern[self._pos : self._pos + _HEX_ESCAPE_DIGITS[char]]
            if len(digits) != _HEX_ESCAPE_DIGITS[char] or not set(digits) <= _HEX:
                raise self._fail(f"\\{char} needs exactly {_HEX_ESCAPE_DIGITS[char]} hex digits")
            self._pos += len(digits)
            return None
        if char == "0":
            for _ in range(2):
                if self._peek() in _OCTAL and self._peek():
                    self._pos += 1
            return None
        if char in "pPN":
            self._property_name(char)
            return None
        if char.isalnum():
            raise self._fail(f"unsupported escape \\{char}")
        return char

    def _property_name(self, char: str) -> None:
        if self._peek() == "{":
            end = self._pattern.find("}", self._pos)
            if end < 0 or end - self._pos > 64:
                raise self._fail(f"\\{char}{{...}} is not closed")
            self._pos = end + 1
        elif char != "N" and self._peek().isalpha():
            self._pos += 1
        else:
            raise self._fail(f"\\{char} needs a name in braces")

    def _char_class(self) -> _Chars:
        """Consume a set; return (an over-approximation of) the characters it matches."""
        start = self._pos
        self._pos += 1
        negated = self._peek() == "^"
        if negated:
            self._pos += 1
        items: list[str | _Chars] = []
        """Literal characters (``str``; ``"-"`` as read, a range operator where it sits
        between two literals) and resolved escapes (``_Chars``)."""
        escaped_dash: set[int] = set()
        if self._peek() == "]":
            self._pos += 1
            items.append("]")
        while True:
            char = self._peek()
            if not char:
                self._pos = start
                raise self._fail("unterminated character set")
            if char == "]":
                self._pos += 1
                break
            if char == "\\":
                self._pos += 1
                escaped = self._peek()
                if not escaped:
                    raise self._fail("the pattern ends with a backslash")
                self._pos += 1
                if escaped.isdigit() and escaped != "0":
                    octal = self._three_digit_octal(escaped)
                    if octal is not None:
                        items.append(octal)
                        continue
                    raise self._fail(f"unsupported escape \\{escaped} inside a set")
                if escaped in _ZERO_WIDTH_ESCAPES and escaped != "b":
                    raise self._fail(f"unsupported escape \\{escaped} inside a set")
                literal = self._escaped_character(escaped, in_class=True)
                if literal is not None:
                    if literal == "-":
                        escaped_dash.add(len(items))
                    items.append(literal)
                else:
                    items.append(_escape_chars(escaped, None))
                continue
            if char == "[":
                self._posix_class()
                items.append(_ANY)
                continue
            self._pos += 1
            items.append(char)
        chars = _NONE
        index = 0
        while index < len(items):
            item = items[index]
            if isinstance(item, _Chars):
                chars = chars | item
                index += 1
                continue
            low_end = items[index + 2] if index + 2 < len(items) else None
            if (
                index + 1 not in escaped_dash
                and index + 1 < len(items)
                and items[index + 1] == "-"
                and isinstance(low_end, str)
            ):
                low, high = ord(item), ord(low_end)
                top = min(high, 127)
                span = ((1 << (top + 1)) - 1) & ~((1 << low) - 1) if low <= top else 0
                chars = chars | _Chars(span, _OTHER_ALL if high > 127 else 0)
                index += 3
                continue
            chars = chars | _literal_chars(item)
            index += 1
        return chars.complement() if negated else chars

    def _posix_class(self) -> None:
        """Accept ``[:name:]`` / ``[:^name:]``; any other '[' in a set must be escaped."""
        end = self._pattern.find(":]", self._pos)
        body = self._pattern[self._pos + 2 : end] if end >= 0 else ""
        name = body.removeprefix("^")
        if not (self._startswith("[:") and name.isascii() and name.isalpha()):
            raise self._fail("a literal '[' inside a set must be escaped as \\[")
        self._pos = end + 2
