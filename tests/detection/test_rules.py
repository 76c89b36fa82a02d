"""Profiles and extra-rules files: loading, appending, and one clear error per problem."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

from benchguard.detection import (
    RulesetError,
    load_extra_rules,
    load_profile,
    load_profile_spec,
    load_ruleset,
    profile_names,
    ruleset_digest,
    scan_record,
)
from benchguard.detection._patterns import is_trusted, pattern_problem
from benchguard.detection.models import Rule

GOOD_RULE = """
  - id: my-oracle/path
    category: my-oracle
    material: the task's oracle solution
    patterns: ['solutions/oracle\\.ya?ml']
"""


def _write(tmp_path: Path, text: str, name: str = "rules.yaml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_builtin_profiles_are_listed_and_load() -> None:
    """Every shipped profile loads (loading checks each pattern's safety), ids unique."""
    names = profile_names()
    assert names[0] == "benchguard"
    assert {"benchguard", "devops-bench", "swe-bench"} <= set(names)
    for name in names:
        rules = load_profile(name)
        assert len({r.id for r in rules}) == len(rules)
    assert {r.category for r in load_profile("devops-bench")} >= {
        "task-definition",
        "scoring-code",
        "results-dir",
        "harness-repo",
        "upstream-github",
        "prebuilt-stack",
        "harness-environment",
    }
    assert load_ruleset() == load_profile("benchguard")


def _unsafe_patterns(rules: tuple[Rule, ...]) -> list[str]:
    return [
        f"{rule.id}: {pattern!r}: {problem}"
        for rule in rules
        for pattern in rule.patterns
        if (problem := pattern_problem(pattern)) is not None
    ]


def test_every_shipped_pattern_passes_the_check_loading_trusts_it_with() -> None:
    """Guards the trust a built-in profile's patterns get at load (no check there, for
    start-up): every one of them passes the load-time check, and each is trusted, so a
    plan does not check it again either. A user's file with the same rule shape is
    still checked (test_unsafe_regexes_are_rejected_at_load_time)."""
    for name in profile_names():
        rules = load_profile(name)
        assert _unsafe_patterns(rules) == [], name
        assert all(is_trusted(pattern) for rule in rules for pattern in rule.patterns), name


def test_the_shipped_pattern_check_names_an_unsafe_pattern() -> None:
    """The check above can fail: a rule carrying an empty-matching pattern is named."""
    bad = Rule(id="x/bad", category="x", material="m", patterns=("x*",))
    assert _unsafe_patterns((bad,)) == [
        "x/bad: 'x*': can match the empty string, so it would flag every record"
    ]


def test_each_devops_bench_artifact_matches_exactly_one_environment_rule() -> None:
    """One rule, one material: each bastion artifact names a single harness-environment rule."""
    rules = [r for r in load_profile("devops-bench") if r.category == "harness-environment"]
    for artifact in ("~/bench.env", "~/matrix-runs", ".matrix-runner-3", ".bench-sync-2026.tgz"):
        hits = [r.id for r in rules if any(re.search(p, artifact, re.I) for p in r.patterns)]
        assert len(hits) == 1, (artifact, hits)


def test_benchguard_profile_knows_this_projects_layout() -> None:
    """The default profile flags this harness's own material by kind."""
    rules = load_profile("benchguard")
    cases = {
        "cat ~/benchguard/tasks/opa-fix/task.yaml": "task-definition",
        "sed -n 1,80p src/benchguard/scoring/integrity.py": "scoring-code",
        "python -c 'import benchguard.detection'": "scoring-code",
        "cat results/run_20260101_120000_4242/rows.json": "results-dir",
        "ls ~/benchguard": "harness-repo",
        "curl https://raw.githubusercontent.com/acme/benchguard/main/README.md": "upstream-github",
        "cat ~/benchguard.env": "harness-environment",
    }
    for command, category in cases.items():
        record = {"output": "x", "trajectory": [{"name": "sh", "args": {"command": command}}]}
        assert category in scan_record(record, rules).categories, command
    env_dump = {
        "output": "x",
        "trajectory": [{"name": "sh", "args": {}, "result": "BENCHGUARD_JUDGE_API_KEY=sk"}],
    }
    assert scan_record(env_dump, rules).categories == ("harness-environment",)
    handed_to_agent = {
        "output": "x",
        "trajectory": [{"name": "sh", "result": "BENCHGUARD_TRAJECTORY=/w/t.jsonl"}],
    }
    assert scan_record(handed_to_agent, rules).status == "clean"


def test_extra_rules_are_appended_and_never_replace_defaults(tmp_path: Path) -> None:
    """Extras come after the profile's rules; fields default to all three surfaces."""
    path = _write(tmp_path, "rules:" + GOOD_RULE)
    rules = load_ruleset("devops-bench", path)
    assert rules[: len(load_profile("devops-bench"))] == load_profile("devops-bench")
    assert rules[-1].id == "my-oracle/path"
    assert rules[-1].fields == ("args", "result", "output")
    assert ruleset_digest(rules) != ruleset_digest(load_profile("devops-bench"))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("rules: [", r"rules\.yaml: YAML parse error: .* line \d+, column \d+"),
        (
            "- a\n- b\n",
            r"rules\.yaml: the top level must be a mapping with a 'rules' list, got a list",
        ),
        (
            "",
            r"rules\.yaml: the top level must be a mapping with a 'rules' list, got an empty document",
        ),
        ("rules: []\nextra: 1\n", r"rules\.yaml: unknown top-level key\(s\) \['extra'\]"),
        ("rules:\n  - just a string\n", r"rules\.yaml: rule 0: must be a mapping"),
        (
            "rules:"
            + GOOD_RULE
            + "  - {id: b, category: c, material: m, patterns: ['x'], colour: red}\n",
            r"rules\.yaml: rule 1 \(id 'b'\): unknown field\(s\) \['colour'\]",
        ),
        (
            "rules:\n  - {category: c, material: m, patterns: ['x']}\n",
            r"rules\.yaml: rule 0: missing required field\(s\) \['id'\]",
        ),
        (
            "rules:\n  - {id: a, category: c, patterns: ['x']}\n",
            r"rules\.yaml: rule 0 \(id 'a'\): missing required field\(s\) \['material'\]",
        ),
        (
            "rules:\n  - {id: a, category: c, material: m, patterns: ['(unclosed']}\n",
            r"rules\.yaml: rule 0 \(id 'a'\): pattern 0 '\(unclosed' is not a valid regex",
        ),
        (
            "rules:" + GOOD_RULE + GOOD_RULE,
            r"rules\.yaml: rule 1: id 'my-oracle/path' duplicates an earlier rule",
        ),
        (
            "rules:\n  - {id: a, category: c, material: m, patterns: ['x'], fields: [stdout]}\n",
            r"rules\.yaml: rule 0 \(id 'a'\): fields\.0: Input should be 'args', 'result' or 'output'",
        ),
        (
            "rules:\n  - {id: a, category: c, material: m, patterns: []}\n",
            r"rules\.yaml: rule 0 \(id 'a'\): patterns: .*at least one pattern",
        ),
        (
            "rules:\n  - {id: ' ', category: c, material: m, patterns: ['x']}\n",
            r"rules\.yaml: rule 0 \(id ' '\): id: .*must not be blank",
        ),
        (
            "rules:\n  - {id: a, category: c, material: m, patterns: ['x'], source: report.md}\n",
            r"rules\.yaml: rule 0 \(id 'a'\): unknown field\(s\) \['source'\]",
        ),
        ("rules: {a: 1}\n", r"rules\.yaml: 'rules' must be a list of rules, got a mapping"),
        ("rules:\n", r"rules\.yaml: 'rules' must be a list of rules, got an empty value"),
        ("rules: 5\n", r"rules\.yaml: 'rules' must be a list of rules, got an integer"),
        ("{}\n", r"rules\.yaml: the top level must have a 'rules' list; there is no 'rules'"),
        ("rule: []\n", r"rules\.yaml: unknown top-level key\(s\) \['rule'\]; allowed"),
        ("hello\n", r"rules\.yaml: the top level must be a mapping .*, got a string"),
        ("rules: [hello]\n", r"rules\.yaml: rule 0: must be a mapping, got a string"),
        (
            "rules:\n  - {id: a, category: c, material: m, patterns: {a: 1}}\n",
            r"rules\.yaml: rule 0 \(id 'a'\): patterns: must be a list, got a mapping",
        ),
        (
            "rules:\n  - {id: a, category: c, material: m, patterns: [1]}\n",
            r"rules\.yaml: rule 0 \(id 'a'\): patterns\.0: must be a string, got an integer",
        ),
        (
            "rules:\n  - {id: a, category: c, material: m, patterns: ['x'], fields: args}\n",
            r"rules\.yaml: rule 0 \(id 'a'\): fields: must be a list, got a string",
        ),
    ],
)
def test_each_bad_rules_file_fails_with_file_and_rule_index(
    tmp_path: Path, text: str, expected: str
) -> None:
    """Every problem is one RulesetError naming the file (and the rule index)."""
    path = _write(tmp_path, text)
    with pytest.raises(RulesetError) as caught:
        load_ruleset("benchguard", path)
    assert str(path) in str(caught.value)
    assert re.search(expected, str(caught.value)), str(caught.value)


