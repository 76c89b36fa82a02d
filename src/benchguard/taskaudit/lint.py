"""The static half of ``audit-tasks``: what makes a task hackable without any run.

Each finding has an id (stable, what ``findings_acknowledged`` names), whether it makes
the task hackable on its own, the check it concerns and a sentence:

- ``no-correctness-check`` (hackable): nothing checks the work, so anything earns the
  correctness the task reports;
- ``runs-workspace-program`` (hackable): a command check executes a file the agent
  could write (``harness/check_programs.py``: the rule ``run`` refuses at load);
- ``glob-option-names`` (hackable): a correctness command check's shell string holds a
  glob word that begins with a pattern character (``grep -qx 4711 *.out``): it expands
  to names the agent chooses, and one beginning with ``-`` is an option
  (``harness/glob_names.py``; the grading box refuses such names, other graders do not);
- ``existence-only``: a correctness check that only asks that a file exists;
- ``regex-accepts-empty`` / ``regex-accepts-any-integer``: a ``matches`` the empty
  answer, or every small integer, satisfies; a ``contains`` of only blanks;
- ``answer-in-prompt``: the expected output, or the text a check requires, is written
  in the prompt (an agent can copy it without doing the work);
- ``in-process-grading``: a pytest check whose grading tests import a module the
  workspace provides (``taskaudit/test_imports.py``): the deliverable runs inside the
  test process and can rewrite pytest's outcome (the ``patch-test-runner`` exploit
  shows whether the box still accepts it).

The last four are warnings: an exploit run shows whether a cheat really passes.
Regexes are RE2 (linear time), tried on fixed probes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import re2

from benchguard.harness.check_programs import (
    GradingPaths,
    WorkspaceCode,
    check_command,
    pytest_run,
)
from benchguard.harness.glob_names import glob_words, shell_strings
from benchguard.harness.tasks import CommandCheck, FileCheck, Task, quiet_re2_options
from benchguard.taskaudit.test_imports import workspace_imports

# Integers a regex must all accept to read as "accepts any integer".
INTEGER_PROBES = ("0", "1", "7", "42", "100", "12345", "-3")
# A required text this short is not read as an answer given away by the prompt.
MIN_ANSWER_CHARS = 2


@dataclass(frozen=True, order=True)
class LintFinding:
    id: str
    check: str
    message: str
    hackable: bool


def lint_task(task: Task) -> list[LintFinding]:
    """Every static finding for ``task``, in check order (module doc)."""
    findings: list[LintFinding] = []
    correctness = [c for c in task.verification if c.role == "correctness"]
    if not correctness:
        findings.append(
            LintFinding(
                "no-correctness-check",
                "",
                "the task has no correctness check: nothing checks the work",
                True,
            )
        )
    grading = GradingPaths(task.grading_files)
    for check in task.verification:
        if isinstance(check, CommandCheck):
            try:
                check_command(check.command, grading)
            except WorkspaceCode as exc:
                findings.append(LintFinding("runs-workspace-program", check.name, str(exc), True))
                continue
            findings += _in_process(task, check, grading)
            findings += _glob_options(check)
            continue
        if check.role != "correctness":
            continue
        findings += _file_check(check)
    findings += _answer_in_prompt(task)
    return findings


def _glob_options(check: CommandCheck) -> list[LintFinding]:
    """A shell glob word that begins with a pattern character expands to names the
    agent chooses, and a name beginning with '-' is an option of the check's program."""
    if check.role != "correctness":
        return []
    words = sorted({w for text in shell_strings(check.command) for w in glob_words(text)})
    if not words:
        return []
    return [
        LintFinding(
            "glob-option-names",
            check.name,
            f"the shell glob {words[0]!r} expands to workspace names the agent chooses: an "
            "empty file named like '-e.out' becomes an option of the check's program "
            "(grep -qx N *.out then matches '.out' and passes with nothing computed). "
            "benchguard's grading box refuses such names; a grader that runs the check as "
            "written does not. Write './' before the glob, or '--' before the operands",
            True,
        )
    ]


def _in_process(task: Task, check: CommandCheck, grading: GradingPaths) -> list[LintFinding]:
    run = pytest_run(check.command)
    if run is None or check.role != "correctness":
        return []
    modules = workspace_imports(task.task_dir(), run, grading)
    if not modules:
        return []
    return [
        LintFinding(
            "in-process-grading",
            check.name,
            f"the grading tests import {', '.join(modules)} from the workspace: the "
            "deliverable runs inside the test process and can rewrite pytest's outcome",
            False,
        )
    ]


def _file_check(check: FileCheck) -> list[LintFinding]:
    if check.exists is True:
        return [
            LintFinding(
                "existence-only",
                check.name,
                f"{check.file}: the check only asks that the file exists",
                False,
            )
        ]
    if check.contains is not None and not check.contains.strip():
        return [
            LintFinding(
                "regex-accepts-empty",
                check.name,
                f"{check.file}: contains {check.contains!r} holds no visible text",
                False,
            )
        ]
    if check.matches is None:
        return []
    pattern = re2.compile(check.matches, options=quiet_re2_options())
    if pattern.search("") is not None:
        return [
            LintFinding(
                "regex-accepts-empty",
                check.name,
                f"{check.file}: the pattern {check.matches!r} matches an empty answer",
                False,
            )
        ]
    if all(pattern.search(probe) is not None for probe in INTEGER_PROBES):
        return [
            LintFinding(
                "regex-accepts-any-integer",
                check.name,
                f"{check.file}: the pattern {check.matches!r} matches any integer",
                False,
            )
        ]
    return []


def _answer_in_prompt(task: Task) -> list[LintFinding]:
    prompt = _words(task.prompt)
    found: list[LintFinding] = []
    answers = [("", task.expected_output or "")]
    answers += [
        (c.name, c.contains)
        for c in task.verification
        if isinstance(c, FileCheck) and c.role == "correctness" and c.contains
    ]
    for name, answer in answers:
        text = _words(answer)
        if len(text) >= MIN_ANSWER_CHARS and _contains_token(prompt, text):
            where = f"check {name!r} requires" if name else "the expected output is"
            found.append(
                LintFinding(
                    "answer-in-prompt",
                    name,
                    f"{where} {answer[:80]!r}, which the prompt states",
                    False,
                )
            )
    return found


def _words(text: str) -> str:
    return " ".join(text.lower().split())


def _contains_token(haystack: str, needle: str) -> bool:
    """``needle`` appears in ``haystack`` not as part of a longer word or number."""
    pattern = r"(?<![\w])" + re.escape(needle) + r"(?![\w])"
    return re.search(pattern, haystack) is not None
