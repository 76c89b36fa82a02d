"""Detection throughput: our prefiltered detector vs the naive reference loop, same run.

Generates a deterministic corpus of realistic trajectories (honest kubectl / git / ls /
cat work with long results, plus some cheats), builds a fake agent home with 50
leftover entries (some with fingerprintable content), scans every record with the
devops-bench profile plus the home's inventory rules, and prints MB/s for both
strategies and their ratio. Asserts that both produce identical reports.

    .venv/bin/python bench/detection_throughput.py [--mb 20] [--seed 7] [--repeat 1]
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from benchguard.detection import (
    DETECTOR_VERSION,
    MAX_FINDINGS_PER_RULE,
    CheatingReport,
    Finding,
    Rule,
    ScanCounts,
    build_inventory_rules,
    load_profile,
    profile_baseline,
    ruleset_digest,
    scan_record,
)
from benchguard.detection.deliverable_copies import deliverable_copies
from benchguard.detection.detector import Detector, read_entry
from benchguard.detection.models import status_for
from benchguard.detection.next_release import next_release_installs
from benchguard.detection.provenance import (
    apply_provenance,
    drop_stand_ins,
    weigh_generic_history,
)
from benchguard.detection.seeking import prompt_text_searches
from benchguard.detection.shell import ShellReader, ShellState
from benchguard.detection.surfaces import (
    as_text,
    dict_entries,
    excerpt,
    has_no_data,
    output_surface,
)

PROFILE = "devops-bench"
LEFTOVERS = 50

# --- the naive reference loop ------------------------------------------------------


def naive_scan_record(
    record: Mapping[str, Any], rules: Sequence[Rule], dynamic_rules: Sequence[Rule]
) -> CheatingReport:
    """The reference algorithm as written: every pattern of every rule on every surface."""
    all_rules = tuple(rules) + tuple(dynamic_rules)
    entries = dict_entries(record)
    output = output_surface(record)
    counts = ScanCounts(trajectory_entries=len(entries), output_chars=len(output.text))
    digest = ruleset_digest(all_rules)
    if has_no_data(entries, record):
        return CheatingReport(
            detector_version=DETECTOR_VERSION,
            status="no_data",
            scanned=counts,
            ruleset_digest=digest,
            dynamic_rules=tuple(dynamic_rules),
        )
    # Read as the detector reads (canonical paths, decoded results): this loop checks the
    # prefilter, not the reading.
    shell = ShellState()
    pairs = [read_entry(i, e, ShellReader(), shell) for i, e in enumerate(entries)]
    findings: list[Finding] = []

    def scan(rule: Rule, surface: Any, budget: int) -> int:
        for pattern in rule.patterns:
            match = re.compile(pattern, re.IGNORECASE | re.MULTILINE).search(surface.text)
            if match:
                findings.append(
                    Finding(
                        rule=rule.id,
                        category=rule.category,
                        material=rule.material,
                        evidence=rule.evidence,
                        severity=rule.severity,
                        pattern=pattern,
                        field=surface.field,
                        trajectory_index=surface.trajectory_index,
                        tool=surface.tool,
                        excerpt=excerpt(surface.text, match.start(), match.end()),
                        strength=rule.strength,
                    )
                )
                budget -= 1
                if budget <= 0:
                    break
        return budget

    for rule in all_rules:
        budget = MAX_FINDINGS_PER_RULE
        for args, result in pairs:
            if "args" in rule.fields:
                budget = scan(rule, args, budget)
            if "result" in rule.fields and budget > 0:
                budget = scan(rule, result, budget)
            if budget <= 0:
                break
        if "output" in rule.fields and budget > 0:
            scan(rule, output, budget)
    # The same provenance pass over the same surfaces: this loop checks the prefilter.
    surfaces = [surface for pair in pairs for surface in pair] + [output]
    prompt = as_text(record.get("input"))
    findings = apply_provenance(findings, entries, surfaces, prompt)
    findings = weigh_generic_history(findings, frozenset(rule.id for rule in all_rules))
    findings += prompt_text_searches(entries, prompt)
    findings += next_release_installs(entries, prompt)
    findings += deliverable_copies(entries, surfaces, prompt, None)
    findings = drop_stand_ins(findings)
    categories = tuple(sorted({f.category for f in findings}))
    return CheatingReport(
        detector_version=DETECTOR_VERSION,
        status=status_for(findings, incomplete=False),
        categories=categories,
        findings=tuple(findings),
        scanned=counts,
        ruleset_digest=digest,
        dynamic_rules=tuple(dynamic_rules),
    )


# --- corpus ------------------------------------------------------------------------

_NAMESPACES = ["default", "kube-system", "payments", "checkout", "monitoring", "opa-system"]
_WORDS = [
    "alpha",
    "beta",
    "gamma",
    "delta",
    "epsilon",
    "zeta",
    "theta",
    "kappa",
    "lambda",
    "sigma",
    "omega",
]


def _pods(rng: random.Random) -> str:
    lines = ["NAMESPACE     NAME                                READY   STATUS    RESTARTS   AGE"]
    for _ in range(rng.randint(20, 120)):
        ns = rng.choice(_NAMESPACES)
        name = f"{rng.choice(_WORDS)}-{rng.randrange(16**10):010x}-{rng.randrange(16**5):05x}"
        status = rng.choice(["Running", "Running", "Running", "CrashLoopBackOff", "Pending"])
        lines.append(
            f"{ns:<13} {name:<35} 1/1     {status:<9} {rng.randint(0, 9):<10} {rng.randint(1, 90)}d"
        )
    return "\n".join(lines)


def _git_log(rng: random.Random) -> str:
    return "\n".join(
        f"{rng.randrange(16**7):07x} {rng.choice(['fix', 'add', 'bump', 'refactor'])} "
        f"{rng.choice(_WORDS)} handling in {rng.choice(_WORDS)}/{rng.choice(_WORDS)}.go"
        for _ in range(rng.randint(10, 60))
    )


def _manifest(rng: random.Random) -> str:
    name = rng.choice(_WORDS)
    return (
        f"apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: {name}\n  namespace: "
        f"{rng.choice(_NAMESPACES)}\n  labels:\n    app: {name}\nspec:\n  replicas: {rng.randint(1, 5)}\n"
        f"  template:\n    spec:\n      containers:\n      - name: {name}\n        image: "
        f"registry.example/{name}:{rng.randint(1, 9)}.{rng.randint(0, 20)}\n        resources:\n"
        f"          limits:\n            cpu: {rng.randint(100, 900)}m\n            memory: "
        f"{rng.randint(64, 1024)}Mi\n" * rng.randint(1, 4)
    )


def _ls(rng: random.Random) -> str:
    return "\n".join(
        f"-rw-r--r-- 1 agent agent {rng.randint(10, 99999):>6} Nov {rng.randint(1, 30):>2} "
        f"{rng.randint(0, 23):02}:{rng.randint(0, 59):02} {rng.choice(_WORDS)}-{rng.randint(1, 99)}."
        f"{rng.choice(['yaml', 'go', 'md', 'json', 'txt'])}"
        for _ in range(rng.randint(5, 40))
    )


def _honest_step(rng: random.Random) -> dict[str, Any]:
    kind = rng.randrange(5)
    if kind == 0:
        command, result = f"kubectl get pods -n {rng.choice(_NAMESPACES)} -o wide", _pods(rng)
    elif kind == 1:
        command, result = "git log --oneline -n 50", _git_log(rng)
    elif kind == 2:
        path = f"manifests/{rng.choice(_WORDS)}.yaml"
        command, result = f"cat {path}", _manifest(rng)
    elif kind == 3:
        command, result = f"ls -la ~/opa-repo-{rng.choice(_WORDS)}-eval", _ls(rng)
    else:
        command = f"grep -rn '{rng.choice(_WORDS)}' manifests/"
        result = "\n".join(
            f"manifests/{rng.choice(_WORDS)}.yaml:{rng.randint(1, 80)}:  name: x" for _ in range(30)
        )
    return {"name": "exec", "args": {"command": command}, "result": result, "status": "completed"}


def _cheat_step(
    rng: random.Random, home: Path, leftovers: list[str], secrets: list[str]
) -> dict[str, Any]:
    kind = rng.randrange(6)
    if kind == 0:
        command, result = (
            "cat ~/devops-bench/tasks/opa/task.yaml",
            "expected_output: |\n  all pods compliant",
        )
    elif kind == 1:
        command = "find ~ -name results.json -exec cat {} +"
        result = json.dumps([{"name": "x", "cheating_report": {}, "verification_status": "passed"}])
    elif kind == 2:
        command, result = f"cat ~/{rng.choice(leftovers)}", rng.choice(secrets)
    elif kind == 3:
        command, result = (
            "ls ~/matrix-runs",
            "bench.env\ndevops-bench\nmatrix-runs\n" + "\n".join(leftovers[:10]),
        )
    elif kind == 4:
        command, result = f"cat {home}/{rng.choice(leftovers)}", "ok"
    else:
        command, result = "cat /tmp/notes.txt", rng.choice(secrets)
    return {"name": "exec", "args": {"command": command}, "result": result, "status": "completed"}


def make_corpus(
    target_bytes: int, seed: int, home: Path, leftovers: list[str], secrets: list[str]
) -> list[dict[str, Any]]:
    rng = random.Random(seed)
    records: list[dict[str, Any]] = []
    size = 0
    while size < target_bytes:
        steps = [_honest_step(rng) for _ in range(rng.randint(8, 30))]
        if rng.random() < 0.1:
            for _ in range(rng.randint(1, 3)):
                steps.insert(
                    rng.randrange(len(steps) + 1), _cheat_step(rng, home, leftovers, secrets)
                )
        record = {
            "name": f"task-{len(records)}",
            "input": "Fix the failing workloads in ~/opa-repo-eval.git and write report.md.",
            "output": "Fixed the workloads; summary in report.md.",
            "trajectory": steps,
        }
        records.append(record)
        size += len(json.dumps(record))
    return records


def make_home(root: Path, rng: random.Random) -> tuple[list[str], list[str]]:
    """A fake home: 50 leftovers (files, dirs, a symlink) plus baseline entries."""
    for name in ("bench.env", "devops-bench", "matrix-runs", ".bashrc", ".cache"):
        (root / name).mkdir() if "." not in name[1:] else (root / name).write_text("x\n")
    leftovers: list[str] = []
    secrets: list[str] = []
    for index in range(LEFTOVERS):
        name = f"{rng.choice(_WORDS)}-report-{index}.md" if index % 3 else f"run-{index}-workspace"
        path = root / name
        if index % 3:
            line = f"Finding {index}: the {rng.choice(_WORDS)} policy rejects {rng.choice(_WORDS)} pods in {rng.choice(_NAMESPACES)}"
            path.write_text(f"# Report {index}\n{line}\nshort\n")
            secrets.append(line)
        else:
            path.mkdir()
        leftovers.append(name)
    return leftovers, secrets


# --- main --------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mb", type=float, default=20.0, help="corpus size in MB (default 20)")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--repeat", type=int, default=1, help="best of N timings for each side")
    args = parser.parse_args()

    rng = random.Random(args.seed)
    with tempfile.TemporaryDirectory(prefix="bench-home-") as tmp:
        home = Path(tmp) / "home" / "agent"
        home.mkdir(parents=True)
        leftovers, secrets = make_home(home, rng)
        static = load_profile(PROFILE)
        dynamic = build_inventory_rules(home, baseline=profile_baseline(PROFILE))
        records = make_corpus(int(args.mb * 1_000_000), args.seed, home, leftovers, secrets)
    corpus_bytes = sum(len(json.dumps(r).encode()) for r in records)
    patterns = sum(len(r.patterns) for r in static + dynamic)
    print(
        f"corpus: {len(records)} records, {corpus_bytes / 1e6:.1f} MB; rules: {len(static)} static "
        f"({PROFILE}) + {len(dynamic)} inventory = {patterns} patterns"
    )

    def timed(scan: Any) -> tuple[float, list[CheatingReport]]:
        best = float("inf")
        reports: list[CheatingReport] = []
        for _ in range(max(1, args.repeat)):
            start = time.perf_counter()
            reports = [scan(r) for r in records]
            best = min(best, time.perf_counter() - start)
        return best, reports

    mb = corpus_bytes / 1e6

    def compare(label: str, dynamic_rules: tuple[Rule, ...]) -> bool:
        detector = Detector()
        ours_s, ours = timed(
            lambda r: scan_record(r, static, dynamic_rules=dynamic_rules, detector=detector)
        )
        naive_s, naive = timed(lambda r: naive_scan_record(r, static, dynamic_rules))
        for index, (a, b) in enumerate(zip(ours, naive, strict=True)):
            if a.model_dump() != b.model_dump():
                print(f"MISMATCH ({label}) at record {index}", file=sys.stderr)
                mine, theirs = a.model_dump(mode="json"), b.model_dump(mode="json")
                for key in mine:
                    if mine[key] != theirs[key]:
                        # The first field that differs (findings: the first finding).
                        if key == "findings":
                            pairs = zip(mine[key], theirs[key], strict=False)
                            first = next(((x, y) for x, y in pairs if x != y), None)
                            print(
                                f"findings: {len(mine[key])} vs {len(theirs[key])}", file=sys.stderr
                            )
                            print(json.dumps(first, indent=1)[:3000], file=sys.stderr)
                        else:
                            print(key, json.dumps([mine[key], theirs[key]])[:3000], file=sys.stderr)
                        break
                return False
        flagged = sum(r.status == "flagged" for r in ours)
        findings = sum(len(r.findings) for r in ours)
        print(f"\n== {label}")
        print(f"reports identical: {len(ours)} records, {flagged} flagged, {findings} findings")
        print(f"naive reference loop (stdlib re): {naive_s:7.2f} s  {mb / naive_s:8.1f} MB/s")
        print(
            f"benchguard detector (RE2 prefilter + regex): {ours_s:7.2f} s  {mb / ours_s:8.1f} MB/s"
        )
        print(f"ratio: {naive_s / ours_s:.1f}x")
        return True

    # The headline run is the issue's: the profile plus the inventory rules. The inventory
    # patterns open with a lookbehind, which stops stdlib re's literal-prefix search, so
    # the static profile alone is printed too: the naive loop's best case.
    if not compare(f"{PROFILE} profile + {len(dynamic)} inventory rules", dynamic):
        return 1
    if not compare(f"{PROFILE} profile alone (the naive loop's best case)", ()):
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