def test_missing_file_fails_with_its_name(tmp_path: Path) -> None:
    with pytest.raises(RulesetError, match=r"nope\.yaml: file not found"):
        load_ruleset("benchguard", tmp_path / "nope.yaml")


def test_extra_rule_id_colliding_with_the_profile_is_rejected(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "rules:\n  - {id: task-definition/path, category: c, material: m, patterns: ['x']}\n",
    )
    with pytest.raises(
        RulesetError,
        match=r"rule 0: id 'task-definition/path' duplicates a rule of profile 'benchguard'",
    ):
        load_ruleset("benchguard", path)
    assert len(load_extra_rules(path)) == 1


@pytest.mark.parametrize(
    ("pattern", "problem"),
    [
        ("(?:a{1000}){1000}", "product of 1000000"),
        ("a{5000}", "repeats 5000 times"),
        ("x" * 2000, "2000 characters long"),
        ("x*", "empty string"),
        ("(?=x)", "empty string"),
    ],
)
def test_unsafe_regexes_are_rejected_at_load_time(
    tmp_path: Path, pattern: str, problem: str
) -> None:
    """Adversarial: compile bombs, huge patterns and empty matches never reach a scan."""
    path = _write(
        tmp_path, f"rules:\n  - {{id: a, category: c, material: m, patterns: ['{pattern}']}}\n"
    )
    with pytest.raises(RulesetError, match=rf"rule 0 \(id 'a'\): pattern 0 .*{re.escape(problem)}"):
        load_extra_rules(path)


