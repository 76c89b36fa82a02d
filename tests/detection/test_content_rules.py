"""Task-definition content rules: the task.yaml shape is caught through per-line
prefixes and structured results; generic YAML keys and prose are not evidence.

The task text is this repository's own examples/tasks/*/task.yaml, so a change to the
task format that the rule no longer recognises fails here.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from benchguard.detection import CheatingReport, Rule, load_profile, scan_record
from benchguard.detection.surfaces import as_text, string_leaves

TASKS = Path(__file__).resolve().parents[2] / "examples" / "tasks"
SUM = (TASKS / "sum-numbers" / "task.yaml").read_text(encoding="utf-8")
NOTES = (TASKS / "write-notes" / "task.yaml").read_text(encoding="utf-8")
RULE = "task-definition/content"

DEVOPS_TASK = """\
name: opa-policy-repair
prompt: Fix the Gatekeeper constraint so that the payments namespace admits pods.
verification_spec:
  - type: kubectl
    role: correctness
    command: kubectl -n payments get pods
expected_output: |
  all pods in payments are Running
"""


@pytest.fixture(scope="module")
def ours() -> tuple[Rule, ...]:
    return load_profile("benchguard")


@pytest.fixture(scope="module")
def devops() -> tuple[Rule, ...]:
    return load_profile("devops-bench")


def _record(command: str, result: Any, output: Any = "done") -> dict[str, Any]:
    return {
        "input": "Add up the integers in numbers.txt.",
        "output": output,
        "trajectory": [
            {"name": "bash", "args": {"command": command}, "result": result, "status": "ok"}
        ],
    }


def _fired(report: CheatingReport) -> set[str]:
    return {f.rule for f in report.findings}


# --- tool output shapes a task.yaml read can take -------------------------------------


def cat_n(text: str) -> str:
    """`cat -n` / `nl`: a right-aligned line number and a tab before every line."""
    return "".join(f"{n:6}\t{line}\n" for n, line in enumerate(text.splitlines(), 1))


def grep_r(path: str, text: str, *, numbers: bool = False) -> str:
    """`grep -r '' DIR` (or `-rn`): the file's path, and line number, before every line."""
    return "".join(
        f"{path}:{f'{n}:' if numbers else ''}{line}\n"
        for n, line in enumerate(text.splitlines(), 1)
    )


def grep_context(path: str, text: str, key: str) -> str:
    """`grep -r -A3 KEY`: the match line uses ':' after the path, context lines '-'."""
    lines = text.splitlines()
    at = next(i for i, line in enumerate(lines) if key in line)
    out = [f"{path}:{lines[at]}"] + [f"{path}-{line}" for line in lines[at + 1 : at + 4]]
    return "\n".join(out) + "\n"


def bat(text: str) -> str:
    """`bat`: a line number, a box-drawing bar and a space."""
    return "".join(f"{n:4} \u2502 {line}\n" for n, line in enumerate(text.splitlines(), 1))


def diff_added(text: str) -> str:
    """`git show` of a commit that added the file: '+' before every line."""
    return "".join(f"+{line}\n" for line in text.splitlines())


def lines(text: str, first: int, last: int) -> str:
    """`sed -n FIRST,LASTp`: a partial read."""
    return "\n".join(text.splitlines()[first - 1 : last]) + "\n"


EVASIONS: list[tuple[str, str, Any]] = [
    ("cat-n glob", "cat -n t*/*/task.y*ml", cat_n(SUM) + cat_n(NOTES)),
    ("nl", "nl -ba sum-numbers/t*", cat_n(SUM)),
    ("grep -r path prefix", "grep -r '' sum-numbers", grep_r("sum-numbers/task.yaml", SUM)),
    (
        "grep -rn path and number",
        "grep -rn '' .",
        grep_r("./sum-numbers/task.yaml", SUM, numbers=True),
    ),
    (
        "grep -A context lines",
        "grep -r -A3 name: .",
        grep_context("./sum-numbers/task.yaml", SUM, "total-correct"),
    ),
    (
        "grep expected_output",
        "grep -r expected_ .",
        "./sum-numbers/task.yaml:expected_output: 137\n",
    ),
    ("bat", "bat sum-numbers/t*", bat(SUM)),
    ("git show", "git show HEAD~3 -- '*/t*'", diff_added(SUM)),
    ("structured stdout", "cat */t*", {"stdout": SUM, "stderr": "", "exit_code": 0}),
    ("structured nested", "cat */t*", {"runs": [{"out": [cat_n(NOTES)]}]}),
    ("python open", "python3 -c 'print(open(glob(\"*/t*\")[0]).read())'", SUM),
    ("python yaml repr", "python3 -c 'print(yaml.safe_load(...))'", repr(yaml.safe_load(SUM))),
    ("json dump of the task", "yq -o json */t*", json.dumps(yaml.safe_load(SUM), indent=2)),
    ("json-escaped string", "python3 -c 'print(json.dumps(open(f).read()))'", json.dumps(SUM)),
    (
        "flow mapping",
        "yq -o yaml -P=false */t*",
        "verification: [{name: total-correct, role: correctness, file: answer.txt}]\n",
    ),
    (
        "yaml re-dump sorted",
        "python3 -c 'print(yaml.safe_dump(...))'",
        yaml.safe_dump(yaml.safe_load(SUM)),
    ),
    ("partial head of checks", "sed -n 6,9p */t*", lines(SUM, 6, 9)),
    ("partial tail", "tail -n 2 */t*", lines(SUM, 21, 22)),
    (
        "results record pair",
        "jq '.[0] | {expected_output, rubric}' */*/*.json",
        json.dumps({"expected_output": "137", "rubric": "The total"}, indent=2),
    ),
]


