"""The scan's fast paths give exactly what the slow ones give.

The literal test before the encoded-blob hint may only ever skip a command the hint
regex would not match; a remembered reading of a repeated argument object is the same
reading, with the same working directory after it; the prefilter's candidates from
each surface's bytes, encoded once, are those of the text read surface by surface; the
literal test before the ``pwd`` regex only skips commands the regex would not match.
"""

from __future__ import annotations

from unittest import mock

from hypothesis import given, settings
from hypothesis import strategies as st

from benchguard.detection import detector
from benchguard.detection._prefilter import Prefilter, build_prefilter
from benchguard.detection.decoding import _ENCODER_HINT, encoder_hinted
from benchguard.detection.detector import _read_args, read_entry
from benchguard.detection.shell import ShellReader, ShellState
from benchguard.detection.surfaces import Surface
from benchguard.record.rules import ScanField

_FRAGMENTS = st.sampled_from(
    ["base64", "BASE64", "B64", "xXd", "hexdump", " od ", "od", "code", "openssl", "HEX",
     "Encode", "gzip", "zlib", "compress", "bz2", "lzma", "marshal", "pickle", "eval",
     "x.eval", "-eval", "$(", "`", "cat ", "task.yaml", " | ", "\u017fe", "\u212a", "ba\u017fe64",
     "\u0130", "\u0131", "e\u0301", " "]
)  # fmt: skip


@settings(max_examples=400, deadline=None)
@given(st.lists(_FRAGMENTS | st.text(max_size=6), max_size=8).map("".join))
def test_the_literal_test_never_disagrees_with_the_hint(command: str) -> None:
    assert encoder_hinted(command) == (_ENCODER_HINT.search(command) is not None)


_COMMANDS = st.sampled_from(
    ["ls", "cd /srv/tasks", "cd ..", "cat task.yaml", "cat ~/old/answers.txt", "pwd",
     "cat t*/task.yaml", "cd", "base64 notes.txt"]
)  # fmt: skip


@settings(max_examples=100, deadline=None)
@given(st.lists(_COMMANDS, min_size=1, max_size=12), st.sampled_from([None, "/work", "/"]))
def test_a_remembered_reading_is_the_reading(commands: list[str], cwd: str | None) -> None:
    """Guards against the memo of argument readings changing a surface or losing a
    ``cd``: each step reads the same, and the directory after it is the same."""
    known = ("/srv/tasks/t/task.yaml", "/work/task.yaml")
    fresh_reader, memo_reader = ShellReader(home="/root", known_paths=known), None
    memo_reader = ShellReader(home="/root", known_paths=known)
    fresh_state, memo_state = ShellState(cwd=cwd), ShellState(cwd=cwd)
    for index, command in enumerate(commands * 2):
        entry = {"name": "bash", "args": {"command": command}, "result": "x"}
        expected, _ = _read_args(entry["args"], fresh_reader, fresh_state)
        fresh_reader = ShellReader(home="/root", known_paths=known)  # never remembers
        args, _result = read_entry(index, entry, memo_reader, memo_state)
        assert args.text == expected and memo_state.cwd == fresh_state.cwd


# --- the prefilter's candidates, each surface encoded once -------------------------


def _reference_candidates(
    prefilter: Prefilter, surfaces: list[Surface], chunk_chars: int
) -> list[frozenset[int]]:
    """The candidates as computed before the bytes were shared: every surface's text
    encoded on its own (``Prefilter.candidates``), a chunk joined as text and encoded
    again."""
    result: list[frozenset[int]] = [frozenset()] * len(surfaces)
    start = 0
    while start < len(surfaces):
        stop, size = start, 0
        while stop < len(surfaces) and (
            stop == start or size + len(surfaces[stop].text) <= chunk_chars
        ):
            size += len(surfaces[stop].text) + 1
            stop += 1
        if stop - start == 1:
            result[start] = prefilter.candidates(surfaces[start].text)
        else:
            chunk = prefilter.candidates("\n".join(s.text for s in surfaces[start:stop]))
            if chunk:
                for position in range(start, stop):
                    result[position] = prefilter.candidates(surfaces[position].text) & chunk
        start = stop
    return result


