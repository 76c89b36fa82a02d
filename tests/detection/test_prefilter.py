"""The RE2 prefilter never costs a match: relaxed patterns are supersets, reports equal
those of the plain reference loop."""

from __future__ import annotations

import importlib.util
import random
import re
import sys
import tempfile
from pathlib import Path
from types import ModuleType

import re2
import regex

from benchguard.detection import (
    build_inventory_rules,
    load_profile,
    profile_baseline,
    profile_names,
    scan_record,
)
from benchguard.detection._patterns import exact_pattern
from benchguard.detection._relax import ASCII_CASE_PARTNERS, relax

BENCH = Path(__file__).resolve().parents[2] / "bench" / "detection_throughput.py"

TRICKY_PATTERNS = [
    r"(?<![\w~])(?:~|\$HOME|/home/agent)/report\.md(?![\w-]|\.[\w-])",
    r"\bkelvin\b",
    r"\AStart",
    r"end\Z",
    r"(a)\1b",
    r"[^\s'\"]+\.tgz",
    r"[^a-z]{2}x",
    r"(?-i:CaseOnly)",
    r"(?s:a.b)",
    r"é+t\w",
    r"[\u0130-\u0131]x",
    r"\d{8}_\d{6}",
    r"(?>atomic)z",
    r"(?:x|y)?{3}z".replace("?{3}", "{3}"),
    r"\W\S\D",
]

ALPHABET = [
    *"aAbBiIkKsStTxXyYzZ_-./~$ \n\t'\"0123456789",
    "\u0130",
    "\u0131",
    "\u017f",
    "\u212a",
    "é",
    "É",
    "\u00a0",
    "\u2028",
    "\u0660",
    "漢",
]
WORDS = [
    "report.md",
    "~/",
    "$HOME",
    "/home/agent",
    "kelvin",
    "Start",
    "end",
    "tgz",
    "CaseOnly",
    "caseonly",
    "atomic",
    "bench.env",
    "matrix-runs",
]


def _fuzz(rng: random.Random, n: int) -> list[str]:
    texts = []
    for _ in range(n):
        parts = [
            rng.choice(WORDS) if rng.random() < 0.3 else rng.choice(ALPHABET)
            for _ in range(rng.randint(1, 25))
        ]
        texts.append("".join(parts))
    return texts


def _all_patterns() -> list[str]:
    # Every shipped profile (a profile added later is fuzzed too), each pattern once.
    shipped = (p for name in profile_names() for r in load_profile(name) for p in r.patterns)
    return list(dict.fromkeys(shipped)) + TRICKY_PATTERNS


def test_ascii_case_partner_table_matches_both_engines() -> None:
    """Every non-ASCII character that stdlib re or regex folds onto an ASCII letter is in
    the table (derived by brute force over all code points)."""
    everything = "".join(chr(c) for c in range(0x80, 0x110000) if not 0xD800 <= c < 0xE000)
    found: dict[str, set[str]] = {}
    for engine in (re, regex):
        for char in set(engine.findall("(?i)[a-z]", everything)):
            for letter in "abcdefghijklmnopqrstuvwxyz":
                if engine.fullmatch(letter, char, engine.IGNORECASE):
                    found.setdefault(letter, set()).add(char)
    assert {k: set(v) for k, v in ASCII_CASE_PARTNERS.items()} == found


def test_relaxed_patterns_match_a_superset_of_exact_matches() -> None:
    """For every shipped and tricky pattern, on fuzzed text with case and Unicode
    traps, an exact match implies a relaxed RE2 match, alone and inside joined text."""
    rng = random.Random(1234)
    texts = _fuzz(rng, 3000)
    options = re2.Options()
    options.log_errors = False
    for pattern in _all_patterns():
        relaxed = re2.compile(relax(pattern), options)
        exact = exact_pattern(pattern)
        hits = 0
        for text in texts:
            if exact.search(text):
                hits += 1
                assert relaxed.search(text.encode()), (pattern, text)
                joined = f"noise line\n{text}\nmore noise"
                assert relaxed.search(joined.encode()), (pattern, text)
        assert hits or pattern not in TRICKY_PATTERNS[:3], pattern


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("detection_throughput", BENCH)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["detection_throughput"] = module
    spec.loader.exec_module(module)
    return module


def test_reports_equal_the_naive_reference_loop() -> None:
    """On a generated corpus (honest work, cheats, leftovers, fingerprints) plus records
    full of case and Unicode traps, our reports are identical to the plain loop's."""
    bench = _bench()
    rng = random.Random(3)
    static = load_profile("devops-bench")
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home" / "agent"
        home.mkdir(parents=True)
        leftovers, secrets = bench.make_home(home, rng)
        dynamic = build_inventory_rules(home, baseline=profile_baseline("devops-bench"))
        records = bench.make_corpus(300_000, 5, home, leftovers, secrets)
    for text in _fuzz(random.Random(9), 200):
        records.append(
            {
                "output": text,
                "trajectory": [
                    {"name": "exec", "args": {"command": f"cat {text}"}, "result": text.upper()},
                    {
                        "name": "exec",
                        "args": {"command": "ls ~"},
                        "result": "~/BENCH.ENV\n$HOME/Matrix-Runs\n" + text,
                    },
                ],
            }
        )
    flagged = 0
    for record in records:
        ours = scan_record(record, static, dynamic_rules=dynamic)
        naive = bench.naive_scan_record(record, static, dynamic)
        assert ours.model_dump() == naive.model_dump()
        flagged += ours.status == "flagged"
    assert flagged > 10
