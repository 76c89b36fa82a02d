"""The shell readings' memo that does not key on written scripts (``_script_memo``)
reads exactly as a reader that remembers nothing.

A command read once before, with the same directory, variables and links but other
scripts kept, is reused only when every script it looked up holds the same again: a
script run (``bash x.sh``, ``./x.sh``, ``python3 x.py``, ``$(cat f)``) whose text
changed between two runs must be read again. Each step's surface and the state after it
(directory, variables, links, scripts) are compared with a fresh reader's.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from benchguard.detection import _script_memo
from benchguard.detection.detector import _read_args, read_entry
from benchguard.detection.shell import ShellReader, ShellState

_SCRIPTS = ["cat ~/answers/key.txt\n", "ls\n", "cd /srv && cat task.yaml\n",
            "import os\nprint(open(os.path.expanduser('~/secret/p')).read())\n",
            "#!/bin/sh\ncat ~/.cache/grader/expected\n", "echo hi\n"]  # fmt: skip
_PATHS = ["/tmp/x.sh", "x.sh", "/tmp/y.py", "/work/run.sh", "/tmp/p"]
_RUNS = ["bash /tmp/x.sh", "sh x.sh", "./x.sh", "python3 /tmp/y.py", "bash /work/run.sh",
         "cat $(cat /tmp/p)", "source x.sh", "ls", "cd /tmp", "cd /work", "cat task.yaml",
         "D=~/answers", "cat $D/key.txt", "echo ~/answers/key.txt > /tmp/p",
         "ln -s ~/answers a", "cat a/key.txt", "pwd"]  # fmt: skip

_STEPS = st.one_of(
    st.builds(
        lambda path, text, key: {"name": "write_file", "args": {"path": path, key: text}},
        st.sampled_from(_PATHS),
        st.sampled_from(_SCRIPTS),
        st.sampled_from(["content", "file_text"]),
    ),
    st.builds(lambda command: {"name": "bash", "args": {"command": command}},
              st.sampled_from(_RUNS)),
)  # fmt: skip


def _state_of(state: ShellState) -> tuple[Any, ...]:
    return state.cwd, state.variables, state.links, state.scripts


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.lists(_STEPS, min_size=1, max_size=10), min_size=1, max_size=4),
    st.sampled_from([None, "/work"]),
)
def test_a_remembered_reading_is_the_reading_whatever_was_written(
    records: list[list[dict[str, Any]]], cwd: str | None
) -> None:
    """Several records through one reader (as a scan reads them), each step beside a
    reader that never remembers. Fails when a reading is reused without checking the
    scripts it ran, or when a write is kept under the loose key."""
    roots = ("~/answers", "~/secret", "~/.cache/grader")
    memo_reader = ShellReader(home="/root", roots=roots)
    for steps in records:
        fresh_state, memo_state = ShellState(cwd=cwd), ShellState(cwd=cwd)
        for index, entry in enumerate(steps * 2):
            fresh_reader = ShellReader(home="/root", roots=roots)  # never remembers
            expected, _ = _read_args(entry["args"], fresh_reader, fresh_state)
            args, _result = read_entry(index, entry, memo_reader, memo_state)
            assert args.text == expected
            assert _state_of(memo_state) == _state_of(fresh_state)


def test_a_script_rewritten_between_two_runs_is_read_again() -> None:
    """The plain case the property covers: the same ``bash /tmp/x.sh`` after two
    different writes reads each script's own words."""
    reader = ShellReader(home="/root")
    first, second = ShellState(), ShellState()
    first.remember_script("/tmp/x.sh", "cat ~/a/one\n")
    second.remember_script("/tmp/x.sh", "cat ~/b/two\n")
    assert "~/a/one" in reader.read("bash /tmp/x.sh", first)
    words = reader.read("bash /tmp/x.sh", second)
    assert "~/b/two" in words and "~/a/one" not in words


def test_the_memo_is_bounded() -> None:
    memo = _script_memo.ScriptMemo()
    for n in range(_script_memo.MAX_KEYS + 10):
        memo.put(("k", n), (), n)
    assert len(memo) <= _script_memo.MAX_KEYS
    for n in range(_script_memo.MAX_VARIANTS * 3):
        memo.put("one", (("/p", str(n)),), n)
    assert len(memo._entries["one"]) == _script_memo.MAX_VARIANTS
    big = "x" * (_script_memo.MAX_PROBE_CHARS // 2 + 1)
    memo.put("a", (("/a", big),), 1)
    memo.put("b", (("/b", big),), 2)
    assert memo._probe_chars <= _script_memo.MAX_PROBE_CHARS
