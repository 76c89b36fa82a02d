"""The shipped table of relaxed forms (``detection/_relaxed_forms.json``) says what
deriving each form says, and a table written by other code is never used."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from benchguard.detection import _prefilter, _shipped_relaxed


@pytest.fixture(autouse=True)
def _fresh_tables() -> Iterator[None]:
    _shipped_relaxed.shipped_forms.cache_clear()
    _prefilter.relaxed_form.cache_clear()
    _prefilter.build_prefilter.cache_clear()
    yield
    _shipped_relaxed.shipped_forms.cache_clear()
    _prefilter.relaxed_form.cache_clear()
    _prefilter.build_prefilter.cache_clear()


def test_every_shipped_form_is_the_derived_one() -> None:
    document = json.loads(_shipped_relaxed.TABLE.read_text(encoding="utf-8"))
    if document["stamp"] != _shipped_relaxed.stamp():
        # The relaxer changed since the table was written: it must be ignored (then
        # only speed is lost; regenerate it with _shipped_relaxed.write()).
        assert _shipped_relaxed.shipped_forms() == {}
        return
    forms = _shipped_relaxed.shipped_forms()
    assert forms == document["forms"] and forms
    for pattern, form in forms.items():
        assert _prefilter.derive(pattern) == form, pattern


def _table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, stamp: object) -> None:
    table = tmp_path / "forms.json"
    table.write_text(json.dumps({"stamp": stamp, "forms": {"secret": "(?:nothing)"}}))
    monkeypatch.setattr(_shipped_relaxed, "TABLE", table)


def test_a_table_from_another_relaxer_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Fails with the stamp check removed: the table's wrong form would be the
    prefilter's, and ``secret`` would never be a candidate of a text holding it."""
    stale = {**_shipped_relaxed.stamp(), "relax_sha256": "0" * 64}
    _table(tmp_path, monkeypatch, stale)
    assert _shipped_relaxed.shipped_forms() == {}
    assert _prefilter.relaxed_form("secret") == _prefilter.derive("secret")
    assert _prefilter.build_prefilter(("secret",)).candidates("a secret here") == {0}


def test_a_current_table_is_used(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _table(tmp_path, monkeypatch, _shipped_relaxed.stamp())
    assert _prefilter.relaxed_form("secret") == "(?:nothing)"


@pytest.mark.parametrize("text", ["", "[]", '{"stamp": {}, "forms": []}', "{not json"])
def test_a_malformed_table_is_not_used(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    table = tmp_path / "forms.json"
    table.write_text(text)
    monkeypatch.setattr(_shipped_relaxed, "TABLE", table)
    assert _shipped_relaxed.shipped_forms() == {}
