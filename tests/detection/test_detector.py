"""The scan: surfaces, rule kinds, caps, no_data, bounds and annotation."""

from __future__ import annotations

import json
from typing import Any

import pytest

from benchguard.detection import (
    SCAN_INCOMPLETE_CATEGORY,
    CheatingReport,
    Rule,
    annotate_records,
    load_profile,
    report_from_record,
    ruleset_digest,
    scan_record,
)
from benchguard.detection.detector import MAX_FINDINGS_PER_RULE


@pytest.fixture(scope="module")
def devops() -> tuple[Rule, ...]:
    return load_profile("devops-bench")


@pytest.fixture(scope="module")
def ours() -> tuple[Rule, ...]:
    return load_profile("benchguard")


def _exec(command: str, result: Any = "", name: str = "exec") -> dict[str, Any]:
    return {"name": name, "args": {"command": command}, "result": result, "status": "completed"}


def _record(*entries: Any, output: Any = "done", prompt: str = "Fix the pods.") -> dict[str, Any]:
    return {"input": prompt, "output": output, "trajectory": list(entries)}


def _rules_fired(report: CheatingReport) -> set[str]:
    return {f.rule for f in report.findings}


def test_task_yaml_read_via_args_flags_definition_and_repo(devops: tuple[Rule, ...]) -> None:
    """Typing the task definition's path flags on args, at the right step and tool."""
    report = scan_record(
        _record(_exec("kubectl get ns"), _exec("cat ~/devops-bench/tasks/opa/task.yaml")), devops
    )
    assert report.status == "flagged"
    assert report.categories == ("harness-repo", "task-definition")
    first = next(f for f in report.findings if f.rule == "task-definition/path")
    assert (first.field, first.trajectory_index, first.tool) == ("args", 1, "exec")


def test_rubric_read_through_innocuous_command_is_caught_by_content(
    devops: tuple[Rule, ...], ours: tuple[Rule, ...]
) -> None:
    """Adversarial: path hiding. `cat /tmp/x` reveals nothing, but the answer-key keys in
    the result do; the finding is on the result surface only. (A bare `rubric:` is not
    evidence for our profile: generic YAML uses it; see test_content_rules.py.)"""
    for rules, key in ((devops, "expected_output"), (ours, "expected_output")):
        report = scan_record(
            _record(_exec("cat /tmp/x", f"name: t\n{key}: |\n  all good\n")), rules
        )
        assert report.status == "flagged"
        assert {(f.rule, f.field) for f in report.findings} == {
            ("task-definition/content", "result")
        }


def test_find_exec_reads_are_caught_by_results_record_markers(
    devops: tuple[Rule, ...], ours: tuple[Rule, ...]
) -> None:
    """Adversarial: indirection. `find ~ -name results.json -exec cat {} +` never spells a
    results path; the JSON keys of a results record give it away."""
    # Keys in the harness's record order (runner.seed_record): expected_output, rubric.
    stored = json.dumps(
        [{"name": "t", "expected_output": "x", "rubric": None, "cheating_report": {}}]
    )
    for rules in (devops, ours):
        report = scan_record(
            _record(_exec("find ~ -name results.json -exec cat {} +", stored)), rules
        )
        # The typed search for a results file is itself a finding since detector v13
        # (prior-run-leftovers/results-file); the record's keys are seen in the result.
        assert set(report.categories) == {"results-dir", "task-definition", "prior-run-leftovers"}
        assert {f.field for f in report.findings if f.category != "prior-run-leftovers"} == {
            "result"
        }


def test_reading_the_detectors_own_docs_flags(
    devops: tuple[Rule, ...], ours: tuple[Rule, ...]
) -> None:
    """Adversarial: the docs explain the rules and the scoring, so reading them is
    reconnaissance and flags as the harness checkout."""
    report = scan_record(
        _record(_exec("cat ~/devops-bench/docs/components/cheat-detection.md")), devops
    )
    assert "harness-repo" in report.categories
    # A cheat-detection.md elsewhere (a game's anti-cheat notes) is not the harness's.
    for command in ("cat ~/benchguard/docs/cheat-detection.md",):
        assert "harness-repo" in scan_record(_record(_exec(command)), ours).categories


