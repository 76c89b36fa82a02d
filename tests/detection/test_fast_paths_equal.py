"""The scan's fast paths give exactly what the slow ones give.

The literal test before the encoded-blob hint may only ever skip a command the hint
regex would not match; a remembered reading of a repeated argument object is the same
reading, with the same working directory after it.
"""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from benchguard.detection.decoding import _ENCODER_HINT, encoder_hinted
from benchguard.detection.detector import _read_args, read_entry
from benchguard.detection.shell import ShellReader, ShellState

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
