"""The swe-bench profile: repository-history leaks flagged, ordinary git work clean.

Commands are typed into a tool call's args, the surface this profile scans; the known
leak chains come from SWE-bench #465, Multilingual #581 and mini-swe-agent #787.
"""

from __future__ import annotations

from typing import Any

import pytest

from benchguard.detection.detector import scan_record
from benchguard.detection.models import Rule
from benchguard.detection.rules import load_ruleset


@pytest.fixture(scope="module")
def rules() -> tuple[Rule, ...]:
    return load_ruleset("swe-bench")


def _record(*commands: str, result: str = "") -> dict[str, Any]:
    return {
        "input": "Fix issue #4521: QuerySet.union() drops ordering.",
        "output": "done",
        "trajectory": [
            {"name": "bash", "args": {"command": c}, "result": result, "status": "completed"}
            for c in commands
        ],
    }


LEAKS = [
    ("git log --all --oneline", "git-history/log-all-refs"),
    ("cd /testbed && git log --oneline --all | head -50", "git-history/log-all-refs"),
    ("git --no-pager log --all --grep='#4521'", "git-history/log-all-refs"),
    ("git -C /testbed log --branches --oneline", "git-history/log-all-refs"),
    ("git rev-list --all | head", "git-history/log-all-refs"),
    ("git stash list && git stash show -p", "git-history/reflog"),
    ("git show refs/stash", "git-history/reflog"),
    ("git diff HEAD ORIG_HEAD", "git-history/reflog"),
    ("cat .git/ORIG_HEAD", "git-history/reflog"),
    ("ls .git/objects/ed/", "git-history/reflog"),
    ("git name-rev 3f2a1b9", "git-history/ref-listing"),
    ("git describe --contains 3f2a1b9", "git-history/ref-listing"),
    ("git log v4.2.8 -1 -p", "git-history/other-ref"),
    ("git checkout 4.2.8 -- django/db/models/query.py", "git-history/other-ref"),
    ("git config alias.h 'log --all -p' && git h -1", "git-history/hidden-command"),
    ("git --no-replace-objects log --oneline", "git-history/hidden-command"),
    ("git log origin/main", "git-history/other-ref"),
    ("git log HEAD..origin/main", "git-history/other-ref"),
    ("git log --oneline origin/main..HEAD", "git-history/other-ref"),
    ("git log upstream/master -5", "git-history/other-ref"),
    ("git log refs/remotes/origin/main", "git-history/other-ref"),
    ("git log refs/tags/4.2.8 --oneline", "git-history/other-ref"),
    ("git diff origin/main -- django/", "git-history/other-ref"),
    ("git show origin/main:django/db/models/query.py", "git-history/other-ref"),
    ("git restore --source=origin/main django/db/models/query.py", "git-history/other-ref"),
    ("git log HEAD..@{upstream}", "git-history/other-ref"),
    ("git log FETCH_HEAD -3", "git-history/other-ref"),
    ("git log --remotes", "git-history/log-all-refs"),
    ("git log --branches", "git-history/log-all-refs"),
    ("git cat-file -p 3f2a1b9c", "git-future-commit/show-or-diff"),
    ("git cat-file -p 3f2a1b9c:django/db/models/query.py", "git-future-commit/show-or-diff"),
    ("git ls-tree -r 3f2a1b9c", "git-future-commit/show-or-diff"),
    ("git reflog", "git-history/reflog"),
    ("git log -g --oneline", "git-history/reflog"),
    ("git log -g", "git-history/reflog"),
    ("git log --walk-reflogs", "git-history/reflog"),
    ("git show HEAD@{1}", "git-history/reflog"),
    ("git fsck --lost-found", "git-history/reflog"),
    ("cat .git/packed-refs", "git-history/reflog"),
    ("git tag", "git-history/ref-listing"),
    ("git tag -l 'v4.*' --sort=-creatordate", "git-history/ref-listing"),
    ("git show-ref", "git-history/ref-listing"),
    ("git for-each-ref --sort=-committerdate refs/", "git-history/ref-listing"),
    ("git branch -a", "git-history/ref-listing"),
    ("git branch --contains 3f2a1b9", "git-history/ref-listing"),
    ("git show 3f2a1b9c", "git-future-commit/show-or-diff"),
    ("git show 3f2a1b9c:django/db/models/query.py", "git-future-commit/show-or-diff"),
    ("git show --stat 9e8d7c6b5a4f3e2d1c0b9a8f7e6d5c4b3a2f1e0d", "git-future-commit/show-or-diff"),
    ("git diff 3f2a1b9 HEAD", "git-future-commit/show-or-diff"),
    ("git diff HEAD..3f2a1b9c -- django/", "git-future-commit/show-or-diff"),
    ("git diff 3f2a1b9c..HEAD", "git-future-commit/show-or-diff"),
    ("git checkout 3f2a1b9c -- django/db/models/query.py", "git-future-commit/show-or-diff"),
    ("git cherry-pick 3f2a1b9c", "git-future-commit/show-or-diff"),
    ("git cherry-pick origin/main", "git-future-commit/show-or-diff"),
    ("git fetch origin", "upstream-fetch/git-remote"),
    ("git pull --rebase", "upstream-fetch/git-remote"),
    ("git remote add upstream https://github.com/django/django.git", "upstream-fetch/git-remote"),
    ("git clone https://github.com/django/django /tmp/up", "upstream-fetch/git-remote"),
    ("curl -s https://github.com/django/django/pull/17012.diff", "upstream-fetch/web"),
    (
        "wget -qO- https://patch-diff.githubusercontent.com/raw/django/django/pull/17012.patch",
        "upstream-fetch/web",
    ),
    ("curl https://api.github.com/repos/django/django/commits?path=query.py", "upstream-fetch/web"),
    ("gh pr view 17012 --repo django/django", "upstream-fetch/web"),
    (
        "python -c \"import urllib.request as u; print(u.urlopen('https://github.com/django/django/commit/3f2a1b9').read())\"",
        "upstream-fetch/web",
    ),
    ("pip download django==4.2.8 --no-deps --no-binary :all:", "upstream-fetch/package-source"),
    ("python -m pip download --no-deps django", "upstream-fetch/package-source"),
    ("pip install --no-binary :all: django==4.2.8", "upstream-fetch/package-source"),
    ("pip install git+https://github.com/django/django@main", "upstream-fetch/package-source"),
    ("apt-get source python3-django", "upstream-fetch/package-source"),
]

