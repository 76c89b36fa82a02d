"""The input-fixture exemption reads the prompt once, with the meaning of its old
per-rule regex."""

from __future__ import annotations

import re

from hypothesis import given, settings
from hypothesis import strategies as st

from benchguard.detection.inventory import (
    CATEGORY,
    _home_path_starts,
    _names_as_input,
)
from benchguard.detection.models import Rule

_PIECES = ["~", "$HOME", "${HOME}", "/", "fixtures", "data", "a b", "x.y", "-", ".", "é", " ", "\n"]


def _per_rule_regex(prompt: str, name: str) -> bool:
    """The former check: one regex built and searched per rule."""
    escaped = re.escape(name)
    return re.search(rf"(?:~|\$HOME|\$\{{HOME\}})/{escaped}/[\w.-]", prompt) is not None


def _content_rule(name: str) -> Rule:
    return Rule(
        id=f"{CATEGORY}/{name}/content",
        category=CATEGORY,
        material="a prior run's leftover",
        patterns=("x" * 24,),
    )


@settings(max_examples=400, deadline=None, derandomize=True)
@given(
    prompt=st.lists(st.sampled_from(_PIECES), max_size=12).map("".join),
    name=st.sampled_from(["fixtures", "data", "a b", "x.y", "fix", "é"]),
)
def test_one_pass_over_the_prompt_agrees_with_the_per_rule_regex(prompt: str, name: str) -> None:
    """Guards against the speed-up (which removed a regex compile per rule per task,
    the harness's largest per-task cost with a 1,000-entry home) changing which
    leftover folders a prompt hands over as input."""
    rule = _content_rule(name)
    assert _names_as_input(prompt, _home_path_starts(prompt), rule) == _per_rule_regex(prompt, name)


def test_a_named_fixture_folder_is_input_and_a_named_deliverable_is_not() -> None:
    prompt = "Read ~/fixtures/orders.csv and write ${HOME}/report.md"
    starts = _home_path_starts(prompt)
    assert _names_as_input(prompt, starts, _content_rule("fixtures"))
    assert not _names_as_input(prompt, starts, _content_rule("report.md"))
    assert not _names_as_input("fixtures/orders.csv", (), _content_rule("fixtures"))