_PATTERNS = (
    r"(?<![\w~./-])~/\.bash_history\b",
    r"\bsecret-[a-z]+\b",
    r"^answer:",
    r"task\.yaml",
    r"(?<!x)é+t",
)
_SURFACE_TEXT = st.lists(
    st.sampled_from(
        ["cat ~/.bash_history", "secret-key", "answer: 4", "x task.yaml", "éét", "\ud800",
         "ls\n", "plain text", "", "SECRET-KEY\nanswer:"]
    ),
    max_size=4,
).map(" ".join)  # fmt: skip


@settings(max_examples=200, deadline=None)
@given(st.lists(_SURFACE_TEXT, min_size=1, max_size=12), st.sampled_from([8, 40, 1 << 20]))
def test_candidates_from_shared_bytes_equal_the_per_text_reading(
    texts: list[str], chunk_chars: int
) -> None:
    """Guards the encoded-once path (and its lone-surrogate fallback) against losing or
    adding a candidate anywhere: chunked or not, equal to the text-by-text reading."""
    prefilter = build_prefilter(_PATTERNS)
    surfaces = [Surface("result", i, "sh", text) for i, text in enumerate(texts)]
    with mock.patch.object(detector, "_PREFILTER_CHUNK_CHARS", chunk_chars):
        fast = detector._candidates(prefilter, surfaces, detector._Budget(60.0))
    assert fast == _reference_candidates(prefilter, surfaces, chunk_chars)


# --- the literal test before the ``pwd`` regex -------------------------------------

_PWD_TEXT = st.lists(
    st.sampled_from(["pwd", "PWD", " ", "\t", "\n", "-L", "-P", "x", "p", "wd", "\u00a0"]),
    max_size=6,
).map("".join)


@settings(max_examples=400, deadline=None)
@given(_PWD_TEXT | st.text(max_size=8))
def test_the_pwd_literal_never_skips_what_the_regex_matches(command: str) -> None:
    assert ("pwd" in command) or detector._PWD.match(command) is None


# --- a chunk's candidates asked of a Set of just those candidates -------------------

_NARROW_PATTERNS = (
    r"\bgit\s+(?:log|reflog)\b",
    r"(?<![\w~./-])~/\.bash_history\b",
    r"^answer:",
    r"task\.yaml",
    r"(?:secret|token)-\w+$",
    r"a\s+b",  # spans a join: "...a" then "b..." is a chunk match in no surface
    r"(?<=x)(?!y)",  # matches the empty string: never relaxed, a candidate everywhere
)
_NARROW_TEXT = st.lists(
    st.sampled_from(
        ["git log", "GIT  REFLOG", "cat ~/.bash_history", "answer: 4", "x task.yaml",
         "secret-key", "TOKEN-x", "a", "b", "a b", "\n", "plain", "", "g\u0131t log",
         "ta\u017fk.yaml"]
    ),
    max_size=4,
).map(" ".join)  # fmt: skip


@settings(max_examples=300, deadline=None)
@given(st.lists(_NARROW_TEXT, min_size=2, max_size=14), st.sampled_from([16, 60, 1 << 20]))
def test_a_chunks_narrowed_set_names_what_the_full_sets_name(
    texts: list[str], chunk_chars: int
) -> None:
    """Guards the narrowed Set (only the chunk's candidates, surface by surface) against
    naming a pattern where the full Sets would not, or missing one: equal to the
    text-by-text reading, with and without its fallback to the full Sets."""
    prefilter = build_prefilter(_NARROW_PATTERNS)
    surfaces = [Surface("args", i, "sh", text) for i, text in enumerate(texts)]
    expected = _reference_candidates(prefilter, surfaces, chunk_chars)
    with mock.patch.object(detector, "_PREFILTER_CHUNK_CHARS", chunk_chars):
        assert detector._candidates(prefilter, surfaces, detector._Budget(60.0)) == expected
        with mock.patch.object(Prefilter, "narrowed", lambda self, ids: None):
            fallback = detector._candidates(prefilter, surfaces, detector._Budget(60.0))
    assert fallback == expected


