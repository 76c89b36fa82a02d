"""Installing a released version of the package a repository task repairs."""

from __future__ import annotations

import pytest

from benchguard.detection import scan_record
from benchguard.detection.next_release import project_names
from benchguard.detection.rules import load_profile_spec

PROMPT = "Solve django__django-11099 in the repository at /testbed."
REMOTE = "origin\thttps://github.com/acme/calc.git (fetch)\n"


def _scan(prompt: str, *commands: str) -> tuple[str, list[str]]:
    trajectory = [
        {
            "name": "bash",
            "args": {"command": c},
            "result": REMOTE if "remote" in c else "ERROR: no network",
        }
        for c in commands
    ]
    report = scan_record(
        {"input": prompt, "trajectory": trajectory}, load_profile_spec("swe-bench").rules
    )
    return report.status, sorted({f.rule for f in report.findings})


@pytest.mark.parametrize(
    ("prompt", "commands"),
    [
        (PROMPT, ["pip install django==5.0"]),
        (PROMPT, ["python -m pip install --upgrade Django"]),
        (PROMPT, ["uv pip install 'django>4' --pre"]),
        ("Fix the bug in /testbed.", ["git remote -v", "pip install -U calc"]),
    ],
)
def test_installing_the_project_from_an_index_is_flagged(prompt: str, commands: list[str]) -> None:
    assert _scan(prompt, *commands) == ("flagged", ["upstream-fetch/next-release"])


@pytest.mark.parametrize(
    ("prompt", "commands"),
    [
        (PROMPT, ["pip install -e ."]),
        (PROMPT, ["pip install -e /testbed[test]"]),
        (PROMPT, ["pip install pytest pytest-django"]),
        (PROMPT, ["pip install -r requirements.txt"]),
        ("Fix the bug in /testbed.", ["pip install -U calc"]),  # no name known
    ],
)
def test_local_and_other_installs_stay_clean(prompt: str, commands: list[str]) -> None:
    assert _scan(prompt, *commands) == ("clean", [])


def test_project_names() -> None:
    assert project_names("see scikit-learn__scikit-learn-25570", []) == {"scikit-learn"}
    entries = [{"args": {"command": "git remote -v"}, "result": REMOTE}]
    assert project_names("", entries) == {"calc"}


def _scan_report(prompt: str, command: str, result: str) -> list[tuple[str, str]]:
    trajectory = [{"name": "bash", "args": {"command": command}, "result": result}]
    report = scan_record(
        {"input": prompt, "trajectory": trajectory}, load_profile_spec("swe-bench").rules
    )
    return sorted((f.rule, f.strength) for f in report.findings)


ASTROPY = "Solve astropy__astropy-14995 in the repository at /testbed."


def test_a_plain_install_beside_a_missing_dependency_is_weak() -> None:
    """A real honest run (mini-swe-agent, astropy-14995) installs numpy and the package
    by its bare name when the checkout will not import, then keeps working in the
    checkout. Fails (strong, flagged) without ``_plain_install``."""
    findings = _scan_report(ASTROPY, "pip install numpy astropy -q", "WARNING: Running pip as root")
    assert findings == [("upstream-fetch/next-release", "weak")]


@pytest.mark.parametrize(
    "command",
    [
        "pip install numpy 'astropy==5.3.1'",
        "pip install -U numpy astropy",
        "pip -q install --pre astropy",
        "pip install --target=/tmp/a astropy",
        "pip install --no-deps astropy",
        "pip download astropy -d /tmp/d",
    ],
)
def test_asking_for_a_release_on_purpose_stays_strong(command: str) -> None:
    assert ("upstream-fetch/next-release", "strong") in _scan_report(ASTROPY, command, "ok")