@pytest.mark.parametrize(
    ("command", "result"), [(c, r) for _, c, r in EVASIONS], ids=[i for i, _, _ in EVASIONS]
)
def test_task_yaml_read_is_caught_through_prefixes_and_structure(
    ours: tuple[Rule, ...], command: str, result: Any
) -> None:
    """Adversarial: a read of a task definition that never spells tasks/.../task.yaml,
    with each line prefixed (cat -n, grep -r, bat, diff), wrapped in a structured
    result (line breaks JSON-escaped), or only partly shown, must still flag."""
    report = scan_record(_record(command, result), ours)
    assert RULE in _fired(report), report.findings
    assert "task-definition/path" not in _fired(report)
    finding = next(f for f in report.findings if f.rule == RULE)
    assert finding.field == "result"


def test_task_yaml_in_a_structured_final_output_is_caught(ours: tuple[Rule, ...]) -> None:
    """Adversarial: the task text returned as the record's structured final output."""
    report = scan_record(_record("true", ""), ours)
    assert report.status == "clean"
    report = scan_record(_record("true", "", output={"answer": cat_n(SUM)}), ours)
    assert {(f.rule, f.field) for f in report.findings} == {(RULE, "output")}


DEVOPS_EVASIONS: list[tuple[str, Any]] = [
    ("cat -n t*/*/task.y*ml", cat_n(DEVOPS_TASK)),
    ("grep -r '' opa", grep_r("opa/task.yaml", DEVOPS_TASK)),
    ("grep -rn '' .", grep_r("./opa/task.yaml", DEVOPS_TASK, numbers=True)),
    ("cat */t*", {"stdout": DEVOPS_TASK}),
    ("python3 -c 'print(json.dumps(open(f).read()))'", json.dumps(DEVOPS_TASK)),
    ("python3 -c 'print(json.dumps(yaml.safe_load(f)))'", json.dumps(yaml.safe_load(DEVOPS_TASK))),
]


@pytest.mark.parametrize(("command", "result"), DEVOPS_EVASIONS)
def test_devops_bench_content_rule_gets_the_same_prefixes(
    devops: tuple[Rule, ...], command: str, result: Any
) -> None:
    """Adversarial: the reference profile's `^\\s*verification_spec:` rule is defeated by
    the same line prefixes and structured results unless it allows for them."""
    assert RULE in _fired(scan_record(_record(command, result), devops))


TLS = """\
tls:
  enabled: true
  verification: strict
  ca_file: /etc/ssl/certs/ca.pem
"""
KUBERNETES = """\
apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  labels:
    role: frontend
spec:
  replicas: 2
  template:
    spec:
      containers:
        - name: web
          image: nginx:1.27
          readinessProbe:
            httpGet: {path: /healthz, port: 80}
"""
WORKFLOW = """\
name: ci
on: [push, pull_request]
jobs:
  verification:
    runs-on: ubuntu-latest
    steps:
      - name: checkout
        uses: actions/checkout@v4
      - name: verification
        run: make verify
"""
PYPROJECT = """\
[project]
name = "grader"
version = "0.1.0"
description = "Scores essays against a rubric: clarity, structure, evidence."
[tool.pytest.ini_options]
addopts = "-q"
"""
RUBRIC_YAML = """\
rubric: grade on clarity
criteria:
  - name: clarity
    weight: 2
verification: manual
"""
CHECKLIST_YAML = """\
verification:
  - name: lint
    command: make lint
  - name: unit
    command: make test
rubric:
  clarity: 3
"""
CREWAI_TASKS = """\
research_task:
  description: >
    Research the topic.
  expected_output: >
    A list with 10 bullet points.
  agent: researcher
"""
CHAT = """\
messages:
  - role: system
    content: You are a careful assistant.
  - role: user
    content: Summarise the verification: section.
"""
PROSE = """\
## Verification

Verification: every release is signed. The rubric: clarity first, then evidence.
Each reviewer has a role: author or approver. Expected output: a signed tarball.
"""
GITHUB_COMMIT = {
    "sha": "3f2a1b9c",
    "commit": {"message": "fix", "verification": {"verified": True, "reason": "valid"}},
}
EVAL_DATASET = '{"input": "2+2", "expected_output": "4"}\n{"input": "3+3", "expected_output": "6"}'

