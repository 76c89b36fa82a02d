"""The integrity hooks while ``inspect eval`` runs: each finished sample gets a verdict
at ``on_sample_end``; a scan that fails is logged and marked not checked, and never
stops the eval."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from inspect_ai._util.registry import registry_find, registry_info

import benchguard.integrations.inspect  # noqa: F401  (registers the hooks)
from benchguard.integrations.inspect import _hooks
from benchguard.integrations.inspect._hooks import IntegrityHooks
from integrations.inspect_logs import write_log


def _instance() -> IntegrityHooks:
    [hook] = [
        o
        for o in registry_find(lambda i: i.type == "hooks")
        if registry_info(o).name.endswith("integrity") and isinstance(o, IntegrityHooks)
    ]
    return hook


@pytest.mark.slow
def test_every_finished_sample_gets_a_verdict(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    verdicts = tmp_path / "verdicts.jsonl"
    monkeypatch.setenv(_hooks.VERDICTS_ENV, str(verdicts))
    hook = _instance()
    hook.verdicts.clear()
    (tmp_path / "work").mkdir()
    write_log(tmp_path / "logs", tmp_path / "work")
    lines = [json.loads(line) for line in verdicts.read_text().splitlines()]
    by_sample = {line["sample_id"]: line for line in lines}
    assert by_sample["honest"]["status"] == "clean"
    assert by_sample["cheat"]["status"] == "flagged"
    assert "prior-logs/path" in by_sample["cheat"]["rules"]
    assert by_sample["silent"]["status"] == "no_data"
    assert sorted(v.status for v in hook.verdicts.values()) == ["clean", "flagged", "no_data"]


@pytest.mark.slow
def test_a_failing_scan_marks_the_sample_not_checked_and_the_eval_goes_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("detector exploded")

    monkeypatch.setattr(_hooks, "scan_run", broken)
    hook = _instance()
    hook.verdicts.clear()
    (tmp_path / "work").mkdir()
    write_log(tmp_path / "logs", tmp_path / "work")  # asserts the eval succeeded
    statuses = {v.status for v in hook.verdicts.values()}
    assert statuses == {"not_checked"}
    assert all("detector exploded" in (v.reason or "") for v in hook.verdicts.values())
    assert "was not checked" in caplog.text


def test_the_hook_can_be_turned_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_hooks.ENABLE_ENV, "0")
    assert not IntegrityHooks().enabled()
    monkeypatch.delenv(_hooks.ENABLE_ENV)
    assert IntegrityHooks().enabled()