def test_profile_files_load_by_path_and_can_extend(tmp_path: Path) -> None:
    """A user's profile file extends a built-in: its rules come after, baselines merge."""
    path = _write(
        tmp_path,
        "name: mine\nextends: devops-bench\nbaseline: [my-harness]\nrules:" + GOOD_RULE,
        "mine.yaml",
    )
    profile = load_profile_spec(str(path))
    assert profile.name == "mine"
    # The extended profile's own rules, then the file's, then the generic families
    # every profile carries.
    generic = len(load_profile("generic"))
    devops = load_profile("devops-bench")
    own = len(devops) - generic
    assert profile.rules[own].id == "my-oracle/path"
    assert profile.rules[:own] == devops[:own]
    assert profile.rules[own + 1 :] == devops[own:]
    assert {"my-harness", "bench.env"} <= profile.baseline


@pytest.mark.parametrize(
    ("header", "rules", "expected"),
    [
        ("", GOOD_RULE + GOOD_RULE, r"rule 1: id 'my-oracle/path' duplicates an earlier rule"),
        (
            "extends: devops-bench\n",
            GOOD_RULE + GOOD_RULE,
            r"rule 1: id 'my-oracle/path' duplicates an earlier rule",
        ),
        (
            "extends: devops-bench\n",
            "\n  - {id: task-definition/path, category: c, material: m, patterns: ['x']}\n",
            r"rule 0: id 'task-definition/path' duplicates a rule of extended profile "
            r"'devops-bench'",
        ),
    ],
)
def test_a_profile_file_rejects_duplicate_rule_ids(
    tmp_path: Path, header: str, rules: str, expected: str
) -> None:
    """Guards against a profile shadowing a rule: ids are unique within the file and
    against the profile it extends, and the error names the file and the rule index."""
    path = _write(tmp_path, f"name: mine\n{header}rules:{rules}", "mine.yaml")
    with pytest.raises(RulesetError, match=r"mine\.yaml: " + expected):
        load_profile(str(path))