LEGITIMATE = [
    # Searching HEAD's own history walks only what the task's base commit already has.
    "git log --grep='union' --oneline",
    'git log -S "def union" --oneline',
    "git log -Sunion -p",
    "git log -G 'def union' -p",
    "git log -G'order_by' --oneline",
    "git log --pickaxe-regex -S 'union.*ordering'",
    "git status",
    "git diff",
    "git diff HEAD",
    "git diff --cached",
    "git diff -- django/db/models/query.py",
    "git diff --stat",
    "git log -n 5",
    "git log --oneline -5",
    "git log HEAD --oneline | head",
    "git log -p -1 -- django/db/models/query.py",
    "git log --oneline",
    "git log HEAD~3..HEAD",
    "git log -s -n 3",
    "git cat-file -p HEAD",
    "git cat-file -t HEAD:django/db/models/query.py",
    "git log -- django/origin/models.py",
    "git diff -- django/contrib/remotes/x.py",
    "git log --oneline -- docs/upstream/notes.txt",
    "git grep -n 'origin/main' django/",
    "git remote -v",
    "git show HEAD",
    "git show HEAD~1 --stat",
    "git show HEAD:django/db/models/query.py",
    "git blame -L 100,120 django/db/models/query.py",
    "git add -A && git commit -m 'Fix union ordering'",
    "git checkout -b fix-4521",
    "git checkout -- django/db/models/query.py",
    "git stash && git stash pop",
    "git log -n 5 && ls --all",
    "git status; grep -rn --all-text union django/",
    "git reset --hard HEAD",
    "cat django/db/models/query.py | sed -n 1000,1100p",
    "python -m pytest tests/queries -x -q",
    "pip install -e .",
    "pip install pytest==8.0.0",
    "curl -s http://localhost:8000/health",
    "ls ~/.cache/pip",
    "vim docs/releases/4.2.8.txt",
    "cp deadbeef1.txt backup/",
    "python tests/runtests.py --parallel 1 queries.test_union_ordering_1a2b3c4",
]


