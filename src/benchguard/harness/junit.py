"""Reading pytest's own JUnit report: which tests ran, and whether every one passed.

A pytest check passes only when the report pytest wrote (to a directory outside the
box's working copy) shows that the tests the grading files define ran and passed. An
exit code alone is no evidence: a deliverable that calls ``os._exit(0)`` while it is
imported, or skips the tests, leaves no report or a report of skips, and fails.

The expected tests are read from the grading files with :mod:`ast` (the real parser):
module-level ``test*`` functions and ``test*`` methods of ``Test*`` classes, the names
pytest collects by default (the box runs pytest with no config file, so its defaults
hold). A test generated at run time is not expected, but must still pass if it ran.

Bounds: the report is read up to :data:`MAX_REPORT_BYTES`; a report with a DOCTYPE or
an entity declaration is refused (pytest writes neither), so entity expansion never
runs on it.
"""

from __future__ import annotations

import ast
import re
import xml.etree.ElementTree as ElementTree
from dataclasses import dataclass
from pathlib import Path

MAX_REPORT_BYTES = 16 << 20
# A grading test file larger than this is not parsed for expected tests (still run).
MAX_TEST_SOURCE_BYTES = 4 << 20
_PARAMS = re.compile(r"\[.*\]$", re.DOTALL)


@dataclass(frozen=True, order=True)
class ExpectedTest:
    """One test a grading file defines, as JUnit names it (``classname``, ``name``)."""

    classname: str
    name: str


def expected_tests(root: Path, operands: tuple[str, ...]) -> tuple[ExpectedTest, ...]:
    """The tests the grading ``operands`` (files, folders, ``file::name``) define."""
    found: set[ExpectedTest] = set()
    for operand in operands:
        path_text, _, node = operand.partition("::")
        path = root / path_text
        files = sorted(_test_files(path)) if path.is_dir() else [path]
        for file in files:
            tests = _tests_in(file, root)
            if node:
                parts = node.split("::")
                tests = [t for t in tests if _node_matches(t, parts, file, root)]
            found.update(tests)
    return tuple(sorted(found))


def _test_files(folder: Path) -> list[Path]:
    return [
        p
        for p in folder.rglob("*.py")
        if p.is_file() and (p.name.startswith("test_") or p.name.endswith("_test.py"))
    ]


def _module_name(file: Path, root: Path) -> str:
    return ".".join(file.relative_to(root).with_suffix("").parts)


def _tests_in(file: Path, root: Path) -> list[ExpectedTest]:
    try:
        if file.stat().st_size > MAX_TEST_SOURCE_BYTES:
            return []
        tree = ast.parse(file.read_bytes(), filename=str(file))
    except (OSError, SyntaxError, ValueError):
        return []  # pytest will report the file's own error
    module = _module_name(file, root)
    tests: list[ExpectedTest] = []
    for node in tree.body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.name.startswith(
            "test"
        ):
            tests.append(ExpectedTest(module, node.name))
        elif isinstance(node, ast.ClassDef) and node.name.startswith("Test"):
            if any(
                isinstance(item, ast.FunctionDef) and item.name == "__init__" for item in node.body
            ):
                continue  # pytest does not collect a Test class with an __init__
            for item in node.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef) and (
                    item.name.startswith("test")
                ):
                    tests.append(ExpectedTest(f"{module}.{node.name}", item.name))
    return tests


def _node_matches(test: ExpectedTest, parts: list[str], file: Path, root: Path) -> bool:
    module = _module_name(file, root)
    want_class = ".".join([module, *parts[:-1]]) if len(parts) > 1 else None
    name = _PARAMS.sub("", parts[-1])
    if want_class is not None:
        return test.classname == want_class and test.name == name
    # `file::TestClass` selects every test of the class; `file::test_x` one function.
    return test.classname == f"{module}.{name}" or (test.classname == module and test.name == name)


@dataclass(frozen=True)
class ReportVerdict:
    passed: bool
    reason: str


@dataclass(frozen=True)
class JunitCase:
    """One ``testcase`` of the report: its names and whether it passed (no failure,
    error or skip under it)."""

    classname: str
    name: str
    outcome: str  # "passed", "failed", "errored" or "was skipped"

    @property
    def passed(self) -> bool:
        return self.outcome == "passed"


def strip_params(name: str) -> str:
    """A test name without its parameter ids (``test_x[1-2]`` -> ``test_x``)."""
    return _PARAMS.sub("", name)


def read_cases(report: Path) -> list[JunitCase] | str:
    """The test cases of pytest's report at ``report``, or why it cannot be read
    (bounded, no DOCTYPE); never raises."""
    try:
        with report.open("rb") as handle:
            data = handle.read(MAX_REPORT_BYTES + 1)
    except OSError:
        return "pytest wrote no report (it did not finish its run)"
    if len(data) > MAX_REPORT_BYTES:
        return "pytest's report is over its size bound"
    if b"<!DOCTYPE" in data or b"<!ENTITY" in data:
        return "pytest's report holds a DOCTYPE (pytest writes none)"
    try:
        root = ElementTree.fromstring(data)
    except ElementTree.ParseError as exc:
        return f"pytest's report cannot be read ({exc})"
    cases: list[JunitCase] = []
    for case in root.iter("testcase"):
        outcome = next(
            (child.tag for child in case if child.tag in ("failure", "error", "skipped")), None
        )
        cases.append(
            JunitCase(
                case.get("classname", ""),
                case.get("name", ""),
                "passed" if outcome is None else _OUTCOME_WORDS[outcome],
            )
        )
    return cases


def read_verdict(report: Path, expected: tuple[ExpectedTest, ...]) -> ReportVerdict:
    """Whether pytest's report at ``report`` shows every test passed and every expected
    test among them; never raises (an unreadable report fails)."""
    cases = read_cases(report)
    if isinstance(cases, str):
        return ReportVerdict(False, cases)
    if not cases:
        return ReportVerdict(False, "pytest's report lists no test")
    passed = {(c.classname, strip_params(c.name)) for c in cases if c.passed}
    problems = [f"{c.classname}::{c.name} {c.outcome}" for c in cases if not c.passed]
    if problems:
        shown = "; ".join(problems[:3]) + (
            f" (+{len(problems) - 3} more)" if len(problems) > 3 else ""
        )
        return ReportVerdict(
            False, f"{len(problems)} of {len(cases)} test(s) did not pass: {shown}"
        )
    missing = [t for t in expected if (t.classname, t.name) not in passed]
    if missing:
        names = ", ".join(f"{t.classname}::{t.name}" for t in missing[:3])
        more = f" (+{len(missing) - 3} more)" if len(missing) > 3 else ""
        return ReportVerdict(False, f"expected test(s) did not run: {names}{more}")
    return ReportVerdict(True, f"pytest's report: {len(cases)} test(s) ran and passed")


_OUTCOME_WORDS = {"failure": "failed", "error": "errored", "skipped": "was skipped"}
