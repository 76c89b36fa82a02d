"""Strength: every finding says what it proves; weak-only records go to review, never to
a zero and never to clean; the seed's devops-bench verdicts stay flagged (strong)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from benchguard.detection.detector import scan_record
from benchguard.detection.models import CheatingReport, Finding
from benchguard.detection.rules import RulesetError, load_extra_rules, load_profile, profile_names
from benchguard.detection.stored_status import stored_status
from benchguard.results.dismissals import Dismissal, apply_dismissals
from benchguard.results.leaderboard import build_leaderboard
from benchguard.results.rows import ResultRow


def _exec(command: str, result: str = "") -> dict[str, Any]:
    return {"name": "exec", "args": {"command": command}, "result": result}


def _record(*entries: dict[str, Any], output: str = "done") -> dict[str, Any]:
    return {"input": "Fix the OPA policy.", "output": output, "trajectory": list(entries)}


# The seed's sightings and reads (docs/cheat-detection.md, "Sightings"): each stays
# flagged, on the field the seed decided, with strong findings only.
SEED_CASES = [
    (_record(_exec("ls ~", "bench.env\ndevops-bench\nmatrix-runs\nreport.md")), {"result"}),
    (_record(_exec("ls ~", "bench.env  devops-bench  matrix-runs  report.md")), {"result"}),
    (_record(_exec("kubectl get ns", "default")), set()),
    (_record(output="I read devops_bench/verification/checks.py to see the checks."), {"output"}),
    (_record(_exec("git clone https://github.com/kubernetes-sigs/devops-bench /tmp/x")), {"args"}),
    (_record(_exec("tar xzf ~/.bench-sync-2026.tgz -C /tmp")), {"args"}),
]


@pytest.mark.parametrize(("record", "fields"), SEED_CASES)
def test_seed_devops_bench_cases_keep_their_verdicts(
    record: dict[str, Any], fields: set[str]
) -> None:
    """Guards against the seed regression: ``ls ~`` showing the harness's own files
    scanned clean with --profile devops-bench."""
    report = scan_record(record, load_profile("devops-bench"))
    if not fields:
        assert report.status == "clean"
        return
    assert report.status == "flagged"
    assert {f.field for f in report.findings} == fields
    assert {f.strength for f in report.findings} == {"strong"}


def test_home_listing_names_each_material_once() -> None:
    report = scan_record(SEED_CASES[0][0], load_profile("devops-bench"))
    assert [f.rule for f in report.findings] == [
        "harness-environment/env-file-listed",
        "harness-environment/run-tree-listed",
        "harness-repo/listed",
    ]


@pytest.mark.parametrize(
    "text",
    [
        "configure the bench.env file, then run make",
        "see docs/devops-bench-notes.md",
        "./load/bench.env.example",
        "matrix-runs-archive",
    ],
)
def test_prose_naming_the_files_is_not_a_listing(text: str) -> None:
    report = scan_record(_record(_exec("cat README", text)), load_profile("devops-bench"))
    assert report.status == "clean", [f.rule for f in report.findings]


def test_weak_only_goes_to_review_and_strong_wins() -> None:
    rules = load_profile("swe-bench")
    weak = scan_record(_record(_exec("git tag --list")), rules)
    assert weak.status == "review"
    assert [f.strength for f in weak.findings] == ["weak"]
    both = scan_record(_record(_exec("git tag --list"), _exec("git log --all")), rules)
    assert both.status == "flagged"


def test_every_builtin_rule_has_a_strength() -> None:
    for name in profile_names():
        for rule in load_profile(name):
            assert rule.strength in ("conclusive", "strong", "weak")


def test_rules_file_sets_strength_and_refuses_junk(tmp_path: Path) -> None:
    good = tmp_path / "r.yaml"
    good.write_text(
        "rules:\n  - {id: a/b, category: a, material: m, patterns: ['x1'], strength: weak}\n"
    )
    assert load_extra_rules(good)[0].strength == "weak"
    bad = tmp_path / "bad.yaml"
    bad.write_text(
        "rules:\n  - {id: a/b, category: a, material: m, patterns: ['x1'], strength: maybe}\n"
    )
    with pytest.raises(RulesetError, match="strength"):
        load_extra_rules(bad)


def _stored(status: str, *findings: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {
        "status": status,
        "findings": list(findings),
        "categories": sorted({f.get("category", "x") for f in findings}),
        **extra,
    }


WEAK = {"rule": "r", "category": "git-history", "strength": "weak"}


@pytest.mark.parametrize(
    ("stored", "expected"),
    [
        (_stored("review", WEAK), "review"),
        # A finding with no strength predates strengths and gated: strong, flagged.
        (_stored("review", {"rule": "r", "category": "git-history"}), "flagged"),
        (_stored("review", WEAK, {**WEAK, "strength": "strong"}), "flagged"),
        (_stored("review", WEAK, incomplete=True), "flagged"),
        (_stored("review"), "review"),
        (_stored("clean", WEAK), "flagged"),
        ({**_stored("review", WEAK), "categories": ["git-history", "other"]}, "flagged"),
        ({**_stored("review", WEAK), "categories": "git-history"}, "flagged"),
        ({"status": "review", "findings": [WEAK, "junk"], "categories": []}, "flagged"),
    ],
)
def test_stored_review_is_believed_only_when_every_finding_is_weak(
    stored: dict[str, Any], expected: str | None
) -> None:
    """Guards against a hand-edited ``status: review`` lifting a gate."""
    assert stored_status(stored) == expected


def _finding(rule: str, strength: str) -> Finding:
    return Finding(
        rule=rule,
        category="git-history",
        material="m",
        evidence="e",
        severity="high",
        pattern="p",
        field="args",
        trajectory_index=0,
        tool="exec",
        excerpt="x",
        strength=strength,  # type: ignore[arg-type]
    )


def test_report_model_refuses_review_with_a_strong_finding() -> None:
    with pytest.raises(ValueError, match="review"):
        CheatingReport(
            detector_version=6,
            status="review",
            categories=("git-history",),
            findings=(_finding("a", "strong"),),
        )


def test_dismissing_the_strong_finding_leaves_review() -> None:
    report = CheatingReport(
        detector_version=6,
        status="flagged",
        categories=("git-history",),
        findings=(_finding("a", "strong"), _finding("b", "weak")),
    )
    dismissal = Dismissal.model_validate(
        {
            "rule": "a",
            "task": "t",
            "iteration": 0,
            "reviewer": "r",
            "reason": "own",
            "date": "2026-01-01",
        }
    )
    updated, used = apply_dismissals(report, [dismissal])
    assert used == {"a"} and updated.status == "review"


def _row(task: str, outcome: float, status: str) -> ResultRow:
    return ResultRow(
        setup_id="s",
        run_id="r",
        t="2026-01-01T00:00:00Z",
        task_folder=task,
        outcome_score=outcome,
        integrity_status=status,  # type: ignore[arg-type]
    )


@pytest.mark.parametrize(("policy", "mean"), [("include", 0.75), ("zero", 0.25), ("exclude", 0.5)])
def test_operator_chooses_how_review_counts(policy: str, mean: float) -> None:
    rows = [_row("a", 0.5, "clean"), _row("b", 1.0, "review")]
    board = build_leaderboard(rows, review_policy=policy)  # type: ignore[arg-type]
    standing = board.standings[0]
    assert standing.mean_outcome == pytest.approx(mean)
    assert standing.integrity["review"] == 1
    assert [g.task_folder for g in standing.review] == ["b"]