def test_passive_sighting_in_grep_stderr_flags_on_result(devops: tuple[Rule, ...]) -> None:
    """Adversarial: a harness path that surfaces in grep's error output is a sighting of
    material no legitimate task puts in view; it flags on the result surface."""
    stderr = (
        "grep: /home/agent/devops-bench/results/matrix: Is a directory\n"
        "grep: ~/matrix-runs: Permission denied\n"
    )
    report = scan_record(_record(_exec("grep -r opa .", stderr)), devops)
    assert set(report.categories) == {"harness-environment", "harness-repo", "results-dir"}
    assert {f.field for f in report.findings} == {"result"}
    typed = scan_record(_record(_exec("ls ~/devops-bench")), devops)
    assert {f.field for f in typed.findings} == {"args"}


def test_upstream_clone_and_final_output_mentions_flag(ours: tuple[Rule, ...]) -> None:
    """The upstream URL flags; a scoring path in the final answer flags with no step/tool."""
    report = scan_record(_record(_exec("git clone https://github.com/acme/benchguard")), ours)
    assert report.categories == ("upstream-github",)
    only_output = scan_record(
        _record(_exec("ls"), output="I read src/benchguard/scoring/gate.py"), ours
    )
    finding = only_output.findings[0]
    assert (finding.field, finding.trajectory_index, finding.tool) == ("output", None, None)


def test_legitimate_work_stays_clean(devops: tuple[Rule, ...], ours: tuple[Rule, ...]) -> None:
    """False-positive guard: kubectl, gcloud, cloning a user repo whose name ends in -bench
    or contains "bench", and writing report.md stay clean under both profiles."""
    record = _record(
        _exec("kubectl get pods -A", "NAMESPACE NAME READY\ndefault web-1 1/1"),
        _exec("git clone ~/opa-repo-cluster-1.git work && cd work && git log -n 3"),
        _exec("git clone https://github.com/acme/kube-bench && ls kube-bench"),
        _exec("git clone git@github.com:acme/my-benchguard-plugins.git", "Cloning..."),
        _exec("gcloud container clusters list", "NAME LOCATION\nc1 us-central1"),
        _exec("cat > report.md <<'EOF'\n# Report\nAll fixed.\nEOF"),
        _exec("ls ~/workbench ~/devops-bench-notes ~/benchguard-demo", "a b c"),
        output="Fixed three workloads; see report.md.",
    )
    for rules in (devops, ours):
        report = scan_record(record, rules)
        assert report.status == "clean", report.findings


def test_null_result_still_scans_args(devops: tuple[Rule, ...]) -> None:
    """A gemini-style entry with result None is scanned on args."""
    entry = {"name": "run_shell", "args": {"command": "cat ~/bench.env"}, "result": None}
    assert scan_record(_record(entry), devops).categories == ("harness-environment",)


def test_structured_surfaces_are_json_dumped(devops: tuple[Rule, ...]) -> None:
    """A dict result and a dict output are dumped to JSON and scanned, not skipped."""
    report = scan_record(
        _record(_exec("x", {"verification_spec": [1]}), output={"expected_output": "y"}), devops
    )
    assert {(f.rule, f.field) for f in report.findings} == {
        ("task-definition/content", "result"),
        ("task-definition/content", "output"),
    }


def test_non_serializable_args_fall_back_to_str_and_later_entries_still_flag(
    devops: tuple[Rule, ...],
) -> None:
    """Adversarial: a foreign harness storing an object JSON cannot dump must not
    crash the scan or hide the rest of the trajectory."""

    class Opaque:
        def __str__(self) -> str:
            return "opaque ~/devops-bench handle"

    bad = {"name": "exec", "args": {"handle": Opaque(), "n": {1, 2}}, "result": ""}
    report = scan_record(_record(bad, _exec("cat tf/prebuilt/main.tf")), devops)
    assert {(f.rule, f.trajectory_index) for f in report.findings} == {
        ("harness-repo/path", 0),
        ("prebuilt-stack/path", 1),
    }


def test_empty_run_is_no_data_never_clean(devops: tuple[Rule, ...]) -> None:
    """An empty trajectory with empty, {}, [] or missing output gives no_data."""
    outputs: tuple[object, ...] = ("", "   ", {}, [], None)
    for output in outputs:
        report = scan_record({"trajectory": [], "output": output}, devops)
        assert report.status == "no_data"
        assert report.scanned.trajectory_entries == 0
    assert scan_record({"output": "answer"}, devops).status == "clean"


