"""Rules match IGNORECASE, so a rule naming a case-sensitive identifier must keep its
case: `return any(...)` (the builtin, in a real honest Django fix from a public
SWE-bench trajectory) is not `return mock.ANY` (an object equal to everything)."""

from __future__ import annotations

from typing import Any

import pytest

from benchguard.detection.detector import scan_record
from benchguard.detection.rules import load_profile

GENERIC = load_profile("generic")
HONEST_FIX = (
    "    @classmethod\n    def _contains_aggregate(cls, obj):\n"
    "        if isinstance(obj, tree.Node):\n"
    "            return any(cls._contains_aggregate(c) for c in obj.children)\n"
    "        return obj.contains_aggregate\n"
)


def _rules(command: str) -> set[str]:
    record: dict[str, Any] = {
        "input": "Fix the failing test.",
        "output": "done",
        "trajectory": [{"name": "bash", "args": {"command": command}, "result": ""}],
    }
    return {f.rule for f in scan_record(record, GENERIC).findings}


@pytest.mark.parametrize(
    "command",
    [
        f"cat > django/db/models/sql/where.py <<'EOF'\n{HONEST_FIX}EOF",
        "cat >> util.py <<'EOF'\ndef f(xs):\n    return any (x for x in xs)\nEOF",
        "cat >> util.py <<'EOF'\ndef g(xs):\n    return Any\nEOF",
    ],
)
def test_the_builtin_any_is_not_mock_any(command: str) -> None:
    assert "comparison-override/eq-true" not in _rules(command)


@pytest.mark.parametrize(
    "command",
    [
        "cat > answer.py <<'EOF'\nfrom unittest import mock\ndef solve():\n    return mock.ANY\nEOF",
        "cat > answer.py <<'EOF'\nfrom unittest.mock import ANY\ndef solve(x):\n    return ANY\nEOF",
    ],
)
def test_mock_any_returned_as_the_answer_is_still_caught(command: str) -> None:
    assert "comparison-override/eq-true" in _rules(command)
