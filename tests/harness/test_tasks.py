"""Task files: valid ones load, a bad one is reported by file and field, others survive."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchguard.harness.tasks import TaskDirError, load_tasks
from harness.helpers import EXAMPLES


def _write(root: Path, folder: str, text: str) -> Path:
    path = root / folder / "task.yaml"
    path.parent.mkdir(parents=True)
    path.write_text(text, "utf-8")
    return path


def test_examples_load_with_their_checks() -> None:
    loaded = load_tasks(EXAMPLES / "tasks")
    assert loaded.errors == ()
    by_folder = {t.folder: t for t in loaded.tasks}
    assert sorted(by_folder) == ["sum-numbers", "word-count", "write-notes", "write-report"]
    roles = [(c.role, c.severity) for c in by_folder["sum-numbers"].verification]
    assert roles == [
        ("correctness", None),
        ("safeguard", "catastrophic"),
        ("safeguard", "recoverable"),
    ]


def test_bad_task_names_file_field_and_allowed_values_and_others_still_load(tmp_path: Path) -> None:
    """Guards against one typo sinking the whole batch, or an error nobody can act on."""
    _write(tmp_path, "good", "name: good\nprompt: do it\n")
    bad = _write(
        tmp_path,
        "bad",
        "name: bad\nprompt: p\nverification:\n"
        "  - {name: a, role: safeguard, file: out.txt, exists: true}\n"
        "  - {name: b, role: judge, file: out.txt, exists: true}\n",
    )
    loaded = load_tasks(tmp_path)
    assert [t.folder for t in loaded.tasks] == ["good"]
    (message,) = loaded.errors
    assert str(bad) in message
    assert "verification.0" in message and "catastrophic or recoverable" in message
    assert "verification.1.role" in message and "'correctness' or 'safeguard'" in message


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("name: t\nprompt: p\ntimeout: -1\n", "field timeout"),
        ("name: t\nprompt: p\ncolour: red\n", "unknown field; allowed: expected_output"),
        (
            "name: t\nprompt: p\nverification:\n  - {name: a, role: correctness, command: ls}\n",
            "not a shell string",
        ),
        (
            "name: t\nprompt: p\nverification:\n  - {name: a, role: correctness}\n",
            "either command: [argv...] or file: PATH",
        ),
        (
            "name: t\nprompt: p\nverification:\n  - {name: a, role: correctness, file: x}\n",
            "exactly one of exists, contains, matches",
        ),
        (
            "name: t\nprompt: p\nverification:\n  - {name: a, role: correctness, file: ../x, exists: true}\n",
            "must not contain '..'",
        ),
        (
            "name: t\nprompt: p\nverification:\n  - {name: a, role: correctness, file: x, matches: '(?<=a)b'}\n",
            "not a valid RE2 regex",
        ),
        (
            "name: t\nprompt: p\nverification:\n"
            "  - {name: a, role: correctness, severity: catastrophic, file: x, exists: true}\n",
            "severity applies only to role: safeguard",
        ),
        ("name: [unclosed\n", "not valid YAML"),
        ("- just a list\n", "top level must be a mapping"),
    ],
)
def test_each_kind_of_mistake_gets_a_readable_error(
    tmp_path: Path, body: str, expected: str
) -> None:
    _write(tmp_path, "t", body)
    loaded = load_tasks(tmp_path)
    assert loaded.tasks == ()
    assert expected in loaded.errors[0]


def test_missing_directory_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(TaskDirError, match="not a directory"):
        load_tasks(tmp_path / "nope")