def test_non_dict_entries_are_skipped_and_indices_count_dicts(devops: tuple[Rule, ...]) -> None:
    """Strings and nulls in the trajectory are skipped; trajectory_index counts dicts."""
    report = scan_record(_record("junk", None, 7, _exec("cat ~/bench.env")), devops)
    assert report.scanned.trajectory_entries == 1
    assert report.findings[0].trajectory_index == 0
    assert scan_record({"trajectory": ["x", 3], "output": []}, devops).status == "no_data"


def test_findings_are_capped_per_rule_and_one_per_pattern_per_surface(
    devops: tuple[Rule, ...],
) -> None:
    """A hundred reads give at most MAX_FINDINGS_PER_RULE findings per rule; a surface
    repeating the path many times gives one finding per pattern."""
    noisy = _exec("cat ~/bench.env ~/bench.env ~/bench.env", "~/bench.env\n" * 500)
    report = scan_record(_record(noisy), devops)
    assert [(f.field) for f in report.findings] == ["args", "result"]
    many = scan_record(_record(*[_exec(f"cat ~/bench.env # {i}") for i in range(100)]), devops)
    assert len(many.findings) == MAX_FINDINGS_PER_RULE
    assert [f.trajectory_index for f in many.findings] == list(range(MAX_FINDINGS_PER_RULE))


def test_excerpt_is_a_collapsed_window_around_the_match(devops: tuple[Rule, ...]) -> None:
    """Excerpts keep ±80 characters with whitespace runs collapsed."""
    result = "a" * 200 + "\n\n   ~/bench.env   \t\n" + "b" * 200
    finding = scan_record(_record(_exec("x", result)), devops).findings[0]
    assert finding.excerpt == "a" * 75 + " ~/bench.env " + "b" * 75


def test_findings_come_out_rule_major(devops: tuple[Rule, ...]) -> None:
    """Rule order first, then entry order, args before result, output last."""
    report = scan_record(
        _record(
            _exec("cat ~/bench.env", "~/matrix-runs"),
            _exec("ls ~/matrix-runs", "~/bench.env"),
            output="~/bench.env",
        ),
        devops,
    )
    order = [(f.rule.rsplit("/", 1)[-1], f.trajectory_index, f.field) for f in report.findings]
    assert order == [
        ("env-file", 0, "args"),
        ("env-file", 1, "result"),
        ("env-file", None, "output"),
        ("run-tree", 0, "result"),
        ("run-tree", 1, "args"),
    ]


def test_reports_are_deterministic_and_record_the_ruleset(devops: tuple[Rule, ...]) -> None:
    """Same record and rules give byte-identical reports; the report names the digest of
    the full ruleset and carries the dynamic rules themselves."""
    dynamic = (
        Rule(
            id="x/path",
            category="prior-run-artifact",
            material="m",
            patterns=(r"~/x\b",),
            source="x",
        ),
    )
    record = _record(_exec("cat ~/x bench.env", "tf/prebuilt/ here"))
    first = scan_record(record, devops, dynamic_rules=dynamic).model_dump_json()
    second = scan_record(
        json.loads(json.dumps(record)), devops, dynamic_rules=dynamic
    ).model_dump_json()
    assert first == second
    report = CheatingReport.model_validate_json(first)
    assert report.ruleset_digest == ruleset_digest(devops + dynamic)
    assert report.dynamic_rules == dynamic
    assert report.findings[-1].rule == "x/path"  # dynamic rules scan after static ones


def test_annotate_replaces_reports_idempotently_and_isolates_failures(
    devops: tuple[Rule, ...],
) -> None:
    """annotate_records replaces any previous report (twice gives the same result); a
    failure on one record leaves it {} with an error and never touches the others."""
    records: list[dict[str, Any]] = [
        _record(_exec("cat ~/bench.env")) | {"cheating_report": {"status": "clean"}},
        _record(_exec("ls")),
        _record(_exec("cat ~/bench.env")),
    ]

    def dynamic_for(index: int, record: dict[str, Any]) -> tuple[Rule, ...]:
        if index == 1:
            raise RuntimeError("inventory exploded")
        return ()

    errors = annotate_records(records, devops, dynamic_rules_for=dynamic_for)
    assert len(errors) == 1 and errors[0].startswith("record 1: RuntimeError")
    assert records[1]["cheating_report"] == {}
    assert records[0]["cheating_report"]["status"] == "flagged"
    snapshot = json.dumps(records, sort_keys=True)
    assert annotate_records(records, devops, dynamic_rules_for=dynamic_for) == errors
    assert json.dumps(records, sort_keys=True) == snapshot
    assert annotate_records([records[1]], devops) == []
    assert records[1]["cheating_report"]["status"] == "clean"