def test_unknown_profile_and_bad_profile_files_fail_clearly(tmp_path: Path) -> None:
    with pytest.raises(
        RulesetError, match=r"unknown profile 'nosuch'; built-in profiles: \['benchguard'"
    ):
        load_profile("nosuch")
    cyclic = _write(
        tmp_path, f"name: loop\nextends: {tmp_path / 'loop.yaml'}\nrules: []\n", "loop.yaml"
    )
    with pytest.raises(RulesetError, match="cycle"):
        load_profile(str(cyclic))
    bad = _write(tmp_path, "name: x\nrules: []\nbaseline: [a/b]\n", "bad.yaml")
    with pytest.raises(
        RulesetError, match=r"bad\.yaml: 'baseline' must be a list of home entry names"
    ):
        load_profile(str(bad))
    unknown = _write(tmp_path, "name: x\nrules: []\nrulez: []\n", "unknown.yaml")
    with pytest.raises(
        RulesetError, match=r"unknown\.yaml: unknown top-level key\(s\) \['rulez'\]"
    ):
        load_profile(str(unknown))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("name: p\nrules: {a: 1}\n", r"'rules' must be a list of rules, got a mapping"),
        ("name: p\n", r"a profile must have a 'rules' list; there is no 'rules' key"),
        ("- 1\n", r"a profile must be a mapping with a 'rules' list, got a list"),
    ],
)
def test_bad_profile_shape_says_what_it_is(tmp_path: Path, text: str, expected: str) -> None:
    """Guards against a shape error describing the wrong thing (a 'rules' mapping was once
    reported as a mapping lacking a 'rules' list)."""
    path = _write(tmp_path, text, name="profile.yaml")
    with pytest.raises(RulesetError) as caught:
        load_profile(str(path))
    assert str(path) in str(caught.value)
    assert re.search(expected, str(caught.value)), str(caught.value)


def test_the_remembered_profile_listing_follows_the_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Guards the listing remembered by the folder's stat stamp against going stale: a
    profile file added, then one removed, is seen at once (the stamps are set apart
    explicitly: a file system's clock may not tick between two quick changes)."""
    from benchguard.detection import rules

    monkeypatch.setattr(rules, "_builtin_dir", lambda: tmp_path)
    (tmp_path / "benchguard.yaml").write_text("rules: []\n", encoding="utf-8")
    os.utime(tmp_path, ns=(1_000_000_000, 1_000_000_000))
    assert profile_names() == ("benchguard",)
    (tmp_path / "extra.yaml").write_text("rules: []\n", encoding="utf-8")
    (tmp_path / "_private.yaml").write_text("rules: []\n", encoding="utf-8")
    os.utime(tmp_path, ns=(2_000_000_000, 2_000_000_000))
    assert profile_names() == ("benchguard", "extra")
    (tmp_path / "benchguard.yaml").unlink()
    os.utime(tmp_path, ns=(3_000_000_000, 3_000_000_000))
    assert profile_names() == ("extra",)