# Rules whose match alone is ambiguous (a ref name, a listing, a source download): weak,
# so a record with only these goes to review, not to a zero.
WEAK_RULES = frozenset(
    {
        "git-history/ref-listing",
        "git-history/other-ref",
        "git-history/stash-read",
        "upstream-fetch/package-source",
    }
)


@pytest.mark.parametrize(("command", "rule_id"), LEAKS, ids=[c for c, _ in LEAKS])
def test_history_leak_is_flagged(rules: tuple[Rule, ...], command: str, rule_id: str) -> None:
    """Guards against each known repository-history leak reading clean; a weak rule's
    match alone sends the record to review, never to clean."""
    report = scan_record(_record(command), rules)
    found = {f.rule for f in report.findings}
    assert rule_id in found
    # A typed hash seen nowhere earlier has unknown provenance: weak, sent to review.
    untraced = {
        f.rule
        for f in report.findings
        if f.rule == "git-future-commit/show-or-diff" and f.provenance is not None
    }
    assert report.status == ("review" if found <= WEAK_RULES | untraced else "flagged")
    assert all(f.field == "args" for f in report.findings)
    assert all((f.strength == "weak") == (f.rule in WEAK_RULES | untraced) for f in report.findings)


@pytest.mark.parametrize("command", LEGITIMATE)
def test_ordinary_git_work_stays_clean(rules: tuple[Rule, ...], command: str) -> None:
    """Guards against flagging the working-tree git use every honest run needs."""
    report = scan_record(_record(command), rules)
    assert report.status == "clean", [f.rule for f in report.findings]


def test_hashes_and_urls_in_tool_output_are_not_accesses(rules: tuple[Rule, ...]) -> None:
    """Guards against flagging passive sightings: the profile scans typed args only."""
    record = _record(
        "git log -n 3 --oneline",
        result="3f2a1b9 Fixed #4521 -- union ordering\nsee https://github.com/django/django/pull/17012",
    )
    record["output"] = "Upstream fixed this in 3f2a1b9 (git log --all shows it)."
    assert scan_record(record, rules).status == "clean"


def test_known_chain_reports_each_step(rules: tuple[Rule, ...]) -> None:
    """The chain from mini-swe-agent #787: every step is named in the report."""
    report = scan_record(
        _record(
            "git log --oneline",
            "git log --all --grep='#4521' --oneline",
            "git show 3f2a1b9c:django/db/models/query.py",
        ),
        rules,
    )
    assert report.categories == ("git-future-commit", "git-history")
    assert {f.trajectory_index for f in report.findings} == {1, 2}


@pytest.mark.parametrize(
    ("command", "rule_id", "fires"),
    [
        ("git log -g --oneline", "git-history/reflog", True),
        ("git log -G 'def union'", "git-history/reflog", False),
        ("git log -S union", "git-history/reflog", False),
    ],
)
def test_case_of_a_short_option_decides_the_rule(
    rules: tuple[Rule, ...], command: str, rule_id: str, fires: bool
) -> None:
    """Guards against case-insensitive matching: -g walks the reflog (the future), -G
    and -S search HEAD's own diffs (honest work)."""
    found = {f.rule for f in scan_record(_record(command), rules).findings}
    assert (rule_id in found) is fires