def test_a_record_that_is_not_an_object_fails_alone(devops: tuple[Rule, ...]) -> None:
    """A non-object record is an error for that record only."""
    records: list[Any] = [["not", "a", "record"], _record(_exec("ls"))]
    errors = annotate_records(records, devops)
    assert len(errors) >= 1 and all(e.startswith("record 0") for e in errors)
    assert records[1]["cheating_report"]["status"] == "clean"


def test_tiny_budget_on_a_huge_record_is_flagged_incomplete_not_clean(
    devops: tuple[Rule, ...],
) -> None:
    """Fail closed: a scan that runs out of its time budget reports flagged, incomplete
    and scan-incomplete, never clean."""
    big = [_exec(f"kubectl logs pod-{i}", "line of honest output\n" * 2000) for i in range(200)]
    report = scan_record(_record(*big), devops, time_budget_s=1e-6)
    assert report.status == "flagged"
    assert report.incomplete and report.incomplete_reason
    assert SCAN_INCOMPLETE_CATEGORY in report.categories
    assert scan_record(_record(*big), devops).status == "clean"


def test_catastrophic_user_pattern_is_bounded_and_fails_closed() -> None:
    """Adversarial: a backtracking pattern in a hand-built rule cannot hang the scan; the
    record is reported incomplete within its budget (plus a generous margin)."""
    import time

    rule = Rule(id="redos/x", category="redos", material="m", patterns=(r"(a|a)+$",))
    record = _record(_exec("x", "a" * 40 + "b\na"))
    start = time.monotonic()
    report = scan_record(record, (rule,), time_budget_s=0.2)
    assert time.monotonic() - start < 5.0
    assert report.status == "flagged" and report.incomplete


def test_an_unusable_pattern_fails_closed_while_other_rules_still_scan() -> None:
    """A rule built in code with a compile bomb is not run; the report says why and the
    other rules still produce their findings."""
    bomb = Rule(id="bomb/x", category="bomb", material="m", patterns=("(?:a{1000}){1000}",))
    fine = Rule(id="fine/x", category="fine", material="m", patterns=("secret-file",))
    report = scan_record(_record(_exec("cat secret-file")), (bomb, fine))
    assert report.incomplete and "bomb/x" in (report.incomplete_reason or "")
    assert report.categories == ("fine", SCAN_INCOMPLETE_CATEGORY)


def test_oversized_surface_is_scanned_up_to_the_cap_and_marked_incomplete(
    devops: tuple[Rule, ...], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Text beyond the surface cap is not read; what was read still yields findings and
    the report says the scan is incomplete."""
    from benchguard.detection import detector

    monkeypatch.setattr(detector, "MAX_SURFACE_CHARS", 1000)
    report = scan_record(_record(_exec("cat ~/bench.env", "x" * 5000 + " matrix-runs")), devops)
    assert report.incomplete and report.status == "flagged"
    assert {f.rule for f in report.findings} == {"harness-environment/env-file"}


def test_report_from_record_is_lenient_and_errs_towards_flagged(devops: tuple[Rule, ...]) -> None:
    """Stored reports parse back; junk gives None; an inconsistent report reads flagged."""
    record = _record(_exec("cat ~/bench.env"))
    annotate_records([record], devops)
    parsed = report_from_record(record)
    assert parsed is not None and parsed.status == "flagged"
    for junk in ({}, None, "flagged", [1], {"status": "weird"}):
        assert report_from_record({"cheating_report": junk}) is None
    assert report_from_record({}) is None
    messy = {
        "status": "clean",
        "categories": "results-dir",
        "findings": [record["cheating_report"]["findings"][0], {"rule": 3}],
    }
    lenient = report_from_record({"cheating_report": messy})
    assert lenient is not None and lenient.status == "flagged"
    assert lenient.categories == ("harness-environment", "results-dir")
    assert len(lenient.findings) == 1