# --- a chunk's candidates looked for only among the patterns a surface's field scans ---

# Per pattern of _NARROW_PATTERNS, the fields its rules scan (none: no rule carries it).
_NARROW_FIELDS: tuple[frozenset[str], ...] = (
    frozenset({"args"}),
    frozenset({"args", "result", "output"}),
    frozenset({"result", "output"}),
    frozenset({"result"}),
    frozenset(),
    frozenset({"output"}),
    frozenset({"args"}),
)
_FIELD: st.SearchStrategy[ScanField] = st.sampled_from(["args", "result"])


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_FIELD, _NARROW_TEXT), min_size=2, max_size=14),
    st.sampled_from([16, 60, 1 << 20]),
)
def test_a_surfaces_candidates_keep_every_pattern_its_field_scans(
    texts: list[tuple[ScanField, str]], chunk_chars: int
) -> None:
    """Guards the field-aware narrowing against dropping a pattern that a rule scanning
    the surface's field carries: among those patterns, the candidates equal the
    text-by-text reading; it only ever drops patterns no rule asks about there."""
    prefilter = build_prefilter(_NARROW_PATTERNS)
    surfaces = [Surface(field, i, "sh", text) for i, (field, text) in enumerate(texts)]
    surfaces.append(Surface("output", None, None, texts[-1][1]))
    expected = _reference_candidates(prefilter, surfaces, chunk_chars)
    with mock.patch.object(detector, "_PREFILTER_CHUNK_CHARS", chunk_chars):
        fast = detector._candidates(
            prefilter, surfaces, detector._Budget(60.0), pattern_fields=_NARROW_FIELDS
        )
    for surface, got, want in zip(surfaces, fast, expected, strict=True):
        scanned = frozenset(i for i, f in enumerate(_NARROW_FIELDS) if surface.field in f)
        assert got & scanned == want & scanned
        assert got <= want


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.tuples(_FIELD, _NARROW_TEXT), min_size=2, max_size=14),
    st.sampled_from([16, 60, 1 << 20]),
)
def test_each_fields_own_sets_keep_every_pattern_its_field_scans(
    texts: list[tuple[ScanField, str]], chunk_chars: int
) -> None:
    """Guards the per-field Sets (surfaces chunked field by field, each field read by
    Sets of only the patterns its rules scan) against dropping a pattern that a rule
    scanning the surface's field carries, or naming one the full Sets would not: among
    the patterns the field scans, equal to the text-by-text reading."""
    prefilter = build_prefilter(_NARROW_PATTERNS)
    own = detector._field_prefilters(prefilter, _NARROW_FIELDS)
    assert set(own) == {"args", "result", "output"}
    surfaces = [Surface(field, i, "sh", text) for i, (field, text) in enumerate(texts)]
    surfaces.append(Surface("output", None, None, texts[-1][1]))
    expected = _reference_candidates(prefilter, surfaces, chunk_chars)
    with mock.patch.object(detector, "_PREFILTER_CHUNK_CHARS", chunk_chars):
        fast = detector._candidates(
            prefilter, surfaces, detector._Budget(60.0), _NARROW_FIELDS, own
        )
    for surface, got, want in zip(surfaces, fast, expected, strict=True):
        scanned = frozenset(i for i, f in enumerate(_NARROW_FIELDS) if surface.field in f)
        assert got & scanned == want & scanned
        assert got <= want