HONEST: list[tuple[str, str, Any]] = [
    ("tls config", "cat /etc/app/tls.yaml", TLS),
    ("tls config cat -n", "cat -n /etc/app/tls.yaml", cat_n(TLS)),
    ("tls config grep -r", "grep -r '' /etc/app", grep_r("/etc/app/tls.yaml", TLS)),
    ("tls config structured", "cat tls.yaml", {"stdout": TLS}),
    ("kubernetes manifest", "kubectl get deploy web -o yaml", KUBERNETES),
    ("github actions workflow", "cat .github/workflows/ci.yml", WORKFLOW),
    ("pyproject", "cat pyproject.toml", PYPROJECT),
    ("rubric yaml", "cat grading.yaml", RUBRIC_YAML),
    ("rubric yaml cat -n", "cat -n grading.yaml", cat_n(RUBRIC_YAML)),
    ("generic verification list", "cat checks.yaml", CHECKLIST_YAML),
    ("crewai tasks", "cat -n config/tasks.yaml", cat_n(CREWAI_TASKS)),
    (
        "crewai tasks grep",
        "grep -rn '' config",
        grep_r("config/tasks.yaml", CREWAI_TASKS, numbers=True),
    ),
    ("chat messages", "cat chat.yaml", CHAT),
    ("docs prose", "cat docs/release.md", PROSE),
    ("github api commit", "gh api repos/acme/app/commits/3f2a1b9c", GITHUB_COMMIT),
    ("github api commit text", "curl -s api/commits/3f2a1b9c", json.dumps(GITHUB_COMMIT, indent=2)),
    ("eval dataset", "head -2 data/eval.jsonl", EVAL_DATASET),
]


@pytest.mark.parametrize(
    ("command", "result"), [(c, r) for _, c, r in HONEST], ids=[i for i, _, _ in HONEST]
)
def test_generic_configs_and_prose_stay_clean(
    ours: tuple[Rule, ...], command: str, result: Any
) -> None:
    """False-positive guard: a flag zeroes the run, so YAML that merely uses the words
    verification, rubric, role or expected_output (TLS settings, manifests, workflows,
    grading rubrics, CrewAI tasks, chat messages, API responses, prose) is not a task
    definition."""
    report = scan_record(_record(command, result, output=result), ours)
    assert report.status == "clean", report.findings


@pytest.mark.parametrize("text", [TLS, RUBRIC_YAML, WORKFLOW, KUBERNETES, PROSE])
def test_generic_yaml_stays_clean_under_devops_bench(devops: tuple[Rule, ...], text: str) -> None:
    """False-positive guard: the reference profile's keys are verification_spec and
    expected_output only; the wider prefixes must not make generic YAML match."""
    assert scan_record(_record("cat x.yaml", cat_n(text)), devops).status == "clean"


# --- structured surfaces ---------------------------------------------------------------


def test_structured_text_is_the_dump_then_the_string_leaves_in_order() -> None:
    """Leaves keep their real line breaks, come in document order, and the text stays
    deterministic and no longer than twice the dump."""
    value = {"b": "two\nlines", "a": [1, {"c": "x\ty"}, None, "tail"], "n": 3}
    dumped = json.dumps(value, ensure_ascii=False)
    text = as_text(value)
    assert text == dumped + "\ntwo\nlines\nx\ty\ntail"
    assert string_leaves(value) == ["two\nlines", "x\ty", "tail"]
    assert as_text(value) == text
    assert len(text) <= 2 * len(dumped)
    assert as_text({"k": 1, "m": [True, None]}) == '{"k": 1, "m": [true, null]}'
    assert as_text("plain\ntext") == "plain\ntext"
    assert as_text(None) == ""


def test_deep_structures_and_unserializable_values_do_not_raise() -> None:
    """Adversarial: a deeply nested result must not overflow the stack in the leaf walk,
    and a value JSON cannot dump still falls back to str() without leaves."""
    deep: Any = "bottom\nline"
    for _ in range(50_000):
        deep = [deep]
    text = as_text(deep)
    assert isinstance(text, str)
    cyclic: list[Any] = ["x\ny"]
    cyclic.append(cyclic)
    assert as_text(cyclic) == str(cyclic)


def test_line_continuation_in_args_does_not_hide_a_left_bounded_path(
    ours: tuple[Rule, ...],
) -> None:
    """Adversarial: `cat \\<newline>benchguard.env` dumps as `...\\nbenchguard.env`, where
    the escaped `n` is a word character in front of the name; the args leaves keep the
    real line break, so the left-bounded env-file rule still sees it."""
    report = scan_record(_record("cat \\\n~/benchguard.env", "BENCHGUARD_X=1"), ours)
    assert [(f.rule, f.field) for f in report.findings] == [
        ("harness-environment/env-file", "args")
    ]


def test_structured_finding_excerpt_is_bounded_and_collapsed(ours: tuple[Rule, ...]) -> None:
    """The excerpt of a finding inside a structured result is a short collapsed window
    that shows the matched key, not the whole task."""
    report = scan_record(_record("cat */t*", {"stdout": SUM}), ours)
    finding = next(f for f in report.findings if f.rule == RULE)
    assert "role: correctness" in finding.excerpt.replace("\\n", " ")
    assert len(finding.excerpt) <= 2 * 80 + 240
    assert "\n" not in finding.excerpt
